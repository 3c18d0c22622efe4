"""``kto apply --wait`` follows a reassignment until Kafka is done and then removes its throttles;
``kto describe`` shows it mid-way; without ``--wait`` apply returns at once."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto
from harness.zookeeper import ZkChroot
from topic_operator.testing.simulated_brokers import bring_partitions_online, carry_out_reassignments
from topic_operator.zookeeper.snapshot import read_cluster

CLUSTER = (
    "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {name: test}\n"
    "spec: {zookeeper: {connect: '127.0.0.1:1/unused'}, "
    "reassignment: {enabled: true, throttleBytesPerSecond: 5000}}\n"
)


def _manifests(path: Path, replicas: int) -> Path:
    path.write_text("---\n".join([CLUSTER, kafka_topic("orders", 2, replicas)]))
    return path


def _created(tmp_path: Path, kafka_zk: KazooClient, connect: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = kto(
        capsys, "apply", "-f", str(_manifests(tmp_path / "one.yaml", 1)), "--zookeeper", connect, "--yes"
    )
    assert code == 0
    bring_partitions_online(kafka_zk, read_cluster(kafka_zk))


@pytest.mark.timeout(60)
def test_without_wait_apply_returns_at_once_and_describe_shows_the_move(
    tmp_path: Path, kafka_zk: KazooClient, zk_chroot: ZkChroot, capsys: pytest.CaptureFixture[str]
) -> None:
    connect = zk_chroot.connect_string
    _created(tmp_path, kafka_zk, connect, capsys)
    three = str(_manifests(tmp_path / "three.yaml", 3))
    code, out, _ = kto(capsys, "plan", "-f", three, "--zookeeper", connect)
    assert code == 2
    assert "reassign 2 partitions (throttled at 5000 B/s on brokers" in out
    code, out, _ = kto(capsys, "apply", "-f", three, "--zookeeper", connect, "--yes")
    assert code == 0
    assert kafka_zk.exists("/admin/reassign_partitions") is not None

    carry_out_reassignments(kafka_zk, finish=False)
    code, out, _ = kto(capsys, "describe", "orders", "--zookeeper", connect)
    assert code == 0
    assert "ReassignmentInProgress: true" in out
    assert "Adding Replicas: " in out
    code, out, _ = kto(capsys, "plan", "-f", three, "--zookeeper", connect, "-o", "json")
    [topic] = json.loads(out)["topics"]
    assert len(topic["reassigning"]) == 2
    assert topic["actions"] == []
    assert code == 0  # the change is being carried out: nothing left to plan
    two = str(_manifests(tmp_path / "two.yaml", 2))
    code, out, _ = kto(capsys, "plan", "-f", two, "--zookeeper", connect, "-o", "json")
    [topic] = json.loads(out)["topics"]
    assert (code, topic["actions"], topic["changes"][0]["field"]) == (
        2,
        [],
        "replicas",
    )  # queued: still pending

    carry_out_reassignments(kafka_zk)
    code, out, _ = kto(capsys, "apply", "-f", three, "--zookeeper", connect, "--yes")
    assert code == 0
    assert "the finished reassignment's throttle rates removed from brokers" in out
    assert read_cluster(kafka_zk).topics["orders"].config == {}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("output", [(), ("-o", "json")], ids=["text", "json"])
def test_wait_follows_the_controller_then_removes_the_throttles(
    tmp_path: Path,
    kafka_zk: KazooClient,
    zk_chroot: ZkChroot,
    capsys: pytest.CaptureFixture[str],
    output: tuple[str, ...],
) -> None:
    connect = zk_chroot.connect_string
    _created(tmp_path, kafka_zk, connect, capsys)
    stop = threading.Event()

    def controller() -> None:  # a controller that takes its time: started, then finished a little later
        while not stop.wait(0.3):
            if kafka_zk.exists("/admin/reassign_partitions") is not None:
                carry_out_reassignments(kafka_zk, finish=False)
                stop.wait(1.5)
                carry_out_reassignments(kafka_zk)

    thread = threading.Thread(target=controller, daemon=True)
    thread.start()
    try:
        three = str(_manifests(tmp_path / "three.yaml", 3))
        code, out, err = kto(capsys, "apply", "-f", three, "--zookeeper", connect, "--yes", "--wait", *output)
    finally:
        stop.set()
        thread.join(5)
    assert code == 0, err
    assert "reassigning: orders: 2 of 2 partitions moving" in err
    assert "reassignment done: orders" in err
    if output:  # stdout stays one JSON document: the wait speaks on stderr
        assert [r["outcome"] for r in json.loads(out)["results"]] == ["applied"]
    else:
        assert "orders: applied" in out
    assert err.index("reassignment done: orders") < err.index("orders: throttles removed")
    topic = read_cluster(kafka_zk).topics["orders"]
    assert topic.replication_factor == 3
    assert topic.config == {}
    for broker in kafka_zk.get_children("/config/brokers"):
        assert (
            "leader.replication.throttled.rate"
            not in json.loads(kafka_zk.get(f"/config/brokers/{broker}")[0])["config"]
        )


@pytest.mark.timeout(60)
def test_wait_gives_up_after_its_timeout_with_the_throttles_in_place(
    tmp_path: Path, kafka_zk: KazooClient, zk_chroot: ZkChroot, capsys: pytest.CaptureFixture[str]
) -> None:
    connect = zk_chroot.connect_string
    _created(tmp_path, kafka_zk, connect, capsys)
    three = str(_manifests(tmp_path / "three.yaml", 3))
    args = ("apply", "-f", three, "--zookeeper", connect, "--yes", "--wait", "--wait-timeout", "1")
    code, _, err = kto(capsys, *args)  # no controller: the request is never carried out
    assert code == 1
    assert "still reassigning after 1 s" in err
    assert "leader.replication.throttled.replicas" in read_cluster(kafka_zk).topics["orders"].config
