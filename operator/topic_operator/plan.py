"""The single definition of "what must change": declared topics against a cluster's state, with Kafka's rules.

``plan`` is a pure function. Its output is data: per topic the frozen actions the ZooKeeper writer turns into one
transaction each, the changes a reviewer reads (before/after), or the rejections Kafka would answer with. Computing
and writing are separate steps (as Kafka's ``createNewPartitionsAssignment`` and ``createPartitionsWithAssignment``
are), so ``mode: Plan`` simply skips the writer, and every write carries the znode version it was computed from.

A topic with any rejection gets no action at all, and one topic's rejection never affects another's plan. New
replicas are placed by the port of Kafka's algorithm with a random start drawn from a seed derived from the
cluster, the topic and the caller's seed, so the same inputs and seed always give the same plan.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import random
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from topic_operator.kafka.assignment import (
    BrokerMetadata,
    RackAwareMode,
    assign_new_partitions,
    assign_replicas_to_brokers,
    get_broker_metadatas,
    validate_replica_assignment,
)
from topic_operator.kafka.broker_settings import BrokerSettings
from topic_operator.kafka.cluster_release import release_bounds, release_for_writing
from topic_operator.kafka.controller_records import create_records, too_many_records
from topic_operator.kafka.errors import (
    AdminOperationError,
    ClusterMigratingToKraftError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicError,
    KafkaError,
    ReassignmentInProgressError,
    TopicDeletionDisabledError,
    TopicExistsError,
)
from topic_operator.kafka.kraft_migration import Writer
from topic_operator.kafka.reassignment import (
    THROTTLED_REPLICAS_KEYS,
    PartitionMove,
    brokers_in_throttle_lists,
    decrease_replication,
    in_flight,
    increase_replication,
    moves_between,
    throttled_replicas,
)
from topic_operator.kafka.releases import (
    PENDING_DELETION_REFUSED,
    REASSIGNMENT_API,
    KafkaVersion,
    brokers_line,
    format_version,
)
from topic_operator.kafka.topic_configs import (
    ComparableValue,
    comparable_config,
    remote_storage_turned_off,
    validate_topic_config,
)
from topic_operator.kafka.topic_names import (
    TopicNameIndex,
    is_internal,
    undeclared_topics,
    validate_no_collision,
    validate_topic_name,
)
from topic_operator.kafka.znode_payloads import (
    config_change_payload_size,
    config_payload,
    too_large,
    topic_payload,
    topic_payload_size_bounds,
    topic_znode_version_of,
)
from topic_operator.model import (
    ALL_CONFIG_MANAGED,
    Backend,
    ClusterSpec,
    ClusterState,
    DeletionPolicy,
    TopicSpec,
    TopicState,
    quick_init,
)

__all__ = [
    "Action",
    "AddPartitions",
    "AlterConfig",
    "Change",
    "CreateTopic",
    "DeleteTopic",
    "Plan",
    "Reassign",
    "TopicPlan",
    "TopicStatus",
    "left_alone_config",
    "plan",
    "plan_topic",
    "refused",
    "seed_for",
    "unowned_key_problem",
]


@dataclass(frozen=True, slots=True)
class CreateTopic:
    """Create ``/config/topics/<t>`` and ``/brokers/topics/<t>`` together, config first.

    ``orphan_config_version`` is the version of a config znode left without its topic (Kafka's create writes the
    config first and may stop there, §8); the transaction then overwrites it at that version instead of creating.
    """

    topic: str
    assignment: Mapping[int, tuple[int, ...]]
    config: Mapping[str, str] = field(default_factory=dict)
    orphan_config_version: int | None = None
    topic_znode_format: int = 3
    """The topic znode version to write: the one the cluster's release writes (1 before 2.4, 2 before 2.8)."""


@dataclass(frozen=True, slots=True)
class AddPartitions:
    """Rewrite ``/brokers/topics/<t>`` at ``expected_version`` with the existing partitions plus ``new_partitions``,
    keeping ``topic_id`` and the replica-change maps as read (§13.1)."""

    topic: str
    existing: Mapping[int, tuple[int, ...]]
    new_partitions: Mapping[int, tuple[int, ...]]
    expected_version: int
    topic_id: str | None = None
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    topic_znode_format: int = 3
    """The topic znode version to write: the cluster's release's, or the one read when that is newer (what it
    holds is kept: a newer controller wrote it)."""


@dataclass(frozen=True, slots=True)
class AlterConfig:
    """Replace the topic's whole override set at ``expected_version`` (None: the config znode does not exist) and
    announce it with one ``config_change_`` notification so brokers apply it live.

    ``clear_broker_throttles``: brokers whose ``leader/follower.replication.throttled.rate`` are removed in the
    same transaction, when this change removes the throttled-replica lists a finished reassignment left (as
    ``kafka-reassign-partitions.sh --verify`` does), so lists and rates go together or not at all."""

    topic: str
    config: Mapping[str, str]
    expected_version: int | None
    clear_broker_throttles: tuple[int, ...] = ()
    previous: Mapping[str, str] = field(default_factory=dict, compare=False)
    """The override set as read (context, not part of what the action asks for): what the Admin protocol's incremental change is the difference from (SET
    the keys that differ, DELETE the keys that go), where ZooKeeper's write replaces the whole set."""


@dataclass(frozen=True, slots=True)
class Reassign:
    """Start Kafka's partition reassignment of ``moves`` (semantics §14), in one transaction: the topic znode
    checked at ``expected_version`` (the replicas the moves were computed from), ``/admin/reassign_partitions``
    created (never overwritten: one reassignment at a time), and, with a throttle, the topic's override set
    ``config`` (its throttled-replica lists included) at ``config_expected_version`` and the rate on every broker
    a move involves, each with its ``config_change_`` notification. ``config`` is None when no throttle is set
    and the override set does not change."""

    topic: str
    moves: tuple[PartitionMove, ...]
    expected_version: int
    throttle_bytes_per_second: int | None = None
    config: Mapping[str, str] | None = None
    config_expected_version: int | None = None
    previous_config: Mapping[str, str] = field(default_factory=dict, compare=False)
    """The override set as read, which ``config`` replaces (see ``AlterConfig.previous``)."""

    @property
    def brokers(self) -> tuple[int, ...]:
        """Every broker a move involves, as a replica before or after: the ones the throttle rates go to."""
        return tuple(sorted({b for m in self.moves for b in (*m.current, *m.target)}))


