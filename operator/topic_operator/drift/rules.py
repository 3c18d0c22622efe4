"""The drift rules in plain Python, on a ``ClusterState``.

``cluster_findings`` classifies one cluster from declared topics, the snapshot as a ``ClusterState`` and the
plan's facts, and returns exactly the findings the job writes for that cluster. The job's Python stage
(``cluster_drift``) uses ``topic_findings`` and ``skew_findings`` as they are, and measures health and broker load
in one pass over the snapshot rows with ``topic_health_findings`` and ``loads_from_counts``; the tests hold its
findings and loads to ``cluster_findings`` and ``broker_loads`` on generated fleets. Partition health uses
the model's ``is_under_replicated`` and ``is_unavailable``, the rules ``kto describe`` filters by.

Rules, per (cluster, topic) of the full outer join of declared and actual topics:

- declared, absent: ``missing``; present, undeclared: ``unmanaged``;
- both: ``partitions_behind`` / ``partitions_ahead`` (declared partitions above / below the count),
  ``replication_factor_differs`` (partition 0's replica count, as Kafka's addPartitions takes it), one
  ``config_differs`` per key the planner would change, ``marked_for_deletion``;
- a declared topic the plan rejects with none of the findings above: ``plan_rejected``;
- every actual topic whose snapshot has partition states: ``under_replicated`` (ISR smaller than the replicas)
  and ``offline`` (no state, no leader, or a leader that is not a registered broker);
- every actual topic: ``rack_violation``, partitions spanning fewer racks than min(replicas, racks of the
  registered brokers) (never in a cluster without racks).

Per broker (registered), over all topics: ``replica_skew`` and ``leader_skew`` when the count is outside
``skew_bounds`` of the cluster's total. Leaders are the partition states' leaders, or the preferred (first)
replicas when the snapshot has no partition states.

A finding on a topic the plan rejects has action ``rejected`` and the plan's rejections as its message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from topic_operator.drift.kinds import (
    DECLARED_AT,
    KIND_INFO,
    MARKED,
    NO_SNAPSHOT,
    OFFLINE_MESSAGE,
    PRESENT,
    RACK_MESSAGE,
    SKEW_MESSAGE,
    SKEW_RANGE,
    UNDER_REPLICATED_MESSAGE,
    UNOBSERVED_DESIRED,
    Action,
    Finding,
    Kind,
    Severity,
    partition_list,
    rejection_text,
    shape,
    skew_bounds,
)
from topic_operator.drift.planning import TopicFacts
from topic_operator.kafka.topic_names import undeclared_topics
from topic_operator.model import (
    Broker,
    ClusterState,
    TopicSpec,
    TopicState,
    is_unavailable,
    is_under_replicated,
)

__all__ = [
    "DECLARATION_KINDS",
    "PLANNED_ACTION",
    "BrokerLoad",
    "broker_loads",
    "cluster_findings",
    "health_findings",
    "loads_from_counts",
    "skew_findings",
    "topic_findings",
    "topic_health_findings",
    "unobserved_finding",
]

DECLARATION_KINDS = frozenset(
    {
        Kind.MISSING,
        Kind.PARTITIONS_BEHIND,
        Kind.PARTITIONS_AHEAD,
        Kind.REPLICATION_FACTOR_DIFFERS,
        Kind.CONFIG_DIFFERS,
        Kind.MARKED_FOR_DELETION,
    }
)
"""Kinds that compare a declaration with the cluster: the plan's verdict on the topic is their action."""

PLANNED_ACTION: dict[Kind, Action] = {
    Kind.MISSING: Action.CREATE,
    Kind.PARTITIONS_BEHIND: Action.ADD_PARTITIONS,
    Kind.PARTITIONS_AHEAD: Action.REJECTED,
    Kind.REPLICATION_FACTOR_DIFFERS: Action.REJECTED,
    Kind.CONFIG_DIFFERS: Action.ALTER_CONFIG,
    Kind.MARKED_FOR_DELETION: Action.REJECTED,
}
"""What the plan does about a declaration kind when it does not reject the topic (the planner rejects
decreases, replication-factor changes and topics queued for deletion, so those are always ``rejected``)."""


@dataclass(frozen=True, slots=True)
class BrokerLoad:
    """Replicas and leaders on one broker; ``registered`` is False for an id that replicas name but that has
    no ``/brokers/ids`` registration (a dead or decommissioned broker)."""

    cluster: str
    broker: int
    rack: str | None
    registered: bool
    replicas: int
    leaders: int


