"""Where a ZooKeeper-to-KRaft migration stands, from what Kafka 3.4-3.9 write to ``/migration`` and ``/controller``.

What each of those releases writes, stage by stage (the same formats in all of them, 3.4.1-3.9.0-rc3:
core/src/main/scala/kafka/zk/ZkData.scala ``MigrationZNode``, ``ControllerZNode``; KafkaZkClient.scala
``tryRegisterKRaftControllerAsActiveController``; metadata/.../migration/KRaftMigrationDriver.java):

1. A controller quorum started with ``zookeeper.metadata.migration.enable`` creates ``/migration`` as soon as it
   runs, with every field -1 (``ZkMigrationLeadershipState.EMPTY``), and waits for the brokers, restarted for the
   migration, to register with it. A ZooKeeper controller still runs the cluster.
2. The active KRaft controller takes ``/controller`` (persistent, ``kraftControllerEpoch`` = its epoch) and copies
   the metadata from ZooKeeper into its log; 3.9 also writes its id and epoch to ``/migration`` then (KAFKA-16171,
   KAFKA-16667), 3.4-3.8 leave them -1 until the copy is done.
3. Once copied, ``/migration`` holds the KRaft log's offset and epoch (never -1 again), and the KRaft controller
   owns the metadata, writing every change to ZooKeeper too ("dual-write").
4. The brokers are restarted as KRaft brokers: none registers in ``/brokers/ids`` any more. Finalizing (the
   controllers restarted without migration) leaves ZooKeeper as it is; nothing there tells it apart from 4.
5. Kafka's revert steps delete ``/controller`` so a broker becomes the ZooKeeper controller again, and, when the
   brokers had entered migration mode but not moved, ``/migration`` too (3.9.0-rc3:docs/ops.html "Reverting to
   ZooKeeper mode"). The revert of stage 1 alone is only "deprovision the KRaft controller quorum": ``/migration``
   stays, every field -1, and nothing in ZooKeeper tells it from a quorum still waiting (seen on real 3.9.0
   servers, tests/real/test_kraft_migration_on_real_brokers.py); the words of stage 1 say both.

The words of a stage carry no KRaft log offset: a running KRaft controller rewrites ``/migration`` about twice a
second (no-op records move the offset), and the words go into the KafkaCluster's status, which must not change
with them.

From stage 1 a KRaft controller may own the metadata at any moment, and the migration reads every topic znode's
``topic_id`` (3.9.0-rc3:core/src/main/scala/kafka/zk/migration/ZkTopicMigrationClient.scala:67 calls
``topicIdOpt.get``), so a topic created without one breaks it: ZooKeeper gets no write from then on.
``choose_writer`` says which path, if any, writes at each stage.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum

__all__ = [
    "KRAFT",
    "STAGE_NAMES",
    "MigrationFacts",
    "MigrationStage",
    "Writer",
    "WriterChoice",
    "choose_writer",
    "migration_stage",
    "stage_text",
]


class MigrationStage(Enum):
    QUORUM_WAITING = "quorum_waiting"
    """Stage 1: ``/migration`` without KRaft offsets, a ZooKeeper controller (or none) in ``/controller``."""
    KRAFT_CONTROLLER_COPYING = "kraft_controller_copying"
    """Stage 2: a KRaft controller holds ``/controller``; the metadata is not copied yet."""
    DUAL_WRITE = "dual_write"
    """Stage 3: the KRaft controller owns the metadata and writes it to ZooKeeper."""
    BROKERS_ON_KRAFT = "brokers_on_kraft"
    """Stage 4: no broker registers in ZooKeeper; they run as KRaft brokers (or the migration was finalized)."""
    LEFT_BEHIND = "left_behind"
    """``/migration`` holds a migration's progress, yet a ZooKeeper controller holds ``/controller``: reverted."""
    KRAFT_CONTROLLER_WITHOUT_MIGRATION = "kraft_controller_without_migration"
    """A KRaft controller holds ``/controller`` but ``/migration`` is gone."""
    UNREADABLE = "unreadable"
    """``/migration`` exists but is not what Kafka writes."""


@dataclass(frozen=True, slots=True)
class MigrationFacts:
    """What ``/migration``, ``/controller`` and ``/brokers/ids`` hold, as read together."""

    migration_present: bool = False
    kraft_controller_id: int | None = None
    kraft_controller_epoch: int | None = None
    kraft_metadata_offset: int | None = None
    kraft_metadata_epoch: int | None = None
    controller_broker: int | None = None
    """``/controller``'s ``brokerid``: a broker id, or a KRaft controller's node id; None without a controller."""
    controller_kraft_epoch: int | None = None
    """``kraftControllerEpoch``: -1 (or absent, before 3.4) for a ZooKeeper controller, >= 0 for a KRaft one."""
    registered_brokers: int | None = None
    """How many brokers register in ZooKeeper; None when not read."""

    @property
    def kraft_controller_holds_controller(self) -> bool:
        return self.controller_kraft_epoch is not None and self.controller_kraft_epoch >= 0

    @property
    def metadata_migrated(self) -> bool:
        return self.kraft_metadata_offset is not None and self.kraft_metadata_offset >= 0