@dataclass(frozen=True, slots=True)
class DeleteTopic:
    """Ask the controller to delete the topic (``/admin/delete_topics/<t>``). Only ever planned explicitly."""

    topic: str


Action = CreateTopic | AddPartitions | AlterConfig | DeleteTopic | Reassign


# ---------------------------------------------------------------------------------------------------------------
# The plan.


class TopicStatus(Enum):
    CREATE = "create"
    CHANGE = "change"
    UNCHANGED = "unchanged"
    DELETE = "delete"
    RETAINED = "retained"
    """A removed declaration whose ``deletionPolicy`` is Retain: the topic stays in Kafka, unmanaged."""
    REJECTED = "rejected"


@quick_init
@dataclass(frozen=True, slots=True)
class Change:
    """One reviewable difference: ``field`` as in the KafkaTopic spec (``partitions``, ``config.retention.ms``),
    ``before`` as the cluster has it (None: absent), ``after`` as declared (None: removed)."""

    field: str
    before: object
    after: object


@quick_init
@dataclass(frozen=True, slots=True)
class TopicPlan:
    cluster: str
    topic: str
    status: TopicStatus
    actions: tuple[Action, ...] = ()
    changes: tuple[Change, ...] = ()
    rejections: tuple[KafkaError, ...] = ()
    source: str = ""
    reassigning: tuple[PartitionMove, ...] | None = None
    """None, or the topic is being reassigned: the moves the controller is still carrying out (empty while only
    requested). A replica change declared meanwhile waits for it (its changes are shown, no action)."""
    left_alone: tuple[str, ...] = ()
    """The topic's override keys that its declarations do not own (``left_alone_config``), sorted: kept as they
    are, whoever set them."""


@dataclass(frozen=True, slots=True)
class Plan:
    """Every declared topic's plan, sorted by topic, and the cluster's topics nobody declared."""

    cluster: str
    topics: tuple[TopicPlan, ...]
    existing: Collection[str] = field(default=(), repr=False, compare=False)
    """The cluster's topic names, from which ``unmanaged`` is derived when asked."""
    declared: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    """Every name declared or being removed in this plan."""

    def __post_init__(self) -> None:
        names = [t.topic for t in self.topics]
        if any(a >= b for a, b in itertools.pairwise(names)):
            raise ValueError(
                "a Plan's topics must be sorted by topic name, each once (for_topic bisects them)"
            )

    @property
    def unmanaged(self) -> tuple[str, ...]:
        """The cluster's topics nobody declared, sorted, Kafka's own left out. Derived on demand: the operator plans a few topics at a
        time against a whole cluster and never asks, and sorting 10,000 names per batch was a tenth of it."""
        return tuple(undeclared_topics(self.existing, self.declared))

    @property
    def actions(self) -> list[Action]:
        return [action for topic in self.topics for action in topic.actions]

    @property
    def has_changes(self) -> bool:
        return any(topic.actions for topic in self.topics)

    @property
    def has_rejections(self) -> bool:
        return any(topic.rejections for topic in self.topics)

    def for_topic(self, topic: str) -> TopicPlan | None:
        """One topic's plan, by bisection of the sorted plans: the operator asks this for every topic of a batch
        and of a drift check, and a scan made each of those O(topics squared)."""
        index = bisect.bisect_left(self.topics, topic, key=_topic_of)
        found = self.topics[index] if index < len(self.topics) else None
        return found if found is not None and found.topic == topic else None


def _topic_of(topic_plan: TopicPlan) -> str:
    return topic_plan.topic


def seed_for(cluster: str, topic: str, seed: int = 0) -> int:
    """A start-index seed that depends only on the cluster, the topic and the caller's seed, so that a topic's
    placement does not change with the order or number of other topics (the Spark job relies on this)."""
    digest = hashlib.sha256(f"{seed}\0{cluster}\0{topic}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def plan(
    desired: Iterable[TopicSpec],
    actual: ClusterState,
    cluster: ClusterSpec | None = None,
    *,
    deleting: Iterable[TopicSpec] = (),
    seed: int = 0,
) -> Plan:
    """Plan one cluster: ``desired`` are the declared topics of this cluster, ``deleting`` the declarations being
    removed (only their ``deletionPolicy`` matters), ``cluster`` its policy (None: no deletion, no prefix limit,
    Kafka 3.4 configs)."""
    settings = _writing_release(
        cluster if cluster is not None else ClusterSpec(name=_cluster_name(desired), zookeeper_connect=""),
        actual,
    )
    by_name: dict[str, list[TopicSpec]] = {}
    for spec in desired:
        by_name.setdefault(spec.name, []).append(spec)
    names = TopicNameIndex(actual.topics)
    placement = _Placement(actual)
    configs = _ConfigMemo(
        settings.kafka_version, settings.broker_settings, kraft=_judged_by_a_kraft_controller(actual)
    )
    # Sorted by name alone: sorting the (name, specs) pairs compares tuples, three times slower at 50,000
    # topics, and a sort holds Python's lock from start to end (the drift check plans beside the event loop).
    plans = [
        _plan_declared(by_name[name], actual, settings, names, placement, configs, seed)
        for name in sorted(by_name)
    ]
    removed = sorted(deleting, key=lambda s: s.name)
    plans += [_plan_removal(spec, actual, settings) for spec in removed if spec.name not in by_name]
    if actual.kraft_migration is not None:
        # Refused too, the migration said first: a topic refused for another reason (no broker registers in
        # ZooKeeper once the brokers run on KRaft, so any create fails placement) is refused for it as well.
        plans = [
            _no_writes(p, settings, actual, creating=p.topic in by_name and p.topic not in actual.topics)
            if p.actions or p.rejections
            else p
            for p in plans
        ]
    plans = _keep_rates_a_new_reassignment_needs(plans)
    declared = frozenset(by_name) | {spec.name for spec in removed}
    return Plan(settings.name, tuple(sorted(plans, key=lambda p: p.topic)), actual.topics, declared)


