"""The plain data the engine works on: what is declared (``TopicSpec``, ``ClusterSpec``) and what a cluster
actually holds (``ClusterState``, read from ZooKeeper).

Frozen dataclasses with no behaviour beyond derived properties, so the planner stays a pure function of them and a
snapshot can be written to JSON lines and read back by the Spark job unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final, TypeVar

from topic_operator.kafka.assignment import BrokerMetadata, RackAwareMode
from topic_operator.kafka.broker_settings import BrokerSettings
from topic_operator.kafka.cluster_release import ReleaseEvidence
from topic_operator.kafka.kraft_migration import MigrationStage, WriterChoice
from topic_operator.kafka.releases import DEFAULT_KAFKA_VERSION, KafkaVersion
from topic_operator.tenants.grants import Tenancy

__all__ = [
    "ALL_CONFIG_MANAGED",
    "BROKER_IDS_PATH",
    "REASSIGN_PARTITIONS_PATH",
    "ApplyMode",
    "Backend",
    "Broker",
    "ClusterSpec",
    "ClusterState",
    "DeletionPolicy",
    "ManagedConfig",
    "PartitionState",
    "ReassignmentPolicy",
    "TopicSpec",
    "TopicState",
    "is_unavailable",
    "is_under_replicated",
    "quick_init",
]


_Record = TypeVar("_Record")


class _Factory:
    """The default of a parameter whose field has a ``default_factory`` (as dataclasses' own ``<factory>``)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY: Final = _Factory()


def quick_init(cls: type[_Record]) -> type[_Record]:
    """``cls`` (a frozen dataclass) with an ``__init__`` that takes the same parameters, with the same defaults,
    and sets the same fields, faster.

    A frozen dataclass's own ``__init__`` sets each field through ``object.__setattr__`` looked up again for every
    field; this one binds it once per instance (as attrs does for its frozen classes). The ``__init__`` of the
    15-field ``TopicState`` runs in about 1.3 us instead of 1.8, and a ``TopicSpec`` built from a declared row in
    about two thirds of the time: the drift job builds a million of each, with as many ``TopicPlan``s, and the
    watched ZooKeeper view a ``TopicState`` per topic. Only plain fields are supported (no
    ``__post_init__``, ``InitVar``, ``init=False`` or keyword-only field): anything else is refused here, when the
    class is defined, rather than built differently. ``cls.__dataclass_init__`` keeps the generated ``__init__``,
    which the tests hold this one to."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass, checked by fields() itself
    declared: dict[str, Any] = cls.__dataclass_fields__  # type: ignore[attr-defined]
    unsupported = [f.name for f in fields if not f.init or f.kw_only] + sorted(
        set(declared) - {f.name for f in fields}
    )
    if unsupported or hasattr(cls, "__post_init__") or not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(
            f"quick_init supports frozen dataclasses of plain fields: {cls.__name__} {unsupported}"
        )
    scope: dict[str, Any] = {"_object_setattr": object.__setattr__, "_FACTORY": _FACTORY}
    parameters: list[str] = []
    body = ["    set_field = _object_setattr.__get__(self)"]
    for f in fields:
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{f.name}"] = f.default
            parameters.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{f.name}"] = f.default_factory
            parameters.append(f"{f.name}=_FACTORY")
            body.append(f"    if {f.name} is _FACTORY:\n        {f.name} = _factory_{f.name}()")
        else:
            parameters.append(f.name)
        body.append(f"    set_field({f.name!r}, {f.name})")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + "\n".join(body) + "\n"
    exec(source, scope)  # generated from the field names alone, as dataclasses does
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    cls.__dataclass_init__ = cls.__init__  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


BROKER_IDS_PATH = "/brokers/ids"
"""Where brokers register (``/brokers/ids/<id>``, semantics §5.1): shared with ``zookeeper/znodes.py``, so that
an unreadable registration in ``ClusterState.unreadable_znodes`` can be told apart by its path."""

REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
"""The reassignment request znode (semantics §14), likewise shared with ``zookeeper/znodes.py``."""


class Backend(Enum):
    """Which protocol a cluster is read and written through: what status, metrics, plans and drift reports name
    a cluster's store by."""

    ZOOKEEPER = "zookeeper"
    """The znodes of a ZooKeeper-mode cluster (Kafka 2.0 to 3.9)."""
    KRAFT = "kraft"
    """Kafka's Admin protocol, through the brokers: a KRaft cluster (or one whose KRaft controller is active)."""


class DeletionPolicy(Enum):
    """What removing a KafkaTopic does to the Kafka topic."""

    RETAIN = "Retain"
    """Nothing (the default): the topic stays in Kafka, unmanaged."""
    DELETE = "Delete"
    """Delete it, if the cluster allows deletion."""


class ApplyMode(Enum):
    APPLY = "Apply"
    """Plan and write (the default)."""
    PLAN = "Plan"
    """Plan and report only, as Kafka's ``validateOnly``."""


@quick_init
@dataclass(frozen=True, slots=True)
class TopicSpec:
    """One declared topic, already checked against Kafka's rules by the manifest loader.

    ``config`` holds canonical strings (``validate_topic_config``'s output), so the planner compares like with
    like. ``replica_assignment`` is a manual placement (partition -> replicas) or None to let Kafka's algorithm
    place replicas. ``source`` says where the declaration came from (``file.yaml#3``, ``namespace/name``), for
    messages.
    """

    cluster: str
    name: str
    partitions: int
    replicas: int
    config: Mapping[str, str] = field(default_factory=dict)
    replica_assignment: Mapping[int, tuple[int, ...]] | None = None
    rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED
    deletion_policy: DeletionPolicy = DeletionPolicy.RETAIN
    mode: ApplyMode = ApplyMode.APPLY
    source: str = ""
    unmanaged_config: frozenset[str] = frozenset()
    """Override keys this declaration leaves alone (``spec.unmanagedConfig``): whatever another tool sets them to
    stays, and none of them is in ``config``."""
    config_judged_as: ConfigJudgement | None = field(default=None, compare=False)
    """The rules ``config`` was found valid under when it was read (by the manifest loader); a plan under the
    same rules does not judge it again. None: not judged yet. A copy with another ``config`` must drop it."""


@dataclass(frozen=True, slots=True)
class ConfigJudgement:
    """The rules a topic config is judged by: a release line, the brokers' settings its checks read, and whether
    a KRaft controller judges it (its path for tiered storage). One instance per cluster, shared by its topics."""

    kafka_version: KafkaVersion
    broker_settings: BrokerSettings | None
    kraft: bool


@dataclass(frozen=True, slots=True)
class ReassignmentPolicy:
    """Whether replica changes of existing partitions go through Kafka's partition reassignment
    (``KafkaCluster.spec.reassignment``). Off by default: a reassignment copies whole partitions between brokers,
    which a platform team enables knowingly. ``throttle_bytes_per_second`` is the replication throttle
    ``kafka-reassign-partitions.sh --throttle`` would set (None: no throttle)."""

    enabled: bool = False
    throttle_bytes_per_second: int | None = None


@dataclass(frozen=True, slots=True)
class ManagedConfig:
    """Which topic config keys a cluster's KafkaTopics own (``KafkaCluster.spec.managedTopicConfig``): every key
    (the default), ``only`` those listed, or every key but those in ``all_but``. A key they do not own belongs to
    the cluster's other tools (Cruise Control, a tiered-storage controller, a quota tool): it is never read as
    drift, never written and never removed."""

    only: frozenset[str] | None = None
    all_but: frozenset[str] = frozenset()

    def manages(self, key: str) -> bool:
        return key not in self.all_but and (self.only is None or key in self.only)

    @property
    def spec_field(self) -> str:
        """The field of the KafkaCluster that says so, for messages."""
        return "spec.managedTopicConfig." + ("only" if self.only is not None else "allBut")


ALL_CONFIG_MANAGED: Final = ManagedConfig()


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """How to reach one Kafka cluster (its ZooKeeper, its brokers, or both) and what the project may do there.

    ``zookeeper_connect`` is a connect string with optional chroot (``zk-0:2181,zk-1:2181/kafka``; empty for a
    KRaft cluster).
    ``allowed_topic_prefixes`` limits which topic names may be managed (empty: any). ``kafka_version`` is the
    brokers' release line (2.0 to 3.9): topic configs are judged and znodes written as that release does.
    ``broker_settings``: the brokers' own settings that Kafka's config checks read (none stated: Kafka's
    defaults).
    """

    name: str
    zookeeper_connect: str
    allow_delete: bool = False
    allowed_topic_prefixes: tuple[str, ...] = ()
    kafka_version: KafkaVersion = DEFAULT_KAFKA_VERSION
    source: str = ""
    reassignment: ReassignmentPolicy = field(default_factory=ReassignmentPolicy)
    broker_settings: BrokerSettings = field(default_factory=BrokerSettings)
    bootstrap_servers: str | None = None
    """The brokers (``host:port,...``), reached through Kafka's Admin protocol; with no ``zookeeper_connect``, a
    KRaft cluster."""
    tenancy: Tenancy | None = field(default=None, compare=False)
    """The namespaces it grants and their limits (``spec.tenants``; None: only its own namespace's topics)."""
    managed_config: ManagedConfig = ALL_CONFIG_MANAGED
    """The topic config keys its KafkaTopics own; the others are left to other tools."""
    kafka_version_declared: bool = True
    """Whether ``kafka_version`` was declared (``spec.kafkaVersion``, ``--kafka-version``). When not, and the
    brokers can be asked, a plan judges by the line they run (``releases.brokers_line``), and the manifests are
    judged beforehand by every line that could be the brokers' (``topic_configs.checked_by_some_line``)."""


@quick_init
@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker (``/brokers/ids/<id>``). ``epoch`` is the registration znode's czxid, which Kafka uses
    as the broker epoch: it changes whenever the broker re-registers."""

    id: int
    rack: str | None = None
    endpoints: tuple[str, ...] = ()
    epoch: int = 0
    registration_version: int | None = field(default=None, compare=False)
    """The registration's JSON version (5 from inter-broker protocol 2.7, 4 before): a clue to the release."""
    features: tuple[str, ...] = field(default=(), compare=False)
    """The feature names the registration lists (none, for every ZooKeeper-mode broker from 2.7 to 3.9)."""

    def metadata(self) -> BrokerMetadata:
        return BrokerMetadata(self.id, self.rack)


@quick_init
@dataclass(frozen=True, slots=True)
class PartitionState:
    """The controller's view of one partition (``.../partitions/<p>/state``); ``partition_epoch`` is the znode's
    data version."""

    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    controller_epoch: int
    leader_recovery_state: int = 0
    partition_epoch: int = 0


def is_under_replicated(replicas: tuple[int, ...], state: PartitionState | None) -> bool:
    """Fewer replicas in sync than assigned: what ``kafka-topics.sh --under-replicated-partitions`` shows."""
    return state is not None and len(state.isr) < len(replicas)


def is_unavailable(state: PartitionState | None, live_brokers: Collection[int]) -> bool:
    """No state yet counts as unavailable: the controller has not brought the partition online (§13.5)."""
    return state is None or state.leader < 0 or state.leader not in live_brokers


@quick_init
@dataclass(frozen=True, slots=True)
class TopicState:
    """One topic as ZooKeeper holds it.

    ``topic_znode_version`` / ``config_znode_version`` are the znodes' data versions, the compare-and-set tokens of
    every write (``config_znode_version`` is None when ``/config/topics/<t>`` does not exist). ``config`` is the
    override set exactly as stored. ``partition_states`` is None unless partition states were asked for.
    """

    name: str
    partitions: Mapping[int, tuple[int, ...]]
    topic_id: str | None = None
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    config: Mapping[str, str] = field(default_factory=dict)
    topic_znode_version: int = 0
    config_znode_version: int | None = None
    marked_for_deletion: bool = False
    pending_reassignment: bool = False
    partition_states: Mapping[int, PartitionState] | None = None
    unreadable_partition_states: Mapping[int, str] = field(default_factory=dict)
    """Partitions whose state znode is not in a format Kafka writes (partition -> problem): their leader and ISR
    are unknown, not absent. Only filled when partition states were asked for."""
    format_version: int | None = None
    """The topic znode's own ``version`` field (1 up to Kafka 2.3, 2 from 2.4, 3 from 2.8; None when absent):
    which release wrote it, and the least a rewrite must keep."""
    requested_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict, compare=False)
    """The target replicas ``/admin/reassign_partitions`` asks for (partition -> replicas): before Kafka 2.4 the
    only record of a reassignment's moves, since the topic znode has no adding/removing maps."""
    created_ms: int | None = field(default=None, compare=False)
    """When the topic znode was created (ZooKeeper's ``ctime``, ms since the epoch; None when not read, as from a
    snapshot file): tells a topic that appeared after its KafkaTopic was declared from one that was there before."""

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        """Partition 0's replica count, the one Kafka's addPartitions takes as the topic's (0 when absent)."""
        return len(self.partitions.get(0, ()))

    @property
    def reassignment_in_progress(self) -> bool:
        """Adding/removing replicas in the topic znode, or an entry in ``/admin/reassign_partitions``."""
        return (
            self.pending_reassignment
            or any(self.adding_replicas.values())
            or any(self.removing_replicas.values())
        )


