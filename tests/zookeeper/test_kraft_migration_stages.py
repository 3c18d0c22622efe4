"""A ZooKeeper-to-KRaft migration walked through on a real ZooKeeper, stage by stage, as Kafka 3.4-3.8 and 3.9
write /migration and /controller (``kafka.kraft_migration``): each stage is named in words, and from the moment
the KRaft quorum creates /migration until the migration is cleaned away after a revert, nothing is written;
a topic created then would lack the topic_id the migration reads, and its refusal says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto, write_manifests
from harness.zookeeper import ZkChroot
from topic_operator.kafka.kraft_migration import MigrationFacts, MigrationStage, migration_stage
from topic_operator.plan import AlterConfig, CreateTopic
from topic_operator.zookeeper.errors import KraftMigrationError
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import ZooKeeperWriter
from topic_operator.zookeeper.znodes import BrokerIdsZNode, BrokerIdZNode, ControllerZNode, MigrationZNode

KRAFT_ID, KRAFT_EPOCH = 3000, 5


def stage_of(zk: KazooClient) -> str | None:
    return read_cluster(zk).kraft_migration_stage


def refuses_every_write(
    zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> str:
    """Plan, apply and the writer all refuse; ZooKeeper is left as it was. Returns kto plan's refusal text."""
    before = read_cluster(zk)
    manifests = write_manifests(tmp_path / "t.yaml", kafka_topic("orders", 3, config="{retention.ms: 2000}"),
                                kafka_topic("fresh", 3))  # fmt: skip
    code, out, err = kto(capsys, "plan", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string)
    assert code == 1
    assert "note: the migration to KRaft: " in err
    code, _, _ = kto(capsys, "apply", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string, "--yes")
    assert code == 1
    with pytest.raises(KraftMigrationError):
        ZooKeeperWriter(zk).apply_all([AlterConfig("orders", {"retention.ms": "5"}, 0)])
    after = read_cluster(zk)
    assert after.topics == before.topics
    assert zk.exists("/brokers/topics/fresh") is None
    return out


@pytest.fixture
def orders(kafka_zk: KazooClient) -> KazooClient:
    ZooKeeperWriter(kafka_zk).apply(CreateTopic("orders", {0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4)}, {}))
    return kafka_zk


@pytest.mark.parametrize("release", ["3.4-3.8", "3.9"])
def test_every_stage_is_named_and_refused(
    orders: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str], release: str
) -> None:
    zk = orders
    assert stage_of(zk) is None

    # 1. the controller quorum starts with zookeeper.metadata.migration.enable: /migration, all -1
    zk.create(MigrationZNode.path, MigrationZNode.encode(-1, -1))
    stage = stage_of(zk)
    assert stage is not None
    assert stage.startswith("a KRaft controller quorum created /migration and waits for the brokers")
    assert "ZooKeeper controller broker 0 still runs the cluster" in stage
    out = refuses_every_write(zk, zk_chroot, tmp_path, capsys)
    assert "A topic znode created now would have no topic_id" in out  # for fresh, the create
    assert out.count("would have no topic_id") == 1  # not for orders, a config change

    # 2. the active KRaft controller takes /controller (persistent); 3.9 records itself in /migration at once
    zk.delete(ControllerZNode.path)
    zk.create(ControllerZNode.path, ControllerZNode.encode(KRAFT_ID, 1, kraft_controller_epoch=KRAFT_EPOCH))
    if release == "3.9":
        zk.set(MigrationZNode.path, MigrationZNode.encode(KRAFT_ID, KRAFT_EPOCH))
    stage = stage_of(zk)
    assert stage == (
        f"KRaft controller {KRAFT_ID} holds /controller (epoch {KRAFT_EPOCH}) and is copying the metadata from "
        "ZooKeeper; it reads every topic znode's topic_id"
    )
    refuses_every_write(zk, zk_chroot, tmp_path, capsys)

    # 3. the metadata is copied: /migration holds the KRaft log's offset and epoch; dual-write
    zk.set(MigrationZNode.path, MigrationZNode.encode(KRAFT_ID, KRAFT_EPOCH, 120, KRAFT_EPOCH))
    stage = stage_of(zk)
    assert stage is not None
    assert stage.startswith("the metadata is migrated (KRaft metadata epoch 5)")
    assert "120" not in stage  # the offset moves twice a second; the words go into a status
    assert "(dual-write)" in stage
    refuses_every_write(zk, zk_chroot, tmp_path, capsys)

    # 4. the brokers restart as KRaft brokers: none registers in ZooKeeper
    for broker in zk.get_children(BrokerIdsZNode.path):
        zk.delete(BrokerIdZNode.path(int(broker)))
    stage = stage_of(zk)
    assert stage is not None
    assert stage.startswith("the metadata is migrated and no broker registers in ZooKeeper")


