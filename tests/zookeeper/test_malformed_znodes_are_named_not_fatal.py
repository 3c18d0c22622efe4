"""A znode someone else wrote in a format Kafka does not write never stops a command.

Each of ``kto plan | apply | describe | snapshot`` names the znode and its problem (stderr, ``-o json``, the
snapshot's header), goes on where that is safe and refuses, with that reason, what is not: a rack-aware
placement while a broker's registration is unreadable, new partitions while ``/admin/reassign_partitions`` is.
A config change goes ahead. The engine's ``ClusterState.unreadable_znodes`` (the operator's KafkaCluster status)
says the same, from ``read_cluster`` and from the watched view.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto, write_manifests
from harness.zookeeper import ZkChroot
from topic_operator.model import ClusterSpec
from topic_operator.plan import plan
from topic_operator.snapshot_rows import rows_to_clusters
from topic_operator.testing.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.watched import WatchedCluster

BROKER = "/brokers/ids/6"
MALFORMED: dict[str, tuple[str, bytes, str]] = {
    "broker not JSON": (
        BROKER,
        b"{oops",
        "not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
    ),
    "broker without endpoints": (
        BROKER,
        b'{"version":5,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1"}',
        "field 'endpoints' must be a list of strings, got None",
    ),
    "broker with a numeric rack": (
        BROKER,
        b'{"version":5,"endpoints":["PLAINTEXT://h:9092"],"rack":7}',
        "field 'rack' must be a string or null, got 7",
    ),
    "controller not JSON": ("/controller", b"1", "expected a JSON object, got int"),
    "cluster id without id": (
        "/cluster/id",
        b'{"version":"1"}',
        "field 'id' must be a non-empty string, got None",
    ),
    "reassignment without partitions": (
        "/admin/reassign_partitions",
        b'{"version":1}',
        "field 'partitions' must be a list, got None",
    ),
}


def manifests(tmp_path: Path, *topics: str) -> Path:
    return write_manifests(tmp_path / "topics.yaml", *topics)


def topic(name: str, partitions: int, retention: int, mode: str = "Enforced") -> str:
    return kafka_topic(name, partitions, rackAwareMode=mode, config=f"{{retention.ms: {retention}}}")


def write(zk: KazooClient, path: str, data: bytes) -> None:
    if zk.exists(path) is None:
        zk.create(path, data, makepath=True)
    else:
        zk.set(path, data)


@dataclass
class Cluster:
    """The test's Kafka-looking chroot, with ``orders`` (3 partitions, online) created while all was readable."""

    zk: KazooClient
    connect: str
    tmp_path: Path
    capsys: pytest.CaptureFixture[str]

    def kto(self, *argv: str) -> tuple[int, str, str]:
        return kto(self.capsys, *argv)

    def apply(self, *topics: str) -> tuple[int, str, str]:
        declared = manifests(self.tmp_path, *topics)
        return self.kto("apply", "-f", str(declared), "--zookeeper", self.connect, "--yes")