def _finding(
    cluster: str,
    topic: str | None,
    kind: Kind,
    field: str,
    desired: str | None,
    actual: str | None,
    action: Action,
    message: str | None,
    severity: Severity | None = None,
) -> Finding:
    level = severity if severity is not None else KIND_INFO[kind].severity
    return Finding(cluster, topic, kind.value, field, desired, actual, action.value, level.value, message)


def _declared_findings(
    cluster: str, spec: TopicSpec, current: TopicState | None, facts: TopicFacts | None
) -> list[Finding]:
    rejected = facts is not None and facts.status == "rejected"
    reason = (
        rejection_text([(r.kafka_class, r.message) for r in facts.rejections]) if rejected and facts else None
    )

    def declared(
        kind: Kind, field: str, desired: str | None, actual: str | None, message: str | None = None
    ) -> Finding:
        action = Action.REJECTED if rejected else PLANNED_ACTION[kind]
        return _finding(
            cluster, spec.name, kind, field, desired, actual, action, reason if rejected else message
        )

    found: list[Finding] = []
    if current is None:
        source = DECLARED_AT % spec.source if spec.source else None
        found.append(declared(Kind.MISSING, "topic", shape(spec.partitions, spec.replicas), None, source))
    else:
        count, factor = current.partition_count, current.replication_factor
        if spec.partitions > count:
            found.append(declared(Kind.PARTITIONS_BEHIND, "partitions", str(spec.partitions), str(count)))
        if spec.partitions < count:
            found.append(declared(Kind.PARTITIONS_AHEAD, "partitions", str(spec.partitions), str(count)))
        if spec.replicas != factor:
            found.append(
                declared(Kind.REPLICATION_FACTOR_DIFFERS, "replicas", str(spec.replicas), str(factor))
            )
        for diff in facts.config_diffs if facts is not None else ():
            found.append(declared(Kind.CONFIG_DIFFERS, f"config.{diff.key}", diff.desired, diff.actual))
        if current.marked_for_deletion:
            found.append(declared(Kind.MARKED_FOR_DELETION, "topic", PRESENT, MARKED))
    if rejected and not found and facts is not None:
        field = facts.rejections[0].field if facts.rejections and facts.rejections[0].field else "topic"
        found.append(
            _finding(cluster, spec.name, Kind.PLAN_REJECTED, field, None, None, Action.REJECTED, reason)
        )
    return found


def _undeclared_findings(cluster: str, current: TopicState) -> list[Finding]:
    actual = shape(current.partition_count, current.replication_factor)
    found = [_finding(cluster, current.name, Kind.UNMANAGED, "topic", None, actual, Action.NONE, None)]
    if current.marked_for_deletion:
        found.append(
            _finding(
                cluster, current.name, Kind.MARKED_FOR_DELETION, "topic", None, MARKED, Action.NONE, None,
                Severity.INFO,
            )
        )  # fmt: skip
    return found


def topic_findings(
    cluster: str, specs: Iterable[TopicSpec], state: ClusterState, facts: Mapping[str, TopicFacts]
) -> list[Finding]:
    """Declaration kinds for every declared topic (each declaration, as the job's join sees them) and
    ``unmanaged`` / ``marked_for_deletion`` for the cluster's undeclared topics."""
    found: list[Finding] = []
    names: set[str] = set()
    for spec in specs:
        names.add(spec.name)
        found += _declared_findings(cluster, spec, state.topics.get(spec.name), facts.get(spec.name))
    for name in undeclared_topics(state.topics, names):
        found += _undeclared_findings(cluster, state.topics[name])
    return found


def topic_health_findings(
    cluster: str, topic: str, lagging: list[int], offline: list[int], narrow: list[int], racks: int
) -> list[Finding]:
    """The health findings of one topic from its under-replicated, offline and rack-narrow partitions."""
    found: list[Finding] = []
    if lagging:
        message = UNDER_REPLICATED_MESSAGE % partition_list(lagging)
        found.append(
            _finding(
                cluster, topic, Kind.UNDER_REPLICATED, "isr", "0", str(len(lagging)), Action.MANUAL, message
            )
        )
    if offline:
        message = OFFLINE_MESSAGE % partition_list(offline)
        found.append(
            _finding(cluster, topic, Kind.OFFLINE, "leader", "0", str(len(offline)), Action.MANUAL, message)
        )
    if narrow:
        message = RACK_MESSAGE % (partition_list(narrow), racks)
        found.append(
            _finding(
                cluster, topic, Kind.RACK_VIOLATION, "racks", "0", str(len(narrow)), Action.MANUAL, message
            )
        )
    return found