@dataclass(frozen=True, slots=True)
class ClusterState:
    """A whole cluster as read at one moment: brokers, controller, cluster id and every topic."""

    cluster_id: str | None
    brokers: Mapping[int, Broker]
    topics: Mapping[str, TopicState]
    controller: int | None = None
    orphan_configs: Mapping[str, int] = field(default_factory=dict)
    """Topic config znodes whose topic does not exist (name -> znode version): left by an interrupted create
    or a deletion in progress. A create must overwrite them at that version."""
    marked_for_deletion: frozenset[str] = frozenset()
    """Every name under ``/admin/delete_topics``, including topics already gone: Kafka refuses to create a topic
    while its marker exists."""
    unreadable_topics: Mapping[str, str] = field(default_factory=dict)
    """Topics whose znodes are not in a format Kafka writes (name -> problem). Kept out of ``topics`` so that
    nothing is planned on a guess, and reported instead."""
    unreadable_znodes: Mapping[str, str] = field(default_factory=dict)
    """Every other znode the engine reads that is not in a format Kafka writes (path -> problem): broker
    registrations (such a broker is left out of ``brokers``), ``/controller``, ``/cluster/id``, partition states,
    ``/admin/reassign_partitions``, ``/migration``. Reported, never guessed at: the planner goes on where that is
    safe (a config change) and refuses, naming the znode, what is not (placing replicas without a broker's rack)."""
    kraft_migration: str | None = None
    """Why the cluster is (or may be) migrating to KRaft (``/migration`` exists, or a KRaft controller holds
    ``/controller``; semantics §15), None when it is not. Znodes written then are not seen by the KRaft metadata,
    so every write is refused; reading and planning still work and say why nothing can be applied."""
    kraft_migration_stage: str | None = None
    """Where the migration stands, in words (``kafka.kraft_migration``: the quorum waiting, a KRaft controller
    copying the metadata, dual-write, the brokers on KRaft, or a migration left behind); None when none is."""
    release_evidence: ReleaseEvidence | None = None
    """What the znodes read tell of the brokers' Kafka release (``kafka.cluster_release``); None when not read
    (a snapshot file written before kto read it)."""
    backend: Backend = field(default=Backend.ZOOKEEPER, compare=False)
    """The protocol the state was read through."""
    broker_release: KafkaVersion | None = field(default=None, compare=False)
    """Read through the Admin protocol: the oldest release line the brokers' ApiVersions answers show (None when
    not read, or through ZooKeeper, whose brokers say it only through ``release_evidence``)."""
    metadata_version: str | None = field(default=None, compare=False)
    """The finalized ``metadata.version`` the brokers report (``3.9-IV0``): KRaft only; None in ZooKeeper mode."""
    migration: MigrationStage | None = field(default=None, compare=False)
    """The migration's stage as ZooKeeper shows it (``kafka.kraft_migration``); None without one, or when read
    through the brokers alone."""
    writer: WriterChoice | None = field(default=None, compare=False)
    """The path a plan against this state is written through, and why (``choose_writer``); None when not
    decided (a snapshot file)."""

    @property
    def broker_metadata(self) -> list[BrokerMetadata]:
        """The brokers as placement takes them, sorted by id."""
        return [self.brokers[i].metadata() for i in sorted(self.brokers)]

    @property
    def unreadable_brokers(self) -> dict[int, str]:
        """Registered brokers whose registration cannot be read (id -> problem): their rack is unknown."""
        prefix = f"{BROKER_IDS_PATH}/"
        return {
            int(path[len(prefix) :]): problem
            for path, problem in self.unreadable_znodes.items()
            if path.startswith(prefix) and path[len(prefix) :].isdigit()
        }

    @property
    def reassignment_unreadable(self) -> str | None:
        """The problem with ``/admin/reassign_partitions`` when it cannot be read: then no topic can be known not
        to be under reassignment."""
        return self.unreadable_znodes.get(REASSIGN_PARTITIONS_PATH)