def _writing_release(settings: ClusterSpec, actual: ClusterState) -> ClusterSpec:
    """The cluster as the plan judges and writes it: its declared release, unless ZooKeeper shows it runs an
    older one, whose configs and formats are then followed, so that nothing it cannot read is written
    (``kafka.cluster_release``; the contradiction itself is reported where the cluster is). A release not
    declared is the brokers' own where they said it (``brokers_line``)."""
    if not settings.kafka_version_declared:
        answered = brokers_line(actual.metadata_version, actual.broker_release)
        if answered is not None:
            settings = dataclasses.replace(settings, kafka_version=answered)
    if actual.release_evidence is None:
        return settings
    bounds = release_bounds(actual.release_evidence)
    writing = release_for_writing(settings.kafka_version, bounds)
    return (
        settings
        if writing == settings.kafka_version
        else dataclasses.replace(settings, kafka_version=writing)
    )


def _keep_rates_a_new_reassignment_needs(plans: list[TopicPlan]) -> list[TopicPlan]:
    """A finished reassignment's rates are removed (``AlterConfig.clear_broker_throttles``) except on the brokers
    a reassignment started in the same plan throttles: both transactions read the broker configs before either
    commits, so the removal could otherwise land after the new rates and leave the new moves unthrottled."""
    needed = {
        b
        for p in plans
        for a in p.actions
        if isinstance(a, Reassign) and a.throttle_bytes_per_second is not None
        for b in a.brokers
    }
    if not needed:
        return plans
    kept: list[TopicPlan] = []
    for topic_plan in plans:
        actions = tuple(
            dataclasses.replace(
                a, clear_broker_throttles=tuple(b for b in a.clear_broker_throttles if b not in needed)
            )
            if isinstance(a, AlterConfig) and a.clear_broker_throttles
            else a
            for a in topic_plan.actions
        )
        kept.append(
            dataclasses.replace(topic_plan, actions=actions) if actions != topic_plan.actions else topic_plan
        )
    return kept


def refused(plan: Plan, refusals: Mapping[str, KafkaError]) -> Plan:
    """``plan`` with the topics someone refused turned into rejections: their changes shown, their actions dropped,
    the refusal in its own words. The cluster itself refuses (its ``validate_only`` verdict), and so does a
    KafkaCluster's grant to the namespace that declared the topic (``tenants.rules``)."""
    if not refusals:
        return plan
    topics = tuple(
        dataclasses.replace(
            p, status=TopicStatus.REJECTED, actions=(), rejections=(*p.rejections, refusals[p.topic])
        )
        if p.topic in refusals and p.actions
        else p
        for p in plan.topics
    )
    return dataclasses.replace(plan, topics=topics)


def plan_topic(
    spec: TopicSpec, actual: ClusterState, cluster: ClusterSpec | None = None, *, seed: int = 0
) -> TopicPlan:
    """One topic's plan against a cluster: the same rules as ``plan``, for callers that hold a single spec."""
    return plan([spec], actual, cluster, seed=seed).topics[0]


def _cluster_name(desired: Iterable[TopicSpec]) -> str:
    return next((spec.cluster for spec in desired), "")


class _ConfigMemo:
    """Fleets repeat a few config sets across thousands of topics; validating and canonicalising each distinct
    set once per plan removes nearly half of the planning time. Failures are not cached (they raise again)."""

    def __init__(self, kafka_version: KafkaVersion, broker: BrokerSettings, *, kraft: bool) -> None:
        self._kafka_version = kafka_version
        self._broker = broker
        self.kraft = kraft
        """The plan's writes go to a KRaft controller, which judges tiered storage by its own path."""
        self._valid: set[frozenset[tuple[str, str]]] = set()
        self._comparable: dict[frozenset[tuple[str, str]], dict[str, ComparableValue]] = {}
        self._sizes: dict[frozenset[tuple[str, str]], int] = {}

    def validate(self, spec: TopicSpec) -> None:
        """Kafka's checks of ``spec.config`` under this plan's rules, unless it was found valid under the same
        rules as it was read (``TopicSpec.config_judged_as``): judging 10,000 topics each with its own config
        again cost a tenth of an apply's own time."""
        judged = spec.config_judged_as
        if judged is not None and (judged.kafka_version, judged.broker_settings, judged.kraft) == (
            self._kafka_version,
            self._broker,
            self.kraft,
        ):
            return
        config = spec.config
        key = frozenset(config.items())
        if key not in self._valid:
            validate_topic_config(
                config, kafka_version=self._kafka_version, broker=self._broker, kraft=self.kraft
            )
            self._valid.add(key)

    def size(self, config: Mapping[str, str]) -> int:
        """Bytes of the config znode's payload."""
        key = frozenset(config.items())
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = len(config_payload(config))
        return size

    def comparable(self, config: Mapping[str, str]) -> dict[str, ComparableValue]:
        key = frozenset(config.items())
        cached = self._comparable.get(key)
        if cached is None:
            cached = self._comparable[key] = comparable_config(config)
        return cached


def _written_by_a_kraft_controller(actual: ClusterState) -> bool:
    """The plan's writes go to a KRaft controller: the Admin protocol writes them (a migration's writer is the
    Admin protocol only once a KRaft controller owns the metadata), or a state read through the brokers alone.
    Requests are sized for one wherever that may be so."""
    if actual.writer is not None:
        return actual.writer.writer is Writer.ADMIN_PROTOCOL
    return actual.backend is Backend.KRAFT


def _judged_by_a_kraft_controller(actual: ClusterState) -> bool:
    """Whether a KRaft controller judges the plan's configs: written by one, unless the brokers answered with a
    release and no metadata.version, as brokers in ZooKeeper mode do (their controller judges by ZooKeeper
    mode's rules)."""
    if not _written_by_a_kraft_controller(actual):
        return False
    return not (actual.metadata_version is None and actual.broker_release is not None)