def health_findings(cluster: str, state: ClusterState) -> list[Finding]:
    """Under-replicated and offline partitions (when states were read) and rack violations, per topic."""
    live = set(state.brokers)
    rack_of = {b.id: b.rack for b in state.brokers.values() if b.rack is not None}
    racks = len(set(rack_of.values()))
    found: list[Finding] = []
    for name in sorted(state.topics):
        topic = state.topics[name]
        lagging: list[int] = []
        offline: list[int] = []
        if topic.partition_states is not None:
            states = topic.partition_states
            lagging = [p for p, r in topic.partitions.items() if is_under_replicated(r, states.get(p))]
            offline = [p for p in topic.partitions if is_unavailable(states.get(p), live)]
        narrow = [
            p
            for p, replicas in topic.partitions.items()
            if len({rack_of[r] for r in replicas if r in rack_of}) < min(len(replicas), racks)
        ]
        found += topic_health_findings(cluster, name, lagging, offline, narrow, racks)
    return found


def broker_loads(cluster: str, state: ClusterState) -> list[BrokerLoad]:
    """Every registered broker (even one holding nothing) and every other id that replicas or leaders name."""
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for topic in state.topics.values():
        for assignment in topic.partitions.values():
            replicas.update(assignment)
        if topic.partition_states is None:
            leaders.update(r[0] for r in topic.partitions.values() if r)
        else:
            leaders.update(s.leader for s in topic.partition_states.values() if s.leader >= 0)
    return loads_from_counts(cluster, state.brokers, replicas, leaders)


def loads_from_counts(
    cluster: str, brokers: Mapping[int, Broker], replicas: Counter[int], leaders: Counter[int]
) -> list[BrokerLoad]:
    """``broker_loads``' rows from replica and leader counts per broker id, sorted by id."""
    ids = sorted(set(brokers) | set(replicas) | set(leaders))
    return [
        BrokerLoad(
            cluster,
            broker,
            brokers[broker].rack if broker in brokers else None,
            broker in brokers,
            replicas[broker],
            leaders[broker],
        )
        for broker in ids
    ]


def skew_findings(cluster: str, loads: Sequence[BrokerLoad]) -> list[Finding]:
    """Registered brokers whose replica or leader count is outside ``skew_bounds`` (two brokers at least)."""
    registered = [load for load in loads if load.registered]
    found: list[Finding] = []
    if len(registered) < 2:
        return found
    for kind, what in ((Kind.REPLICA_SKEW, "replicas"), (Kind.LEADER_SKEW, "leaders")):
        counts = {load.broker: getattr(load, what) for load in registered}
        total = sum(counts.values())
        if total == 0:
            continue
        low, high = skew_bounds(total, len(counts))
        message = SKEW_MESSAGE % (total, what, len(counts))
        for broker, count in sorted(counts.items()):
            if count < low or count > high:
                field = f"broker.{broker}.{what}"
                found.append(
                    _finding(
                        cluster,
                        None,
                        kind,
                        field,
                        SKEW_RANGE % (low, high),
                        str(count),
                        Action.MANUAL,
                        message,
                    )
                )
    return found


def unobserved_finding(cluster: str, declared: int, reason: str | None = None) -> Finding:
    """Topics declared for a cluster without snapshot rows (or whose live read failed: ``reason``)."""
    return _finding(
        cluster,
        None,
        Kind.CLUSTER_UNOBSERVED,
        "snapshot",
        UNOBSERVED_DESIRED % declared,
        None,
        Action.MANUAL,
        reason or NO_SNAPSHOT,
    )


def cluster_findings(
    cluster: str, specs: Iterable[TopicSpec], state: ClusterState, facts: Iterable[TopicFacts]
) -> list[Finding]:
    """Every finding of one observed cluster, in ``drift.parquet``'s order."""
    by_topic = {f.topic: f for f in facts}
    found = topic_findings(cluster, specs, state, by_topic)
    found += health_findings(cluster, state)
    found += skew_findings(cluster, broker_loads(cluster, state))
    return sorted(found, key=Finding.sort_key)