def test_a_revert_left_behind_is_named_until_migration_is_deleted(
    orders: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka's revert after the brokers moved deletes /controller (a broker takes it again) but not /migration:
    kto keeps refusing, says why, and writes again once /migration is deleted."""
    zk = orders
    zk.create(MigrationZNode.path, MigrationZNode.encode(KRAFT_ID, KRAFT_EPOCH, 120, KRAFT_EPOCH))
    stage = stage_of(zk)
    assert stage is not None
    assert "the cluster was reverted to ZooKeeper mode" in stage
    assert "delete /migration" in stage
    refuses_every_write(zk, zk_chroot, tmp_path, capsys)
    zk.delete(MigrationZNode.path)
    assert stage_of(zk) is None
    ZooKeeperWriter(zk).apply(AlterConfig("orders", {"retention.ms": "5"}, 0))


def test_an_unknown_migration_version_is_refused_in_kafkas_words(orders: KazooClient) -> None:
    orders.create(MigrationZNode.path, json.dumps({"version": 1, "kraft_controller_id": 1}).encode())
    state = read_cluster(orders)
    assert state.unreadable_znodes["/migration"].startswith(
        "Encountered unknown version 1 when parsing migration json"
    )
    assert state.kraft_migration_stage == "/migration exists but is not in the format Kafka writes"
    with pytest.raises(KraftMigrationError):
        ZooKeeperWriter(orders).apply_all([AlterConfig("orders", {"retention.ms": "5"}, 0)])


@pytest.mark.parametrize(
    ("facts", "stage"),
    [
        (MigrationFacts(), None),
        (MigrationFacts(controller_broker=0, controller_kraft_epoch=-1), None),
        (
            MigrationFacts(True, -1, -1, -1, -1, controller_broker=0, controller_kraft_epoch=-1),
            MigrationStage.QUORUM_WAITING,
        ),
        (MigrationFacts(True, -1, -1, -1, -1), MigrationStage.QUORUM_WAITING),  # no controller at all
        (
            MigrationFacts(True, -1, -1, -1, -1, controller_broker=3000, controller_kraft_epoch=5),
            MigrationStage.KRAFT_CONTROLLER_COPYING,
        ),  # 3.4-3.8
        (
            MigrationFacts(True, 3000, 5, -1, -1, controller_broker=3000, controller_kraft_epoch=5),
            MigrationStage.KRAFT_CONTROLLER_COPYING,
        ),  # 3.9
        (
            MigrationFacts(
                True, 3000, 5, 9, 5, controller_broker=3000, controller_kraft_epoch=5, registered_brokers=3
            ),
            MigrationStage.DUAL_WRITE,
        ),
        (
            MigrationFacts(
                True, 3000, 5, 9, 5, controller_broker=3000, controller_kraft_epoch=5, registered_brokers=0
            ),
            MigrationStage.BROKERS_ON_KRAFT,
        ),
        (
            MigrationFacts(True, 3000, 5, 9, 5, controller_broker=2, controller_kraft_epoch=-1),
            MigrationStage.LEFT_BEHIND,
        ),
        (
            MigrationFacts(False, controller_broker=3000, controller_kraft_epoch=5),
            MigrationStage.KRAFT_CONTROLLER_WITHOUT_MIGRATION,
        ),
        (MigrationFacts(True), MigrationStage.UNREADABLE),
    ],
)
def test_the_stages_from_the_znodes(facts: MigrationFacts, stage: MigrationStage | None) -> None:
    assert migration_stage(facts) is stage