class _Placement:
    """Broker lists per rack mode, computed once per plan rather than once per topic.

    A registered broker whose registration cannot be read (``ClusterState.unreadable_brokers``) has an unknown
    rack: placing with racks would be a guess, so that is refused naming the znode; with ``Disabled`` racks are
    ignored anyway and the broker takes its share. ``reassignment_unreadable``: see ``_grow``.
    """

    def __init__(self, actual: ClusterState) -> None:
        self._actual = actual
        self._registered = actual.broker_metadata
        self._unreadable = actual.unreadable_brokers
        self.reassignment_unreadable = actual.reassignment_unreadable
        self.records_bounded = _written_by_a_kraft_controller(actual)
        """Whether a KRaft controller applies the writes, and so refuses a request of too many records
        (``kafka.controller_records``)."""
        self._by_mode: dict[RackAwareMode, list[BrokerMetadata] | KafkaError] = {}
        self._load: dict[int, int] | None = None
        self._running: list[str] | None = None

    def load(self) -> dict[int, int]:
        """Each broker's replica count over the whole cluster: the increase rule's "fewest replicas". Counted
        once per plan, and only when a replica change is planned."""
        if self._load is None:
            load: dict[int, int] = {}
            for topic in self._actual.topics.values():
                for replicas in topic.partitions.values():
                    for broker in replicas:
                        load[broker] = load.get(broker, 0) + 1
            self._load = load
        return self._load

    def reassigning(self) -> list[str]:
        """The topics being reassigned anywhere in the cluster (Kafka runs one reassignment at a time), sorted;
        ``["?"]`` when ``/admin/reassign_partitions`` cannot be read. Looked at only when a replica change or
        the end of one is planned."""
        if self._running is None:
            if self.reassignment_unreadable is not None:
                self._running = ["?"]
            else:
                self._running = sorted(
                    name for name, topic in self._actual.topics.items() if topic.reassignment_in_progress
                )
        return self._running

    @property
    def registered_ids(self) -> list[int]:
        return sorted([b.id for b in self._registered] + list(self._unreadable))

    @property
    def max_broker_id(self) -> int | None:
        """The largest registered id (None without brokers): bounds the digits placement writes per replica."""
        return max(self.registered_ids, default=None)

    def brokers(self, mode: RackAwareMode) -> list[BrokerMetadata]:
        if mode not in self._by_mode:
            try:
                self._by_mode[mode] = self._brokers(mode)
            except KafkaError as error:
                self._by_mode[mode] = _as_rejection(error)
        result = self._by_mode[mode]
        if isinstance(result, KafkaError):
            raise result
        return result

    def for_manual(self, mode: RackAwareMode) -> list[BrokerMetadata]:
        """The brokers a manual assignment is checked against: only their ids count, so an unreadable
        registration does not stop it (Kafka's rack checks still apply when every registration is readable)."""
        return self.brokers(RackAwareMode.DISABLED if self._unreadable else mode)

    def _brokers(self, mode: RackAwareMode) -> list[BrokerMetadata]:
        if not self._unreadable:
            return get_broker_metadatas(self._registered, mode)
        if mode is not RackAwareMode.DISABLED:
            which = ", ".join(
                f"broker {broker} (/brokers/ids/{broker}: {problem})"
                for broker, problem in self._unreadable.items()
            )
            raise AdminOperationError(
                f"Replicas cannot be placed with rackAwareMode {mode.value}: the registration of {which} cannot be "
                "read, so its rack is unknown. Fix the znode, or declare rackAwareMode: Disabled.",
                field="rackAwareMode",
                stricter_than_kafka=True,
            )
        unknown = [BrokerMetadata(broker, None) for broker in self._unreadable]
        return get_broker_metadatas(sorted([*self._registered, *unknown], key=lambda b: b.id), mode)


def _no_writes(
    topic_plan: TopicPlan, cluster: ClusterSpec, actual: ClusterState, *, creating: bool
) -> TopicPlan:
    """A cluster migrating to KRaft gets no write (semantics §15): the topic's changes are shown, refused, with
    where the migration stands. A topic created then would also lack the ``topic_id`` the migration reads from
    every topic znode (the controller that adds it is gone once a KRaft controller takes over): said too."""
    message = (
        f"Topic {topic_plan.topic} cannot be changed: cluster {cluster.name} is migrating to KRaft "
        f"({actual.kraft_migration}), and znodes written now would not be seen by the KRaft metadata, so "
        "kafka-topic-operator writes nothing to it."
    )
    if actual.kraft_migration_stage is not None:
        message += f" The migration: {actual.kraft_migration_stage}."
    if actual.writer is not None and not actual.writer.writes:
        message += f" Stage {actual.writer.stage}: {actual.writer.why}."
    if creating:  # a migration means 3.4+, whatever is declared
        message += (
            " A topic znode created now would have no topic_id, and the migration reads every topic's "
            "(ZkTopicMigrationClient calls topicIdOpt.get): it would break the migration."
        )
    error = ClusterMigratingToKraftError(message, field="cluster", stricter_than_kafka=True)
    return dataclasses.replace(
        topic_plan, status=TopicStatus.REJECTED, actions=(), rejections=(error, *topic_plan.rejections)
    )


class _ZnodeSize:
    """Refuses an assignment znode ZooKeeper would refuse for its size (``znode_payloads.too_large``): before
    placement from a lower bound, in constant time, so that an absurd partition count costs nothing; after it,
    exactly, but only when the upper bound says it could be too large. ``extra``: other payload bytes of the
    same request (the config znode of a create)."""

    __slots__ = ("_extra", "_high", "_low", "_topic", "_what")

    def __init__(
        self,
        topic: str,
        what: str,
        partitions: int,
        replicas: int,
        extra: int,
        max_broker_id: int | None,
        *,
        topic_id: bool = False,
        znode_format: int = 3,
    ) -> None:
        self._topic, self._what, self._extra = topic, what, extra
        self._low, self._high = topic_payload_size_bounds(
            partitions, max(replicas, 0), topic_id=topic_id, max_broker_id=max_broker_id, version=znode_format
        )

    def before_placement(self) -> None:
        self._refuse(self._low, exact=False)

    def after_placement(self, payload: Callable[[], bytes], *, always: bool = False) -> None:
        if (
            always
            or too_large(self._topic, self._what, self._high + self._extra, exact=False, field="") is not None
        ):
            self._refuse(len(payload()), exact=True)

    def _refuse(self, size: int, *, exact: bool) -> None:
        error = too_large(self._topic, self._what, size + self._extra, exact=exact, field="partitions")
        if error is not None:
            raise error


def _refuse_too_many_records(topic: str, operation: str, records: int, parts: str, *, field: str) -> None:
    error = too_many_records(topic, operation, records, parts, field=field)
    if error is not None:
        raise error