def migration_stage(facts: MigrationFacts) -> MigrationStage | None:
    """The stage ``facts`` show, or None when no migration to KRaft has started (or one was cleaned away)."""
    if facts.migration_present and facts.kraft_metadata_offset is None:
        return MigrationStage.UNREADABLE
    if facts.kraft_controller_holds_controller:
        if not facts.migration_present:
            return MigrationStage.KRAFT_CONTROLLER_WITHOUT_MIGRATION
        if not facts.metadata_migrated:
            return MigrationStage.KRAFT_CONTROLLER_COPYING
        return MigrationStage.BROKERS_ON_KRAFT if facts.registered_brokers == 0 else MigrationStage.DUAL_WRITE
    if not facts.migration_present:
        return None
    if facts.metadata_migrated and facts.controller_broker is not None:
        return MigrationStage.LEFT_BEHIND
    return MigrationStage.QUORUM_WAITING


def stage_text(stage: MigrationStage, facts: MigrationFacts) -> str:
    """The stage in words: what Kafka is doing, and what kto does about it."""
    kraft = facts.controller_broker if facts.kraft_controller_holds_controller else facts.kraft_controller_id
    match stage:
        case MigrationStage.QUORUM_WAITING:
            holder = (
                f"ZooKeeper controller broker {facts.controller_broker} still runs the cluster"
                if facts.controller_broker is not None
                else "no controller holds /controller"
            )
            return (
                "a KRaft controller quorum created /migration and waits for the brokers to register with it; "
                f"{holder}, but a KRaft controller may take /controller at any moment. If that quorum was "
                "deprovisioned instead (Kafka's revert of this step), /migration stays behind: once no KRaft "
                "controller runs, delete /migration and kto writes again"
            )
        case MigrationStage.KRAFT_CONTROLLER_COPYING:
            return (
                f"KRaft controller {kraft} holds /controller (epoch {facts.controller_kraft_epoch}) and is copying the "
                "metadata from ZooKeeper; it reads every topic znode's topic_id"
            )
        case MigrationStage.DUAL_WRITE:
            return (
                f"the metadata is migrated (KRaft metadata epoch {facts.kraft_metadata_epoch}): KRaft controller "
                f"{kraft} owns it and writes it to ZooKeeper (dual-write)"
            )
        case MigrationStage.BROKERS_ON_KRAFT:
            return (
                f"the metadata is migrated and no broker registers in ZooKeeper: the brokers run as KRaft brokers "
                f"under KRaft controller {kraft} (or the migration is finalized, and ZooKeeper left behind)"
            )
        case MigrationStage.LEFT_BEHIND:
            return (
                f"/migration records a migrated metadata (KRaft metadata epoch {facts.kraft_metadata_epoch}) but "
                f"ZooKeeper controller broker {facts.controller_broker} holds /controller: the cluster was reverted to "
                "ZooKeeper mode; once no KRaft controller runs, delete /migration (Kafka's revert steps) and kto "
                "writes again"
            )
        case MigrationStage.KRAFT_CONTROLLER_WITHOUT_MIGRATION:
            return (
                f"KRaft controller {kraft} holds /controller (epoch {facts.controller_kraft_epoch}) but /migration "
                "is gone"
            )
        case MigrationStage.UNREADABLE:
            return "/migration exists but is not in the format Kafka writes"


class Writer(StrEnum):
    """Which path a change to the cluster takes: its ZooKeeper's znodes, its brokers (Kafka's Admin protocol,
    applied by whichever controller is active), or none while no path is safe."""

    ZOOKEEPER = "ZooKeeper"
    ADMIN_PROTOCOL = "AdminProtocol"
    NONE = "None"


STAGE_NAMES: dict[MigrationStage | None, str] = {
    None: "ZooKeeper",
    MigrationStage.QUORUM_WAITING: "QuorumWaiting",
    MigrationStage.KRAFT_CONTROLLER_COPYING: "CopyingMetadata",
    MigrationStage.DUAL_WRITE: "DualWrite",
    MigrationStage.BROKERS_ON_KRAFT: "BrokersOnKRaft",
    MigrationStage.LEFT_BEHIND: "Reverted",
    MigrationStage.KRAFT_CONTROLLER_WITHOUT_MIGRATION: "KRaftControllerWithoutMigration",
    MigrationStage.UNREADABLE: "Unreadable",
}
"""The stage as the KafkaCluster's status and the metrics name it (one word, as Kubernetes reasons are)."""

KRAFT = "KRaft"
"""The stage of a cluster reached through its brokers alone: always KRaft, or migrated and finalized."""

