"""One ``kto drift`` over a fleet whose clusters come two ways: some read live (``--clusters``), the others from
their ``kto snapshot`` files (``--snapshots``). A cluster named both ways is refused before anything is read,
naming the cluster, the field and the file; so is a snapshot directory the live reads would be written into."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.drift.command import main as drift
from topic_operator.model import ClusterSpec, TopicSpec
from topic_operator.reconcile import Reconciler
from topic_operator.snapshot_rows import rows_from_cluster
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore

pytestmark = pytest.mark.timeout(180)


def cluster(name: str, connect: str) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"name": name},
            "spec": {"zookeeper": {"connect": connect}}}  # fmt: skip


def topic(cluster_name: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": f"{cluster_name}-{name}"},
            "spec": {"cluster": cluster_name, "topicName": name, "partitions": 2, "replicas": 2}}  # fmt: skip


@pytest.fixture
def fleet(kafka_zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path) -> dict[str, Path]:
    """``blue`` reached live through the test's ZooKeeper; ``green``, the same topics, as a snapshot file."""
    Reconciler(ZooKeeperStore(kafka_zk), ClusterSpec("blue", zk_chroot.connect_string)).apply(
        [TopicSpec("blue", "orders", 2, 2)]
    )
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    rows = rows_from_cluster(
        "green", read_cluster(kafka_zk, partition_states=True), "2026-01-01T00:00:00+00:00"
    )
    (snapshots / "green.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    clusters = tmp_path / "fleet.yaml"
    clusters.write_text(yaml.safe_dump(cluster("blue", zk_chroot.connect_string)))
    desired = tmp_path / "desired.yaml"
    desired.write_text(yaml.safe_dump_all(
        [topic("blue", "orders"), topic("green", "orders"), topic("green", "payments")]
    ))  # fmt: skip
    return {"snapshots": snapshots, "clusters": clusters, "desired": desired, "out": tmp_path / "out"}


def run(fleet: dict[str, Path], *extra: str, snapshots: Path | None = None) -> int:
    return drift([
        "--desired", str(fleet["desired"]), "--clusters", str(fleet["clusters"]),
        "--snapshots", str(snapshots or fleet["snapshots"]), "--out", str(fleet["out"]),
        "--engine", "processes", "--processes", "2", "--connect-timeout", "10", "-q", *extra,
    ])  # fmt: skip


def test_a_fleet_mixes_live_reads_and_snapshots(fleet: dict[str, Path]) -> None:
    assert run(fleet) == 2  # green lacks payments
    summary = json.loads((fleet["out"] / "summary.json").read_text())
    assert {c["name"]: c["observed"] for c in summary["clusters"]} == {"blue": True, "green": True}
    assert {c["name"]: c["read"] for c in summary["clusters"]} == {
        "blue": {"from": "live", "through": "ZooKeeper", "stage": None},
        "green": {"from": "snapshot", "through": "ZooKeeper", "stage": None},
    }
    report = (fleet["out"] / "report.html").read_text()
    assert "Read live through ZooKeeper." in report
    assert "Read snapshot through ZooKeeper." in report
    statuses = {
        name: {
            t["topic"]: t["status"]
            for t in json.loads((fleet["out"] / "plans" / f"{name}.json").read_text())["topics"]
        }
        for name in ("blue", "green")
    }
    assert statuses == {
        "blue": {"orders": "unchanged"},
        "green": {"orders": "unchanged", "payments": "create"},
    }
    # What was read live is saved beside the given files, so the run can be repeated offline on what it saw.
    saved = fleet["out"] / "snapshots"
    assert list(saved.glob("cluster=blue/*"))
    assert (saved / "given" / "green.jsonl").read_bytes() == (fleet["snapshots"] / "green.jsonl").read_bytes()


def test_a_cluster_named_by_both_is_refused_before_anything_is_read(
    fleet: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    (fleet["snapshots"] / "green.jsonl").rename(fleet["snapshots"] / "blue-and-green.jsonl")
    text = (fleet["snapshots"] / "blue-and-green.jsonl").read_text()
    (fleet["snapshots"] / "blue-and-green.jsonl").write_text(text + text.replace('"green"', '"blue"'))
    assert run(fleet) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "cluster blue is named twice" in line
    assert "spec.zookeeper or spec.bootstrapServers" in line
    assert "blue-and-green.jsonl" in line
    assert not fleet["out"].exists()


def test_snapshots_where_the_live_reads_go_are_refused(
    fleet: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    inside = fleet["out"] / "snapshots"
    inside.mkdir(parents=True)
    (inside / "green.jsonl").write_bytes((fleet["snapshots"] / "green.jsonl").read_bytes())
    assert run(fleet, snapshots=inside) == 1
    assert "where --clusters writes the live reads" in capsys.readouterr().err
    assert (inside / "green.jsonl").exists()


def test_neither_source_is_refused_naming_both_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    desired = tmp_path / "desired.yaml"
    desired.write_text(yaml.safe_dump(topic("blue", "orders")))
    assert drift(["--desired", str(desired), "--out", str(tmp_path / "out"), "--engine", "processes"]) == 1
    assert "--snapshots DIR, --clusters PATH, or both" in capsys.readouterr().err