def _as_rejection(error: KafkaError) -> KafkaError:
    """A caught rule's error as a plan keeps it: its message and field, without its traceback or the error it was
    raised from (whose message it already words).

    A traceback holds the frames it passed through, and they hold the whole plan being built (the cluster's state,
    every topic's plan so far), which holds the error again: one rejected topic put a whole cluster's plan in a
    reference cycle that only the cyclic collector frees. For the drift job that was some 40,000 objects and 30 ms
    of collection per 5,000-topic cluster; for the operator, each plan with a refusal in it kept until the next
    full collection."""
    error.__cause__ = error.__context__ = None
    return error.with_traceback(None)


def _rejected(spec: TopicSpec, *errors: KafkaError, changes: tuple[Change, ...] = ()) -> TopicPlan:
    return TopicPlan(spec.cluster, spec.name, TopicStatus.REJECTED, (), changes, errors, spec.source)


def _plan_declared(
    specs: list[TopicSpec],
    actual: ClusterState,
    cluster: ClusterSpec,
    names: TopicNameIndex,
    placement: _Placement,
    configs: _ConfigMemo,
    seed: int,
) -> TopicPlan:
    spec = specs[0]
    if len(specs) > 1:
        places = ", ".join(s.source or "?" for s in specs)
        return _rejected(
            spec,
            InvalidRequestError(
                f"Topic {spec.name} is declared more than once for cluster {spec.cluster}: {places}.",
                field="topicName",
                stricter_than_kafka=True,
            ),
        )
    try:
        _check_declaration(spec, actual, cluster, configs)
        current = actual.topics.get(spec.name)
        if current is None:
            return _plan_create(spec, actual, cluster, names, placement, configs, seed)
        return _plan_existing(spec, current, cluster, placement, configs, seed)
    except KafkaError as error:
        return _rejected(spec, _as_rejection(error))


def _check_declaration(
    spec: TopicSpec, actual: ClusterState, cluster: ClusterSpec, configs: _ConfigMemo
) -> None:
    """Rules that hold whether the topic exists or not: name, ownership limits, readable state, valid config."""
    validate_topic_name(spec.name, kafka_version=cluster.kafka_version)
    if is_internal(spec.name):
        raise InvalidRequestError(
            f"Topic {spec.name} is a Kafka internal topic: kafka-topic-operator never creates, changes or deletes it.",
            field="topicName",
            stricter_than_kafka=True,
        )
    prefixes = cluster.allowed_topic_prefixes
    if prefixes and not spec.name.startswith(tuple(prefixes)):
        raise InvalidRequestError(
            f"Topic {spec.name} is outside the topic prefixes cluster {cluster.name} allows: {', '.join(prefixes)}.",
            field="topicName",
            stricter_than_kafka=True,
        )
    problem = actual.unreadable_topics.get(spec.name)
    if problem is not None:
        raise AdminOperationError(
            f"Topic {spec.name} cannot be planned: its znodes are not in a format Kafka writes ({problem}).",
            field="topicName",
            stricter_than_kafka=True,
        )
    _check_managed_config(spec, cluster)
    configs.validate(spec)


def _plan_create(
    spec: TopicSpec,
    actual: ClusterState,
    cluster: ClusterSpec,
    names: TopicNameIndex,
    placement: _Placement,
    configs: _ConfigMemo,
    seed: int,
) -> TopicPlan:
    """``validateTopicCreate`` then placement (semantics §3.1-§3.3)."""
    if spec.name in actual.marked_for_deletion:
        if cluster.kafka_version >= PENDING_DELETION_REFUSED:
            raise TopicExistsError(f"Topic '{spec.name}' is marked for deletion.", field="topicName")
        raise TopicExistsError(
            f"Topic '{spec.name}' is marked for deletion. (Kafka {format_version(cluster.kafka_version)} would "
            "create it, and its controller would then delete the new topic: the check arrived in 3.1.)",
            field="topicName",
            stricter_than_kafka=True,
        )
    validate_no_collision(spec.name, names)
    if placement.records_bounded:
        _refuse_too_many_records(
            spec.name,
            "Creating",
            create_records(spec.partitions, len(spec.config)),
            f"1 for the topic, {len(spec.config)} for its overrides, {spec.partitions:,} for its partitions",
            field="partitions",
        )
    config_size = configs.size(spec.config)
    what = (
        f"the request creating /brokers/topics/{spec.name} ({spec.partitions} partitions x {spec.replicas} "
        f"replicas) and /config/topics/{spec.name}"
    )
    znode_format = topic_znode_version_of(cluster.kafka_version)
    size_check = _ZnodeSize(
        spec.name,
        what,
        spec.partitions,
        spec.replicas,
        config_size,
        placement.max_broker_id,
        znode_format=znode_format,
    )
    size_check.before_placement()
    if spec.replica_assignment is not None:
        assignment = _manual_assignment(spec, placement.registered_ids)
    else:
        brokers = placement.brokers(spec.rack_aware_mode)
        rng = random.Random(seed_for(cluster.name, spec.name, seed))
        placed = assign_replicas_to_brokers(brokers, spec.partitions, spec.replicas, rng=rng)
        assignment = {p: tuple(replicas) for p, replicas in placed.items()}
    size_check.after_placement(lambda: topic_payload(assignment, version=znode_format))
    names.add(spec.name)
    config = dict(spec.config)
    action = CreateTopic(spec.name, assignment, config, actual.orphan_configs.get(spec.name), znode_format)
    changes = (
        Change("partitions", None, spec.partitions),
        Change("replicas", None, spec.replicas),
        *(Change(f"config.{key}", None, value) for key, value in sorted(config.items())),
    )
    return TopicPlan(spec.cluster, spec.name, TopicStatus.CREATE, (action,), changes, (), spec.source)


def _manual_assignment(spec: TopicSpec, registered: list[int]) -> dict[int, tuple[int, ...]]:
    """A declared placement must agree with the declared counts, then pass Kafka's creation rules (and ours:
    replicas on registered brokers)."""
    assignment = dict(spec.replica_assignment or {})
    sizes = sorted({len(r) for r in assignment.values()})
    if len(assignment) != spec.partitions or sizes != [spec.replicas]:
        raise InvalidReplicaAssignmentError(
            f"replicaAssignment lists {len(assignment)} partitions with {'/'.join(map(str, sizes)) or 'no'} "
            f"replicas, but the topic declares {spec.partitions} partitions with {spec.replicas} replicas.",
            field="replicaAssignment",
            stricter_than_kafka=True,
        )
    validate_replica_assignment(assignment, brokers=registered)
    return {p: tuple(assignment[p]) for p in sorted(assignment)}