_AFTER_THE_COPY = (
    MigrationStage.DUAL_WRITE,
    MigrationStage.BROKERS_ON_KRAFT,
    MigrationStage.KRAFT_CONTROLLER_WITHOUT_MIGRATION,
)
"""Stages in which a KRaft controller owns the metadata and applies what the brokers forward to it."""


@dataclass(frozen=True, slots=True)
class WriterChoice:
    """The path changes take at one stage, and why, in words for the status, the log and ``kto plan``."""

    writer: Writer
    stage: str
    """``STAGE_NAMES``' word for the stage, or ``KRAFT``."""
    why: str

    @property
    def writes(self) -> bool:
        return self.writer is not Writer.NONE

    def summary(self) -> str:
        """One line: the stage, the writer and why."""
        return f"stage {self.stage}, writes through {self.writer.value}: {self.why}"

    def to_dict(self) -> dict[str, str]:
        """``{"stage", "through", "reason"}``: the form of the KafkaCluster's ``status.writes``, of ``writes`` in
        ``kto plan -o json`` and of a snapshot header's ``writes``."""
        return {"stage": self.stage, "through": self.writer.value, "reason": self.why}

    @classmethod
    def from_dict(cls, written: Mapping[str, object]) -> WriterChoice:
        """Back from ``to_dict``'s form; ``KeyError``, ``TypeError`` or ``ValueError`` for any other."""
        through, stage, reason = written["through"], written["stage"], written["reason"]
        if not (isinstance(through, str) and isinstance(stage, str) and isinstance(reason, str)):
            raise TypeError(f"not the form of a writer choice: {dict(written)!r}")
        return cls(Writer(through), stage, reason)


def choose_writer(stage: MigrationStage | None, *, zookeeper: bool, brokers: bool) -> WriterChoice:
    """The one place that decides which path writes at each stage of a migration, for a cluster declared with its
    ``zookeeper``, its ``brokers`` (``bootstrapServers``) or both.

    ZooKeeper is written only while no migration has started: from the moment ``/migration`` exists, a KRaft
    controller may take over at any time, and from then on it overwrites what others write to ZooKeeper
    (3.9.0-rc3 KRaftMigrationZkWriter). The brokers are written once a KRaft controller owns the metadata:
    they forward every topic write to it (KafkaApis' forwarding, KIP-590), and it copies the result to ZooKeeper
    while dual-writing. In between (the quorum waiting, the copy) the controller answers NOT_CONTROLLER, so
    changes wait; a reverted migration waits for ``/migration`` to be deleted, Kafka's last revert step.
    """
    name = STAGE_NAMES[stage]
    if not zookeeper:
        why = "reached through its brokers alone (a KRaft cluster, or one whose migration is finalized)"
        return WriterChoice(Writer.ADMIN_PROTOCOL, KRAFT, why)
    if stage is None:
        why = (
            "ZooKeeper mode (no /migration): topics are written to ZooKeeper, as Kafka's own tools write them"
        )
        if brokers:
            why += "; the brokers take over once a KRaft controller owns the metadata"
        return WriterChoice(Writer.ZOOKEEPER, name, why)
    if stage in _AFTER_THE_COPY:
        if brokers:
            why = (
                "a KRaft controller owns the metadata: changes go through the brokers (Kafka's Admin protocol), "
                "which forward them to it, and it copies them to ZooKeeper; ZooKeeper is only read"
            )
            if stage is MigrationStage.BROKERS_ON_KRAFT:
                why += (
                    ". Once the migration is finalized, spec.zookeeper may be removed from the KafkaCluster"
                )
            return WriterChoice(Writer.ADMIN_PROTOCOL, name, why)
        why = (
            "a KRaft controller owns the metadata and overwrites what is written to ZooKeeper, so nothing is "
            "written; declare spec.bootstrapServers on the KafkaCluster and changes land through the brokers"
        )
        return WriterChoice(Writer.NONE, name, why)
    match stage:
        case MigrationStage.QUORUM_WAITING:
            why = (
                "a KRaft controller quorum waits for the brokers and may take over at any moment: ZooKeeper is "
                "no longer written, and the controller takes no write until it owns the metadata; changes wait "
                "and are retried"
            )
        case MigrationStage.KRAFT_CONTROLLER_COPYING:
            why = (
                "the KRaft controller is copying the metadata from ZooKeeper and refuses writes until it is done "
                "(NOT_CONTROLLER); changes wait and are retried"
            )
        case MigrationStage.LEFT_BEHIND:
            why = (
                "reverted to ZooKeeper mode with /migration left behind: once no KRaft controller runs, delete "
                "/migration (Kafka's last revert step) and changes are written to ZooKeeper again; until then "
                "they wait"
            )
        case _:
            why = "/migration is not in the format Kafka writes: nothing is written"
            return WriterChoice(Writer.NONE, name, why)
    if not brokers and stage is not MigrationStage.LEFT_BEHIND:
        why += (
            "; with spec.bootstrapServers declared, they would land through the brokers once a KRaft controller "
            "owns the metadata"
        )
    return WriterChoice(Writer.NONE, name, why)
