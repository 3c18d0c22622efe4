"""Which path writes at each stage of a migration to KRaft (``choose_writer``), and how the staged store holds a
change to exactly one path when the stage moves under it.

The stores here are in memory: what is asserted is the routing (which store is asked to write, and when none
is). What the real stores do at each stage is ``tests/real/test_operator_through_a_kraft_migration.py``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Unpack

import pytest

from topic_operator.access.interface import (
    Backend,
    ClusterMismatchError,
    ClusterUnavailableError,
    Outcome,
    Patience,
    ReadRequest,
    WriteResult,
)
from topic_operator.access.staged import StagedStore, WriterMovedError
from topic_operator.kafka.errors import KafkaError
from topic_operator.kafka.kraft_migration import MigrationStage, Writer, choose_writer
from topic_operator.model import Broker, ClusterSpec, ClusterState, TopicSpec, TopicState
from topic_operator.plan import Action, AlterConfig
from topic_operator.reconcile import Reconciler, TopicOutcome

AFTER_THE_COPY = (
    MigrationStage.DUAL_WRITE,
    MigrationStage.BROKERS_ON_KRAFT,
    MigrationStage.KRAFT_CONTROLLER_WITHOUT_MIGRATION,
)
BEFORE_IT = (MigrationStage.QUORUM_WAITING, MigrationStage.KRAFT_CONTROLLER_COPYING)


# -- choose_writer ----------------------------------------------------------------------------------------------


def test_zookeeper_mode_writes_to_zookeeper_whatever_else_is_declared() -> None:
    for brokers in (False, True):
        choice = choose_writer(None, zookeeper=True, brokers=brokers)
        assert (choice.writer, choice.stage) == (Writer.ZOOKEEPER, "ZooKeeper")
    assert "the brokers take over" in choose_writer(None, zookeeper=True, brokers=True).why


def test_a_cluster_of_brokers_alone_is_kraft() -> None:
    for stage in (None, *MigrationStage):
        choice = choose_writer(stage, zookeeper=False, brokers=True)
        assert (choice.writer, choice.stage) == (Writer.ADMIN_PROTOCOL, "KRaft")


@pytest.mark.parametrize("stage", BEFORE_IT)
def test_nothing_is_written_while_the_quorum_waits_or_copies(stage: MigrationStage) -> None:
    for brokers in (False, True):
        choice = choose_writer(stage, zookeeper=True, brokers=brokers)
        assert choice.writer is Writer.NONE
        assert not choice.writes
        assert "changes wait and are retried" in choice.why
    assert "spec.bootstrapServers" in choose_writer(stage, zookeeper=True, brokers=False).why
    assert "spec.bootstrapServers" not in choose_writer(stage, zookeeper=True, brokers=True).why


@pytest.mark.parametrize("stage", AFTER_THE_COPY)
def test_once_a_kraft_controller_owns_the_metadata_the_brokers_write(stage: MigrationStage) -> None:
    choice = choose_writer(stage, zookeeper=True, brokers=True)
    assert choice.writer is Writer.ADMIN_PROTOCOL
    assert "ZooKeeper is only read" in choice.why
    alone = choose_writer(stage, zookeeper=True, brokers=False)
    assert alone.writer is Writer.NONE
    assert (
        "declare spec.bootstrapServers on the KafkaCluster and changes land through the brokers" in alone.why
    )


def test_a_revert_waits_for_migration_to_be_deleted_and_an_unreadable_one_writes_nothing() -> None:
    for brokers in (False, True):
        reverted = choose_writer(MigrationStage.LEFT_BEHIND, zookeeper=True, brokers=brokers)
        assert (reverted.writer, reverted.stage) == (Writer.NONE, "Reverted")
        assert "delete /migration" in reverted.why
        unreadable = choose_writer(MigrationStage.UNREADABLE, zookeeper=True, brokers=brokers)
        assert (unreadable.writer, unreadable.stage) == (Writer.NONE, "Unreadable")


def test_only_the_stages_after_the_copy_write_through_the_brokers() -> None:
    """The whole table at once: a stage moved to the wrong row fails here."""
    table = {
        stage: choose_writer(stage, zookeeper=True, brokers=True).writer for stage in (None, *MigrationStage)
    }
    assert table == {
        None: Writer.ZOOKEEPER,
        MigrationStage.QUORUM_WAITING: Writer.NONE,
        MigrationStage.KRAFT_CONTROLLER_COPYING: Writer.NONE,
        MigrationStage.DUAL_WRITE: Writer.ADMIN_PROTOCOL,
        MigrationStage.BROKERS_ON_KRAFT: Writer.ADMIN_PROTOCOL,
        MigrationStage.LEFT_BEHIND: Writer.NONE,
        MigrationStage.KRAFT_CONTROLLER_WITHOUT_MIGRATION: Writer.ADMIN_PROTOCOL,
        MigrationStage.UNREADABLE: Writer.NONE,
    }


# -- the staged store -------------------------------------------------------------------------------------------


class MemoryStore:
    """A store holding one topic's overrides: reads give ``state``, writes apply AlterConfigs to it and are
    counted; ``before_write`` runs first (a stage moving under the write); ``down`` makes every call fail."""

    def __init__(self, backend: Backend, state: ClusterState) -> None:
        self._backend = backend
        self.state = state
        self.written: list[Action] = []
        self.down = False

    @property
    def backend(self) -> Backend:
        return self._backend

    def read_cluster(self, **request: Unpack[ReadRequest]) -> ClusterState:
        if self.down:
            raise ClusterUnavailableError(f"the {self._backend.value} store is down")
        topics = request.get("topics")
        if topics is None:
            return self.state
        return dataclasses.replace(
            self.state, topics={t: s for t, s in self.state.topics.items() if t in topics}
        )

    def validate(self, actions: Sequence[Action]) -> dict[str, KafkaError]:
        return {}

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        if self.down:
            raise ClusterUnavailableError(f"the {self._backend.value} store is down")
        self.written.extend(actions)
        topics = dict(self.state.topics)
        for action in actions:
            assert isinstance(action, AlterConfig)
            topics[action.topic] = dataclasses.replace(topics[action.topic], config=dict(action.config))
        self.state = dataclasses.replace(self.state, topics=topics)
        return [WriteResult(action, Outcome.APPLIED) for action in actions]


BROKERS = {1: Broker(1, "a"), 2: Broker(2, "b")}
TOPIC = TopicState(name="orders", partitions={0: (1, 2), 1: (2, 1)}, config={"retention.ms": "1000"})
CLUSTER = ClusterSpec(name="migrating", zookeeper_connect="zk:2181/kafka", bootstrap_servers="b:9092")
DECLARED = TopicSpec(
    cluster="migrating", name="orders", partitions=2, replicas=2, config={"retention.ms": "2000"}
)


def state(stage: MigrationStage | None, *, cluster_id: str = "the-cluster", backend: Backend) -> ClusterState:
    return ClusterState(
        cluster_id=cluster_id,
        brokers=BROKERS,
        topics={"orders": TOPIC},
        kraft_migration=None if stage is None else "/migration exists",
        migration=stage,
        backend=backend,
    )


def stores(
    stage: MigrationStage | None, *, brokers_cluster: str = "the-cluster"
) -> tuple[StagedStore, MemoryStore, MemoryStore]:
    zookeeper = MemoryStore(Backend.ZOOKEEPER, state(stage, backend=Backend.ZOOKEEPER))
    brokers = MemoryStore(Backend.KRAFT, state(None, cluster_id=brokers_cluster, backend=Backend.KRAFT))
    staged = StagedStore(zookeeper, brokers, zookeeper_address="zk:2181/kafka", brokers_address="b:9092")
    return staged, zookeeper, brokers


def move(store: MemoryStore, stage: MigrationStage | None) -> None:
    store.state = dataclasses.replace(
        store.state, migration=stage, kraft_migration=None if stage is None else "/migration exists"
    )


def test_zookeeper_mode_reads_and_writes_zookeeper() -> None:
    staged, zookeeper, brokers = stores(None)
    report = Reconciler(staged, CLUSTER).apply([DECLARED])
    assert [r.outcome for r in report.results] == [TopicOutcome.APPLIED]
    assert len(zookeeper.written) == 1
    assert brokers.written == []


def test_at_dual_write_the_brokers_are_read_and_written_and_told_the_stage() -> None:
    staged, zookeeper, brokers = stores(MigrationStage.DUAL_WRITE)
    read = staged.read_cluster()
    assert read.backend is Backend.KRAFT
    assert read.migration is MigrationStage.DUAL_WRITE
    assert read.writer is not None
    assert read.writer.writer is Writer.ADMIN_PROTOCOL
    report = Reconciler(staged, CLUSTER).apply([DECLARED])
    assert [r.outcome for r in report.results] == [TopicOutcome.APPLIED]
    assert (len(zookeeper.written), len(brokers.written)) == (0, 1)


@pytest.mark.parametrize("stage", [*BEFORE_IT, MigrationStage.LEFT_BEHIND])
def test_while_nothing_may_write_the_change_is_refused_naming_the_stage(stage: MigrationStage) -> None:
    staged, zookeeper, brokers = stores(stage)
    report = Reconciler(staged, CLUSTER).apply([DECLARED])
    (result,) = report.results
    assert result.outcome is TopicOutcome.REJECTED
    writer = choose_writer(stage, zookeeper=True, brokers=True)
    assert f"Stage {writer.stage}: {writer.why}" in str(result.errors[0])
    assert zookeeper.written == brokers.written == []


def test_two_clusters_behind_the_two_addresses_are_refused_before_anything_is_written() -> None:
    staged, zookeeper, brokers = stores(None, brokers_cluster="another-cluster")
    with pytest.raises(
        ClusterMismatchError, match=r"holds Kafka cluster the-cluster .* report cluster another"
    ):
        Reconciler(staged, CLUSTER).apply([DECLARED])
    assert zookeeper.written == brokers.written == []
    at_dual_write, zookeeper, brokers = stores(MigrationStage.DUAL_WRITE, brokers_cluster="another-cluster")
    with pytest.raises(ClusterMismatchError):
        at_dual_write.read_cluster()


def test_a_stage_moved_between_the_read_and_the_write_writes_nothing_through_the_old_path() -> None:
    staged, zookeeper, brokers = stores(None)
    read = staged.read_cluster()
    assert read.backend is Backend.ZOOKEEPER
    move(zookeeper, MigrationStage.DUAL_WRITE)
    action = AlterConfig("orders", {"retention.ms": "2000"}, expected_version=0)
    (result,) = staged.apply_all([action])
    assert result.outcome is Outcome.CONFLICT
    assert isinstance(result.error, WriterMovedError)
    assert "moved from stage ZooKeeper (ZooKeeper) to stage DualWrite (AdminProtocol)" in str(result.error)
    assert zookeeper.written == brokers.written == []


@pytest.mark.parametrize(
    ("before", "after", "lands_on", "attempts"),
    [
        (None, MigrationStage.DUAL_WRITE, "brokers", 2),
        (MigrationStage.DUAL_WRITE, None, "zookeeper", 2),
        (MigrationStage.BROKERS_ON_KRAFT, MigrationStage.DUAL_WRITE, "brokers", 1),
    ],
)
def test_a_change_in_flight_across_a_switch_lands_once_through_the_new_path(
    before: MigrationStage | None, after: MigrationStage | None, lands_on: str, attempts: int
) -> None:
    """The Reconciler plans on the state read before the switch, the store finds the stage moved, and the
    re-read and re-plan write through the path of the new stage: once, and only there. A stage that moves
    without changing the writer (a broker moving to KRaft) writes at the first attempt."""
    staged, zookeeper, brokers = stores(before)
    first = staged.read_cluster()
    move(zookeeper, after)
    report = Reconciler(staged, CLUSTER).apply([DECLARED], state=first)
    (result,) = report.results
    assert result.outcome is TopicOutcome.APPLIED
    assert result.attempts == attempts
    written = {"zookeeper": len(zookeeper.written), "brokers": len(brokers.written)}
    assert written == {"zookeeper": int(lands_on == "zookeeper"), "brokers": int(lands_on == "brokers")}


def test_brokers_down_while_they_write_is_unavailable_and_zookeeper_is_not_written_instead() -> None:
    staged, zookeeper, brokers = stores(MigrationStage.DUAL_WRITE)
    staged.read_cluster()
    brokers.down = True
    with pytest.raises(ClusterUnavailableError, match="nothing is written through ZooKeeper either"):
        staged.read_cluster()
    with pytest.raises(ClusterUnavailableError, match="nothing is written through ZooKeeper either"):
        staged.apply_all([AlterConfig("orders", {"retention.ms": "2000"}, expected_version=0)])
    assert zookeeper.written == []


def test_brokers_never_reached_keep_a_zookeeper_mode_cluster_unwritten_until_they_answer() -> None:
    staged, zookeeper, brokers = stores(None)
    brokers.down = True
    with pytest.raises(ClusterUnavailableError, match="the brokers must answer once"):
        Reconciler(staged, CLUSTER).apply([DECLARED])
    assert zookeeper.written == []
    brokers.down = False
    assert Reconciler(staged, CLUSTER).apply([DECLARED]).results[0].outcome is TopicOutcome.APPLIED
    brokers.down = True  # checked once: from then on, ZooKeeper mode needs only ZooKeeper
    assert Reconciler(staged, CLUSTER).apply([DECLARED]).results[0].outcome is TopicOutcome.UNCHANGED