def _plan_existing(
    spec: TopicSpec,
    current: TopicState,
    cluster: ClusterSpec,
    placement: _Placement,
    configs: _ConfigMemo,
    seed: int,
) -> TopicPlan:
    """Forward-only changes of an existing topic: more partitions, the config override set and, where the
    cluster enables it, replica changes through a partition reassignment."""
    rejections: list[KafkaError] = []
    actions: list[Action] = []
    changes: list[Change] = []
    if current.marked_for_deletion:
        rejections.append(InvalidTopicError("The topic is queued for deletion.", field="topicName"))
    reassigning = _reassigning(current, cluster)
    placed = _assignment_after_reassignment(current, reassigning)
    replication_factor = len(placed.get(0, ()))
    moved = _moved_partitions(spec, placed)
    if spec.replicas != replication_factor:
        changes.append(Change("replicas", replication_factor, spec.replicas))
    changes.extend(Change(f"replicaAssignment.{p}", list(placed[p]), list(declared)) for p, declared in moved)
    replica_change = spec.replicas != replication_factor or bool(moved)
    reassign: Reassign | None = None
    if replica_change and reassigning is not None and cluster.kafka_version < REASSIGNMENT_API:
        rejections.append(_cannot_change_a_running_reassignment(spec, cluster))
    if replica_change and not cluster.reassignment.enabled:
        rejections.extend(_replica_change_not_enabled(spec, cluster, replication_factor, moved))
    elif replica_change and reassigning is None:
        try:
            reassign = _reassign(spec, current, cluster, placement, seed)
        except KafkaError as error:
            rejections.append(_as_rejection(error))
    growing = spec.partitions != current.partition_count
    if growing:
        changes.append(Change("partitions", current.partition_count, spec.partitions))
        if not moved and not (replica_change and cluster.reassignment.enabled):
            try:
                actions.append(_grow(spec, current, cluster, placement))
            except KafkaError as error:
                rejections.append(_as_rejection(error))
    try:
        config_change = _config_change(spec, current, configs, cluster, placement, reassigning)
    except KafkaError as error:  # a change the cluster's brokers would refuse to apply (3.9)
        rejections.append(_as_rejection(error))
        config_change = None
    if config_change is not None:
        action, config_changes = config_change
        changes.extend(config_changes)
        size = configs.size(action.config) + config_change_payload_size(spec.name)
        oversized = too_large(
            spec.name, f"its config znode /config/topics/{spec.name}", size, exact=True, field="config"
        )
        if oversized is not None:
            rejections.append(oversized)
        elif reassign is not None:  # one transaction writes the config znode: the new set goes with the moves
            reassign = dataclasses.replace(reassign, config=_with_throttles(action.config, reassign))
        else:
            actions.append(action)
    if reassign is not None:
        actions.append(reassign)
    left_alone = tuple(sorted(left_alone_config(spec, cluster, current.config)))
    if rejections:
        return TopicPlan(
            spec.cluster,
            spec.name,
            TopicStatus.REJECTED,
            (),
            tuple(changes),
            tuple(rejections),
            spec.source,
            left_alone=left_alone,
        )
    status = TopicStatus.CHANGE if actions or changes else TopicStatus.UNCHANGED
    return TopicPlan(
        spec.cluster,
        spec.name,
        status,
        tuple(actions),
        tuple(changes),
        (),
        spec.source,
        reassigning,
        left_alone,
    )


def _reassigning(current: TopicState, cluster: ClusterSpec) -> tuple[PartitionMove, ...] | None:
    """The moves in flight when the topic is being reassigned (possibly none yet), else None. Before 2.4 the
    topic znode lists each moving partition's old and new replicas together, with no adding/removing maps: the
    request znode's targets are then the only record of where the partitions go."""
    if not current.reassignment_in_progress:
        return None
    moves = in_flight(current.partitions, current.adding_replicas, current.removing_replicas)
    if not moves and cluster.kafka_version < REASSIGNMENT_API:
        moves = [
            PartitionMove(p, current.partitions.get(p, ()), target)
            for p, target in sorted(current.requested_replicas.items())
            if current.partitions.get(p, ()) != target
        ]
    return tuple(moves)


def _cannot_change_a_running_reassignment(spec: TopicSpec, cluster: ClusterSpec) -> KafkaError:
    """Before 2.4 nothing can cancel or redirect a reassignment once requested (KIP-455 brought that in 2.4, and
    then only through the AlterPartitionReassignments API): a declaration that differs from the one running
    waits for it, and says so."""
    return ReassignmentInProgressError(
        f"Topic {spec.name} is being reassigned, and its declared replicas differ from the reassignment's target: "
        f"Kafka {format_version(cluster.kafka_version)} cannot cancel or change a partition reassignment in "
        "progress (that arrived in 2.4, with KIP-455); declare the target replicas until it finishes, then the "
        "change.",
        field="replicas",
    )


def _assignment_after_reassignment(
    current: TopicState, reassigning: tuple[PartitionMove, ...] | None
) -> Mapping[int, tuple[int, ...]]:
    """The replicas the topic will have once the reassignment in flight is done: what a declaration is compared
    with, so that the change being carried out is not planned a second time."""
    if not reassigning:
        return current.partitions
    return {**current.partitions, **{m.partition: m.target for m in reassigning}}


def _moved_partitions(
    spec: TopicSpec, placed: Mapping[int, tuple[int, ...]]
) -> list[tuple[int, tuple[int, ...]]]:
    """Existing partitions whose declared replicas differ from the ones they have."""
    declared = spec.replica_assignment
    if not declared:  # most declarations leave placement to Kafka: nothing to compare, partition by partition
        return []
    return [
        (p, tuple(declared[p])) for p in sorted(placed) if p in declared and tuple(declared[p]) != placed[p]
    ]