@pytest.fixture
def cluster(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Cluster:
    created = Cluster(kafka_zk, zk_chroot.connect_string, tmp_path, capsys)
    assert created.apply(topic("orders", 3, 1000))[0] == 0
    bring_partitions_online(kafka_zk, read_cluster(kafka_zk))
    return created


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_every_command_names_the_znode_and_goes_on(cluster: Cluster, case: str) -> None:
    path, data, problem = MALFORMED[case]
    write(cluster.zk, path, data)
    connect = cluster.connect
    named = f"warning: {path} is not in a format Kafka writes, so it was left out: {problem}"

    state = read_cluster(cluster.zk, partition_states=True)
    assert state.unreadable_znodes == {path: problem}
    watched = WatchedCluster(cluster.zk)
    try:
        assert watched.state().unreadable_znodes == {path: problem}
    finally:
        watched.close()

    change = manifests(cluster.tmp_path, topic("orders", 3, 2000))
    code, out, err = cluster.kto("plan", "-f", str(change), "--zookeeper", connect, "-o", "json")
    assert (code, err.splitlines()) == (2, [named])
    assert json.loads(out)["unreadable_znodes"] == {path: problem}

    code, out, err = cluster.kto("apply", "-f", str(change), "--zookeeper", connect, "--yes")
    assert (code, err.splitlines()) == (0, [named])
    assert "orders: applied" in out  # a config change needs no broker registration, no reassignment state
    assert read_cluster(cluster.zk).topics["orders"].config == {"retention.ms": "2000"}

    code, out, err = cluster.kto("describe", "--zookeeper", connect)
    assert (code, err.splitlines()) == (0, [named])
    assert out.startswith("Topic: orders\t")

    snapshot = cluster.tmp_path / "snap.jsonl"
    argv = ["snapshot", "--zookeeper", connect, "--cluster", "test", "-o", str(snapshot)]
    code, _, err = cluster.kto(*argv)
    assert (code, err.splitlines()) == (0, [named])
    header = json.loads(snapshot.read_text().splitlines()[0])
    assert header["unreadable_znodes"] == {path: problem}
    assert rows_to_clusters(json.loads(line) for line in snapshot.read_text().splitlines())[
        "test"
    ].unreadable_znodes == {path: problem}


def test_a_rack_aware_placement_is_refused_while_a_registration_is_unreadable(cluster: Cluster) -> None:
    write(cluster.zk, BROKER, b"{oops")
    declared = manifests(
        cluster.tmp_path,
        topic("orders", 3, 2000),  # a config change: goes ahead
        topic("grown", 6, 1000),  # new partitions, placed with racks: refused
        topic("racked", 2, 1000),  # a rack-aware create: refused
        topic("anywhere", 12, 1000, mode="Disabled"),  # racks ignored: placed, broker 6 included
    )
    cluster.zk.create("/brokers/topics/grown", b'{"version":3,"partitions":{"0":[0,1,2]}}')
    code, out, err = cluster.kto("apply", "-f", str(declared), "--zookeeper", cluster.connect, "--yes")
    assert code == 1
    assert "warning: /brokers/ids/6 is not in a format Kafka writes" in err
    refusal = (
        "AdminOperationException: Replicas cannot be placed with rackAwareMode Enforced: the registration of "
        "broker 6 (/brokers/ids/6: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
        "(char 1))) cannot be read, so its rack is unknown. Fix the znode, or declare rackAwareMode: Disabled."
    )
    assert out.count(refusal) == 2, out
    state = read_cluster(cluster.zk)
    assert state.topics["orders"].config == {"retention.ms": "2000"}
    assert "racked" not in state.topics
    assert state.topics["grown"].partition_count == 1
    placed = {b for replicas in state.topics["anywhere"].partitions.values() for b in replicas}
    assert 6 in placed, "with racks ignored, the broker whose registration is unreadable takes its share"


def test_growth_is_refused_while_the_reassignment_is_unreadable(cluster: Cluster) -> None:
    write(cluster.zk, "/admin/reassign_partitions", b"[]")
    declared = manifests(cluster.tmp_path, topic("orders", 6, 2000))
    code, out, _ = cluster.kto("apply", "-f", str(declared), "--zookeeper", cluster.connect, "--yes")
    assert code == 1
    assert (
        "Partitions cannot be added to topic orders: whether a reassignment is in progress for it is unknown, "
        "/admin/reassign_partitions: expected a JSON object, got list." in out
    )
    assert read_cluster(cluster.zk).topics["orders"].partition_count == 3


def test_a_malformed_partition_state_is_shown_as_unknown(cluster: Cluster) -> None:
    state_path = "/brokers/topics/orders/partitions/1/state"
    cluster.zk.set(state_path, b'{"leader":"one"}')
    connect = cluster.connect
    code, out, err = cluster.kto("describe", "orders", "--zookeeper", connect)
    assert code == 0
    assert err.splitlines() == [
        f"warning: {state_path} is not in a format Kafka writes, so it was left out: "
        "field 'leader' must be an integer, got 'one'"
    ]
    line = next(line for line in out.splitlines() if "Partition: 1\t" in line)
    assert "\tLeader: unknown\t" in line
    assert line.endswith("\tIsr: unknown")
    for flag in ("--under-replicated-partitions", "--unavailable-partitions"):
        code, out, _ = cluster.kto("describe", "--zookeeper", connect, flag)
        assert [line.split("\t")[2] for line in out.splitlines()] == ["Partition: 1"], (
            "unknown is shown as such"
        )
    snapshot = cluster.tmp_path / "snap.jsonl"
    code, _, _ = cluster.kto("snapshot", "--zookeeper", connect, "--cluster", "test", "-o", str(snapshot))
    rows = [json.loads(line) for line in snapshot.read_text().splitlines()]
    assert rows[0]["unreadable_znodes"] == {state_path: "field 'leader' must be an integer, got 'one'"}
    assert sorted(rows[1]["partition_states"]) == ["0", "2"]


def test_describe_names_an_unreadable_topic_instead_of_calling_it_missing(cluster: Cluster) -> None:
    cluster.zk.create("/brokers/topics/broken", b"{not json")
    connect = cluster.connect
    expected = (
        "error: Topic 'broken' cannot be read: /brokers/topics/broken: not JSON (Expecting property name enclosed "
        "in double quotes: line 1 column 2 (char 1))"
    )
    code, out, err = cluster.kto("describe", "broken", "--zookeeper", connect)
    assert (code, out, err.splitlines()) == (1, "", [expected])
    code, out, err = cluster.kto("describe", "--zookeeper", connect)  # plain describe lists it too
    assert (code, err.splitlines()) == (1, [expected])
    assert out.startswith("Topic: orders\t")


def test_a_broker_listing_entry_that_is_not_an_id_is_named(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/brokers/ids/zk-debug", b"{}")
    state = read_cluster(kafka_zk)
    assert state.unreadable_znodes == {
        "/brokers/ids/zk-debug": "not a broker id: brokers register under their integer id"
    }
    assert sorted(state.brokers) == [0, 1, 2, 3, 4, 5]
    assert state.unreadable_brokers == {}
    # Not a registration: placement goes on over the six brokers.
    assert plan([], state, ClusterSpec(name="t", zookeeper_connect="")).topics == ()
