"""``kto plan --snapshot FILE``: CI plans against a ``kto snapshot`` file, without access to ZooKeeper,
and gets the plan, and the pull-request comment, that the live cluster gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto, write_manifests
from harness.zookeeper import ZkChroot


def test_a_snapshot_plans_as_the_live_cluster_does(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connect = zk_chroot.connect_string
    before = write_manifests(
        tmp_path / "before.yaml", kafka_topic("orders", 3, config="{retention.ms: 1000}")
    )
    assert kto(capsys, "apply", "-f", str(before), "--zookeeper", connect, "--yes")[0] == 0
    snapshot = tmp_path / "test.jsonl"
    assert kto(capsys, "snapshot", "--zookeeper", connect, "--cluster", "test", "-o", str(snapshot))[0] == 0

    after = write_manifests(
        tmp_path / "after.yaml",
        kafka_topic("orders", 6, config="{retention.ms: 2000}"),
        kafka_topic("audit", 2, 2),
    )
    for output in ("markdown", "json", "text"):
        live = kto(capsys, "plan", "-f", str(after), "--zookeeper", connect, "-o", output)
        # the KafkaCluster document's connect string points nowhere: the snapshot is all this plan reads
        offline = kto(capsys, "plan", "-f", str(after), "--snapshot", str(snapshot), "-o", output)
        assert offline == live
        assert live[0] == 2
    comment = kto(capsys, "plan", "-f", str(after), "--snapshot", str(snapshot), "-o", "markdown")[1]
    assert "**test**: 1 to create, 1 to change" in comment
    assert "| config.retention.ms | 1000 | 2000 |" in comment