def _replica_change_not_enabled(
    spec: TopicSpec,
    cluster: ClusterSpec,
    replication_factor: int,
    moved: list[tuple[int, tuple[int, ...]]],
) -> list[KafkaError]:
    hint = (
        f"kafka-topic-operator does that through Kafka's partition reassignment once KafkaCluster "
        f"{cluster.name} sets spec.reassignment.enabled: true"
    )
    errors: list[KafkaError] = []
    if spec.replicas != replication_factor:
        errors.append(
            InvalidReplicationFactorError(
                f"Changing the replication factor of topic {spec.name} from {replication_factor} to "
                f"{spec.replicas} is not supported: Kafka changes replicas only by partition reassignment; "
                f"{hint}.",
                field="replicas",
                stricter_than_kafka=True,
            )
        )
    if moved:
        errors.append(
            InvalidReplicaAssignmentError(
                f"replicaAssignment moves existing partitions {[p for p, _ in moved]} of topic {spec.name}: "
                f"changing the replicas of existing partitions needs a partition reassignment; {hint}.",
                field="replicaAssignment",
                stricter_than_kafka=True,
            )
        )
    return errors


def _reassign(
    spec: TopicSpec, current: TopicState, cluster: ClusterSpec, placement: _Placement, seed: int
) -> Reassign:
    """The reassignment a declared replica change needs (the rules of ``kafka.reassignment``), or Kafka's refusal.

    A partition count change in the same step is refused: Kafka adds partitions at the topic's current
    replication factor and refuses to while a reassignment runs, so one step would place the new partitions
    by the old factor and then move them again; growing first and changing replicas next says what happens."""
    if spec.partitions != current.partition_count:
        raise InvalidRequestError(
            f"Topic {spec.name} changes its partition count ({current.partition_count} -> {spec.partitions}) and "
            "its replicas in one step: apply the partition count first, then the replica change (Kafka adds "
            "partitions only at the current replication factor, and not while a reassignment runs).",
            field="replicas",
            stricter_than_kafka=True,
        )
    running = placement.reassigning()
    if running:
        raise ReassignmentInProgressError(
            f"Topic {spec.name} cannot be reassigned: there is an existing assignment running "
            f"(topics {', '.join(running)}); one reassignment at a time.",
            field="replicas",
        )
    if spec.replica_assignment is not None:
        target = _manual_assignment(spec, placement.registered_ids)
    else:
        brokers = placement.brokers(spec.rack_aware_mode)
        rf = current.replication_factor
        if spec.replicas > rf:
            start = seed_for(cluster.name, spec.name, seed)
            target = increase_replication(
                current.partitions, spec.replicas, brokers, load=placement.load(), start=start
            )
        else:
            target = decrease_replication(current.partitions, spec.replicas, brokers)
    moves = tuple(moves_between(current.partitions, target))
    if placement.records_bounded:
        _refuse_too_many_records(
            spec.name,
            "Reassigning",
            len(moves),
            f"up to one for each of {len(moves):,} partitions moved",
            field="replicas",
        )
    throttle = cluster.reassignment.throttle_bytes_per_second
    reassign = Reassign(
        spec.name,
        moves,
        current.topic_znode_version,
        throttle,
        None,
        current.config_znode_version,
        current.config,
    )
    if throttle is None:
        return reassign
    return dataclasses.replace(reassign, config=_with_throttles(current.config, reassign))


def _with_throttles(config: Mapping[str, str], reassign: Reassign) -> dict[str, str]:
    """The override set a reassignment writes: ``config`` plus, when it is throttled, the throttled-replica
    lists of its moves."""
    if reassign.throttle_bytes_per_second is None:
        return dict(config)
    leaders, followers = throttled_replicas(reassign.moves)
    lists = {THROTTLED_REPLICAS_KEYS[0]: leaders, THROTTLED_REPLICAS_KEYS[1]: followers}
    without = {k: v for k, v in config.items() if k not in THROTTLED_REPLICAS_KEYS}
    return {**without, **{k: v for k, v in lists.items() if v}}  # a decrease adds no follower: no empty list


def _grow(spec: TopicSpec, current: TopicState, cluster: ClusterSpec, placement: _Placement) -> AddPartitions:
    """Kafka's addPartitions: a decrease is ``InvalidPartitionsError`` in Kafka's words; new partitions continue
    Kafka's placement, or take the declared lists for the new ids."""
    if current.reassignment_in_progress and spec.partitions > current.partition_count:
        raise ReassignmentInProgressError(
            f"A partition reassignment is in progress for the topic '{spec.name}'.", field="partitions"
        )
    if placement.reassignment_unreadable is not None and spec.partitions > current.partition_count:
        raise AdminOperationError(
            f"Partitions cannot be added to topic {spec.name}: whether a reassignment is in progress for it is "
            f"unknown, /admin/reassign_partitions: {placement.reassignment_unreadable}.",
            field="partitions",
            stricter_than_kafka=True,
        )
    if placement.records_bounded:
        added = spec.partitions - current.partition_count
        _refuse_too_many_records(
            spec.name,
            "Adding partitions to",
            added,
            f"one for each of {added:,} new partitions",
            field="partitions",
        )
    manual = None
    if spec.replica_assignment is not None and spec.partitions > current.partition_count:
        # existing partitions declared as they are (``_plan_existing`` does not grow a topic it moves)
        manual = {p: r for p, r in spec.replica_assignment.items() if p >= current.partition_count}
    what = (
        f"its assignment znode /brokers/topics/{spec.name} ({spec.partitions} partitions x "
        f"{current.replication_factor} replicas)"
    )
    znode_format = _rewritten_format(current, cluster)
    size_check = _ZnodeSize(
        spec.name,
        what,
        spec.partitions,
        current.replication_factor,
        0,
        None,  # existing partitions may name brokers long gone, with longer ids than any registered
        topic_id=current.topic_id is not None,
        znode_format=znode_format,
    )
    size_check.before_placement()
    brokers = (
        placement.for_manual(spec.rack_aware_mode) if manual else placement.brokers(spec.rack_aware_mode)
    )
    new = assign_new_partitions(current.partitions, brokers, spec.partitions, manual, topic=spec.name)
    size_check.after_placement(
        lambda: topic_payload(
            {**current.partitions, **new},
            current.topic_id,
            current.adding_replicas,
            current.removing_replicas,
            version=znode_format,
        ),
        always=bool(current.adding_replicas or current.removing_replicas),
    )
    return AddPartitions(
        spec.name,
        current.partitions,
        {p: tuple(r) for p, r in new.items()},
        current.topic_znode_version,
        current.topic_id,
        current.adding_replicas,
        current.removing_replicas,
        znode_format,
    )


