"""``kto plan | apply | describe | snapshot`` end to end against a real ZooKeeper, with their exit codes."""

import json
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto, write_manifests
from harness.zookeeper import ZkChroot
from topic_operator.snapshot_rows import rows_to_clusters
from topic_operator.testing.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.snapshot import read_cluster


def topic(name: str, partitions: int, replicas: int = 3, config: str = "{}") -> str:
    return kafka_topic(name, partitions, replicas, config=config)


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    return write_manifests(
        tmp_path / "topics.yaml", topic("orders", 6, 3, "{retention.ms: 1000}"), topic("audit", 2, 2)
    )


def test_plan_exit_codes_and_apply(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, manifests: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connect = zk_chroot.connect_string
    code, out, _ = kto(capsys, "plan", "-f", str(manifests), "--zookeeper", connect)
    assert code == 2
    assert "+ topic orders: create" in out
    assert out.splitlines()[-1].startswith("plan: 2 to create, 0 to change")
    assert not kafka_zk.exists("/brokers/topics/orders")  # plan writes nothing

    code, out, _ = kto(capsys, "apply", "-f", str(manifests), "--zookeeper", connect, "--yes")
    assert code == 0
    assert "orders: applied" in out
    assert read_cluster(kafka_zk).topics["orders"].config == {"retention.ms": "1000"}

    code, out, _ = kto(capsys, "plan", "-f", str(manifests), "--zookeeper", connect, "-o", "json")
    assert code == 0
    assert json.loads(out)["summary"]["unchanged"] == 2


def test_apply_needs_yes_without_a_terminal(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, manifests: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = kto(capsys, "apply", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string)
    assert code == 1
    assert "refusing to apply without --yes" in err
    assert kafka_zk.get_children("/brokers/topics") == []


def test_rejections_and_manifest_errors_exit_1_and_others_still_apply(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connect = zk_chroot.connect_string
    first = tmp_path / "a.yaml"
    write_manifests(first, topic("orders", 6))
    assert kto(capsys, "apply", "-f", str(first), "--zookeeper", connect, "--yes")[0] == 0
    write_manifests(
        first, topic("orders", 3), topic("fresh", 1, 1), topic("broken", 1, 1, "{retention.ms: 7d}")
    )
    code, out, err = kto(capsys, "apply", "-f", str(first), "--zookeeper", connect, "--yes", "-o", "json")
    assert code == 1
    assert "spec.config.retention.ms = '7d'" in err
    results = {r["topic"]: r["outcome"] for r in json.loads(out)["results"]}
    assert results == {"fresh": "applied", "orders": "rejected"}
    assert read_cluster(kafka_zk).topics["orders"].partition_count == 6


def test_describe_and_its_filters(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, manifests: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connect = zk_chroot.connect_string
    kto(capsys, "apply", "-f", str(manifests), "--zookeeper", connect, "--yes")
    code, out, _ = kto(capsys, "describe", "orders", "--zookeeper", connect)
    assert code == 0
    assert out.splitlines()[0].startswith("Topic: orders\tTopicId: ")
    assert "\tPartitionCount: 6\tReplicationFactor: 3\tConfigs: retention.ms=1000" in out.splitlines()[0]
    assert len(out.splitlines()) == 7
    code, out, _ = kto(capsys, "describe", "--zookeeper", connect, "--unavailable-partitions")
    assert len(out.splitlines()) == 8  # no controller has brought any partition online yet
    bring_partitions_online(kafka_zk, read_cluster(kafka_zk))
    code, out, _ = kto(capsys, "describe", "--zookeeper", connect, "--unavailable-partitions")
    assert out == ""
    code, _, err = kto(capsys, "describe", "nope", "--zookeeper", connect)
    assert code == 1
    assert "Topic 'nope' does not exist" in err


def test_snapshot_rows_plan_like_the_cluster(
    kafka_zk: KazooClient,
    zk_chroot: ZkChroot,
    manifests: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    connect = zk_chroot.connect_string
    kto(capsys, "apply", "-f", str(manifests), "--zookeeper", connect, "--yes")
    output = tmp_path / "snap.jsonl"
    code, out, _ = kto(capsys, "snapshot", "--zookeeper", connect, "--cluster", "test", "-o", str(output))
    assert code == 0
    assert "2 topics, 6 brokers of test" in out
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["topic"] for r in rows] == [None, "audit", "orders"]  # the header row first
    state = rows_to_clusters(rows)["test"]
    live = read_cluster(kafka_zk)
    for name, topic in live.topics.items():
        read_back = state.topics[name]
        assert (read_back.partitions, read_back.config, read_back.topic_id) == (
            topic.partitions,
            topic.config,
            topic.topic_id,
        )
        assert (read_back.topic_znode_version, read_back.config_znode_version) == (
            topic.topic_znode_version,
            topic.config_znode_version,
        )
    assert {b.id: b.rack for b in state.brokers.values()} == {b.id: b.rack for b in live.brokers.values()}


def test_clear_errors_for_bad_targets(
    zk_chroot: ZkChroot, manifests: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = zk_chroot.server_hosts + "/no-such-chroot"
    code, _, err = kto(capsys, "plan", "-f", str(manifests), "--zookeeper", missing)
    assert code == 1
    assert "kto plan:" in err
    assert "/no-such-chroot" in err
