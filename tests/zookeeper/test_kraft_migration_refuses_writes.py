"""A cluster migrating to KRaft (Kafka 3.4+, semantics §15) gets no write at all: ``/migration`` exists, or a KRaft
controller holds ``/controller``, and znodes written directly would not be seen by the KRaft metadata. Reading,
planning and describing still work and say why nothing can be applied; the writer refuses on its own too, so a
stale view cannot slip a write through; the watched view notices a migration that starts while it watches."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto, write_manifests
from harness.zookeeper import ZkChroot
from topic_operator.plan import AlterConfig, CreateTopic
from topic_operator.zookeeper.errors import KraftMigrationError
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.watched import WatchedCluster
from topic_operator.zookeeper.writer import CONTROLLER_EPOCH, ZooKeeperWriter
from topic_operator.zookeeper.znodes import ControllerZNode, MigrationZNode

TOPICS = (kafka_topic("orders", 3, config="{retention.ms: 2000}"), kafka_topic("fresh", 3))

MIGRATING = "/migration exists (KRaft controller 3000, epoch 7)"
KRAFT_CONTROLLER = "/controller is held by KRaft controller 3000 (kraftControllerEpoch 7)"


@pytest.fixture
def orders(kafka_zk: KazooClient) -> KazooClient:
    ZooKeeperWriter(kafka_zk).apply(
        CreateTopic("orders", {0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4)}, {"retention.ms": "1000"})
    )
    return kafka_zk


def start_migration(zk: KazooClient, how: str) -> str:
    if how == "migration znode":
        zk.create(MigrationZNode.path, MigrationZNode.encode(3000, 7))
        return MIGRATING
    if how == "unreadable migration znode":
        zk.create(MigrationZNode.path, b"?")
        return "/migration exists, though unreadable (not JSON (Expecting value: line 1 column 1 (char 0)))"
    zk.set(
        ControllerZNode.path,
        json.dumps({"version": 2, "brokerid": 3000, "timestamp": "1", "kraftControllerEpoch": 7}).encode(),
    )
    return KRAFT_CONTROLLER


@pytest.mark.parametrize("how", ["migration znode", "unreadable migration znode", "KRaft controller"])
def test_nothing_is_written_and_every_command_says_why(
    orders: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    reason = start_migration(orders, how)
    manifests = write_manifests(tmp_path / "topics.yaml", *TOPICS)
    connect = zk_chroot.connect_string
    warning = (
        f"warning: cluster test is migrating to KRaft ({reason}): kto reads and plans, and writes nothing"
    )
    refusal = (
        f"cannot be changed: cluster test is migrating to KRaft ({reason}), and znodes written now would not be seen by "
        "the KRaft metadata, so kafka-topic-operator writes nothing to it."
    )

    code, out, err = kto(capsys, "plan", "-f", str(manifests), "--zookeeper", connect)
    assert code == 1
    assert warning in err.splitlines()
    assert "! topic orders: rejected" in out
    assert "    config.retention.ms: '1000' -> '2000'" in out, "the change is still shown"
    assert f"AdminOperationException: Topic orders {refusal}" in out
    assert f"AdminOperationException: Topic fresh {refusal}" in out

    code, out, err = kto(capsys, "plan", "-f", str(manifests), "--zookeeper", connect, "-o", "json")
    assert json.loads(out)["kraft_migration"] == reason

    before = read_cluster(orders)
    code, out, err = kto(capsys, "apply", "-f", str(manifests), "--zookeeper", connect, "--yes")
    assert code == 1
    after = read_cluster(orders)
    assert after.topics == before.topics
    assert orders.get_children("/config/changes") == []
    assert after.kraft_migration == reason

    code, out, _ = kto(capsys, "describe", "orders", "--zookeeper", connect)
    assert code == 0
    assert out.startswith("Topic: orders\t")
    snapshot = tmp_path / "snap.jsonl"
    assert kto(capsys, "snapshot", "--zookeeper", connect, "--cluster", "test", "-o", str(snapshot))[0] == 0
    assert json.loads(snapshot.read_text().splitlines()[0])["kraft_migration"] == reason


def test_the_writer_refuses_even_when_planned_from_a_stale_view(orders: KazooClient) -> None:
    version = read_cluster(orders).topics["orders"].config_znode_version  # read before the migration started
    start_migration(orders, "migration znode")
    with pytest.raises(KraftMigrationError) as refused:
        ZooKeeperWriter(orders).apply_all([AlterConfig("orders", {"retention.ms": "5"}, version)])
    assert str(refused.value) == (
        f"ZooKeeper path '{orders.chroot}' holds a Kafka cluster migrating to KRaft ({MIGRATING}): znodes written "
        "now would not be seen by the KRaft metadata, so kafka-topic-operator writes nothing there; nothing was "
        "written"
    )
    assert read_cluster(orders).topics["orders"].config == {"retention.ms": "1000"}


def test_a_zookeeper_controller_of_kafka_3_4_is_not_a_migration(orders: KazooClient) -> None:
    orders.set(ControllerZNode.path, ControllerZNode.encode(0, 1))  # version 2, kraftControllerEpoch -1
    assert read_cluster(orders).kraft_migration is None
    ZooKeeperWriter(orders).apply(AlterConfig("orders", {"retention.ms": "5"}, 0))


def test_the_watched_view_notices_a_migration_that_starts(orders: KazooClient) -> None:
    view = WatchedCluster(orders)
    try:
        assert view.state().kraft_migration is None
        start_migration(orders, "migration znode")
        assert view.wait_for_change(10), "no watch fired for /migration"
        give_up = time.monotonic() + 10
        while view.state().kraft_migration is None and time.monotonic() < give_up:
            view.wait_for_change(0.2)
        assert view.state().kraft_migration == MIGRATING
    finally:
        view.close()


def take_over_as_kraft_controller(zk: KazooClient) -> None:
    """What a KRaft controller does to ZooKeeper as it takes over for a migration's copy
    (KafkaZkClient.tryRegisterKRaftControllerAsActiveController): ``/controller_epoch`` bumped, ``/controller``
    taken with its epoch."""
    epoch = int(zk.get(CONTROLLER_EPOCH)[0]) + 1
    zk.set(CONTROLLER_EPOCH, str(epoch).encode())
    zk.set(
        ControllerZNode.path,
        json.dumps(
            {"version": 2, "brokerid": 3000, "timestamp": "1", "kraftControllerEpoch": epoch}
        ).encode(),
    )


def test_a_kraft_controller_taking_over_during_a_batch_stops_every_transaction_not_yet_committed(
    orders: KazooClient,
) -> None:
    """The batch read no migration, then a KRaft controller took over before its transactions were sent: none
    commits (each checks the controller epoch it began with), and each is a conflict, read again and planned
    again, which then finds the migration. Without the check they would land in ZooKeeper after the takeover,
    and be lost at the KRaft controller's next sync to it."""
    orders.create(CONTROLLER_EPOCH, b"1")
    taken = []

    def lease_held() -> bool:  # asked before each transaction is sent: the takeover happens right then
        if not taken:
            take_over_as_kraft_controller(orders)
            taken.append(True)
        return True

    writer = ZooKeeperWriter(orders, may_write=lease_held)
    create = CreateTopic("fresh", {0: (0, 1, 2)}, {})
    alter = AlterConfig("orders", {"retention.ms": "2000"}, expected_version=0)
    results = writer.apply_all([create, alter])
    assert [r.outcome.value for r in results] == ["conflict", "conflict"]
    assert all("/controller_epoch changed since it was read" in str(r.error) for r in results)
    assert orders.exists("/brokers/topics/fresh") is None
    assert json.loads(orders.get("/config/topics/orders")[0])["config"] == {"retention.ms": "1000"}
    with pytest.raises(KraftMigrationError):  # the next batch finds the KRaft controller
        writer.apply_all([create])


def test_a_controller_epoch_that_stays_lets_every_transaction_commit(orders: KazooClient) -> None:
    orders.create(CONTROLLER_EPOCH, b"1")
    results = ZooKeeperWriter(orders).apply_all([CreateTopic("fresh", {0: (0, 1, 2)}, {})])
    assert [r.outcome.value for r in results] == ["applied"]
    assert orders.exists("/brokers/topics/fresh") is not None