def _rewritten_format(current: TopicState, cluster: ClusterSpec) -> int:
    """The version a rewrite of the topic znode has: the cluster's release's (as its AdminZkClient would write
    it), but never one without a field the znode holds: a topic id or a reassignment in flight, written by a
    newer controller than the declared release, is kept, not dropped."""
    needed = (
        3
        if current.topic_id is not None
        else 2
        if current.adding_replicas or current.removing_replicas
        else 1
    )
    return max(topic_znode_version_of(cluster.kafka_version), needed)


def _owns_every_key(spec: TopicSpec, cluster: ClusterSpec) -> bool:
    """The declaration owns every override key: it leaves none alone, nor does its cluster (most clusters, and
    every topic of a 1M-topic drift run). Nothing is then left alone, and no declared key refused."""
    return not spec.unmanaged_config and cluster.managed_config == ALL_CONFIG_MANAGED


def left_alone_config(spec: TopicSpec, cluster: ClusterSpec, config: Mapping[str, str]) -> dict[str, str]:
    """The overrides of ``config`` that the declarations do not own: keys the KafkaCluster leaves to other tools
    (``ClusterSpec.managed_config``) and keys the KafkaTopic leaves alone (``TopicSpec.unmanaged_config``).
    Never drift, never written, never removed: the one rule the plan, ``kto export`` and the drift job share."""
    if _owns_every_key(spec, cluster):
        return {}
    managed = cluster.managed_config
    return {
        key: value
        for key, value in config.items()
        if key in spec.unmanaged_config or not managed.manages(key)
    }


def unowned_key_problem(key: str, unmanaged: Collection[str], cluster: ClusterSpec | None) -> str | None:
    """Why override ``key`` cannot be declared, or None when the declarations own it: a key the KafkaTopic leaves
    alone itself (``unmanaged``), or one its KafkaCluster leaves to other tools. The manifest loader and the plan
    refuse it in the same words."""
    if key in unmanaged:
        return f"unmanagedConfig leaves {key} alone: declare its value or leave it alone, not both"
    if cluster is None or cluster.managed_config.manages(key):
        return None
    managed = cluster.managed_config
    listed = "does not list it" if managed.only is not None else "lists it"
    return (
        f"KafkaCluster {cluster.name} leaves {key} to other tools ({managed.spec_field} {listed}): remove it from "
        "spec.config, or let the KafkaTopics own it there"
    )


def _check_managed_config(spec: TopicSpec, cluster: ClusterSpec) -> None:
    """A declared override must be one the declarations own (``unowned_key_problem``)."""
    if _owns_every_key(spec, cluster):
        return
    for key in sorted(spec.config):
        problem = unowned_key_problem(key, spec.unmanaged_config, cluster)
        if problem is not None:
            raise InvalidRequestError(
                f"config.{key}: {spec.config[key]!r} cannot be declared: {problem}.",
                field=f"config.{key}",
                stricter_than_kafka=True,
            )


def _config_change(
    spec: TopicSpec,
    current: TopicState,
    configs: _ConfigMemo,
    cluster: ClusterSpec,
    placement: _Placement,
    reassigning: tuple[PartitionMove, ...] | None,
) -> tuple[AlterConfig, list[Change]] | None:
    """The declaration owns the override keys its cluster and itself do not leave alone: those absent from it
    are removed, and the others are kept as they are (``left_alone_config``). Except the throttled-replica lists
    of a reassignment: kept while one runs in the cluster, and removed once none does, together with the rates on
    the brokers they name when the cluster throttles reassignments (as ``--verify`` does)."""
    wanted = {**left_alone_config(spec, cluster, current.config), **spec.config}
    left = {k: current.config[k] for k in THROTTLED_REPLICAS_KEYS if k in current.config and k not in wanted}
    clear: tuple[int, ...] = ()
    if left and (reassigning is not None or placement.reassigning()):
        wanted.update(left)
    elif left and cluster.reassignment.enabled and cluster.reassignment.throttle_bytes_per_second is not None:
        clear = brokers_in_throttle_lists(left)
    if not left and wanted == current.config:
        return None  # the same strings: the same canonical values too (most topics, most of the time)
    before, after = configs.comparable(current.config), configs.comparable(wanted)
    if before == after:
        return None
    turned_off = remote_storage_turned_off(
        current.config, wanted, kafka_version=cluster.kafka_version, kraft=configs.kraft
    )
    if turned_off is not None:
        raise turned_off
    changes = [
        Change(f"config.{key}", current.config.get(key), wanted.get(key))
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]
    return AlterConfig(spec.name, wanted, current.config_znode_version, clear, current.config), changes


def _plan_removal(spec: TopicSpec, actual: ClusterState, cluster: ClusterSpec) -> TopicPlan:
    """A declaration being removed: Retain leaves the topic alone; Delete marks it for deletion if allowed."""
    if spec.deletion_policy is DeletionPolicy.RETAIN:
        return TopicPlan(spec.cluster, spec.name, TopicStatus.RETAINED, source=spec.source)
    if is_internal(spec.name):
        return _rejected(
            spec,
            AdminOperationError(
                f"Topic {spec.name} is a kafka internal topic and is not allowed to be marked for deletion.",
                field="topicName",
            ),
        )
    if not cluster.allow_delete:
        return _rejected(
            spec,
            TopicDeletionDisabledError(
                f"Topic deletion is disabled: cluster {cluster.name} does not allow deletion (allowDelete: false).",
                field="deletionPolicy",
            ),
        )
    if spec.name not in actual.topics or spec.name in actual.marked_for_deletion:
        return TopicPlan(spec.cluster, spec.name, TopicStatus.UNCHANGED, source=spec.source)
    change = Change("topic", spec.name, None)
    return TopicPlan(
        spec.cluster, spec.name, TopicStatus.DELETE, (DeleteTopic(spec.name),), (change,), (), spec.source
    )
