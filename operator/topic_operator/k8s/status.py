"""What the engine's results look like in ``status``: pure functions from plans, results and states to dicts.

The KafkaTopic status is built the same way whether a handler or the drift timer reconciled the topic, so both
write the same thing for the same facts and a resync that changes nothing finds an equal status (and skips the
PATCH). Fields that can disappear (``topicId`` after an out-of-band deletion) are written as None, which a JSON
merge patch turns into a removal.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from topic_operator.k8s.conditions import READY, Condition, Reason, merge_conditions
from topic_operator.kafka.cluster_release import release_report
from topic_operator.kafka.errors import (
    ClusterMigratingToKraftError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    KafkaError,
    PolicyViolationError,
    ReassignmentInProgressError,
    TopicAuthorizationError,
)
from topic_operator.kafka.kraft_migration import WriterChoice
from topic_operator.kafka.releases import KafkaVersion, brokers_line, format_version
from topic_operator.kafka.topic_names import undeclared_topics
from topic_operator.message_text import one_line
from topic_operator.model import ClusterState, TopicState
from topic_operator.plan import Change, Reassign, TopicPlan, TopicStatus
from topic_operator.plan_output import action_to_dict, error_to_dict
from topic_operator.reconcile import TopicOutcome
from topic_operator.tenants.rules import QuotaExceededError

__all__ = [
    "MAX_MESSAGE",
    "MAX_UNMANAGED_LISTED",
    "adopted_ready",
    "cluster_status",
    "drift_rows",
    "plan_items",
    "ready_for_outcome",
    "recovered_creation_ready",
    "rejection_reason",
    "same_status",
    "summarize_changes",
    "topic_status",
    "writes_status",
]

MAX_MESSAGE: Final = 2000
"""Condition and Event messages are cut here: a rejection of a 10,000-partition assignment must stay readable."""
MAX_UNMANAGED_LISTED: Final = 100
"""The KafkaCluster CRD's maxItems for status.unmanagedTopics."""
MAX_UNREADABLE_LISTED: Final = 100
"""The KafkaCluster CRD's maxItems for status.unreadable."""
_MAX_CHANGES_SHOWN: Final = 8

_NOT_SUPPORTED: Final = (
    InvalidReplicationFactorError,
    InvalidReplicaAssignmentError,
)
"""Refusals of an existing topic's change that Kafka would do by a reassignment, which this project never does."""


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def drift_rows(changes: Sequence[Change]) -> list[dict[str, str]]:
    """One row per differing field; ``desired``/``actual`` are absent where the spec or Kafka lacks the field."""
    rows = []
    for change in changes:
        row = {"field": change.field}
        if change.after is not None:
            row["desired"] = _text(change.after)
        if change.before is not None:
            row["actual"] = _text(change.before)
        rows.append(row)
    return rows


def summarize_changes(changes: Sequence[Change]) -> str:
    """``partitions: 3 -> 6, config.retention.ms: (none) -> 1000``: what a reviewer reads in an Event."""
    shown = [
        f"{c.field}: {'(none)' if c.before is None else _text(c.before)} -> "
        f"{'(none)' if c.after is None else _text(c.after)}"
        for c in changes[:_MAX_CHANGES_SHOWN]
    ]
    more = len(changes) - _MAX_CHANGES_SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def plan_items(topic_plan: TopicPlan | None, *, pending: bool) -> list[dict[str, Any]]:
    """status.plan: the actions not applied (``pending``) and the rejections, in the engine's plan JSON."""
    if topic_plan is None:
        return []
    actions = [action_to_dict(a) for a in topic_plan.actions] if pending else []
    rejections = [{"type": "rejection", **error_to_dict(e)} for e in topic_plan.rejections]
    return [_as_stored(item) for item in (*actions, *rejections)]


def _as_stored(value: Any) -> Any:
    """``value`` as the API server stores it: without its null fields, which it drops. Compared with the stored
    status, a field still null would look like a change at every reconcile (a status patch and an Event each)."""
    if isinstance(value, Mapping):
        return {k: _as_stored(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_as_stored(v) for v in value]
    return value


def rejection_reason(errors: Collection[Exception], *, exists: bool) -> Reason:
    """NotSupported for what Kafka would do by a reassignment (replication factor, moving replicas) on an existing
    topic where the cluster does not enable it; Reassigning when the change waits for a running reassignment
    (this topic's or another's: Kafka runs one at a time); KRaftMigration when the cluster is migrating to KRaft;
    Forbidden, QuotaExceeded or PolicyViolation when the KafkaCluster's grant to the namespace refuses it
    (PolicyViolation too when the brokers' own create-topic or alter-config policy does);
    Invalid for everything else Kafka or the CRD refuses."""
    if any(isinstance(e, ClusterMigratingToKraftError) for e in errors):
        return Reason.KRAFT_MIGRATION
    if any(isinstance(e, TopicAuthorizationError) for e in errors):
        return Reason.FORBIDDEN
    if any(isinstance(e, QuotaExceededError) for e in errors):
        return Reason.QUOTA_EXCEEDED
    # a namespace's grant, or the brokers' own policy
    if any(isinstance(e, PolicyViolationError) for e in errors):
        return Reason.POLICY_VIOLATION
    if exists and any(isinstance(e, ReassignmentInProgressError) for e in errors):
        return Reason.REASSIGNING  # waits for a running reassignment: retried by the timer, never final
    if exists and any(isinstance(e, _NOT_SUPPORTED) for e in errors):
        return Reason.NOT_SUPPORTED
    return Reason.INVALID


def _messages(errors: Collection[Exception]) -> str:
    return "; ".join(e.message if isinstance(e, KafkaError) else str(e) for e in errors)


def ready_for_outcome(
    outcome: TopicOutcome, topic_plan: TopicPlan, errors: Collection[Exception], *, exists: bool
) -> Condition:
    """The Ready condition one reconcile result means."""
    topic = topic_plan.topic
    if outcome in (TopicOutcome.APPLIED, TopicOutcome.UNCHANGED):
        reassigning = reassigning_ready(topic_plan)
        if reassigning is not None:
            return reassigning
    match outcome:
        case TopicOutcome.APPLIED if topic_plan.status is TopicStatus.CREATE:
            message = f"Created topic {topic}: {summarize_changes(topic_plan.changes)}"
            return Condition(READY, True, Reason.CREATED, _cut(message))
        case TopicOutcome.APPLIED:
            message = f"Updated topic {topic}: {summarize_changes(topic_plan.changes)}"
            return Condition(READY, True, Reason.UPDATED, _cut(message))
        case TopicOutcome.UNCHANGED:
            return Condition(READY, True, Reason.IN_SYNC, f"Topic {topic} matches the declaration")
        case TopicOutcome.PLANNED:
            message = (
                f"mode: Plan: {len(topic_plan.actions)} pending actions for topic {topic} in status.plan, "
                f"nothing applied ({summarize_changes(topic_plan.changes)})"
            )
            return Condition(READY, False, Reason.PLANNED, _cut(message))
        case TopicOutcome.REJECTED:
            reason = rejection_reason(errors or topic_plan.rejections, exists=exists)
            return Condition(READY, False, reason, _cut(_messages(errors or topic_plan.rejections)))
        case TopicOutcome.CONFLICT:
            message = f"Other writers kept changing topic {topic}; nothing of ours was written, retrying: "
            return Condition(READY, False, Reason.CONFLICT, _cut(message + _messages(errors)))
        case TopicOutcome.NOT_WRITTEN:
            message = (
                f"The cluster (its ZooKeeper or its brokers) stayed away past the deadline; topic {topic} was not "
                "(wholly) changed, retrying: "
            )
            return Condition(READY, False, Reason.CLUSTER_UNAVAILABLE, _cut(message + _messages(errors)))
        case TopicOutcome.UNKNOWN:
            message = (
                f"The change to topic {topic} was sent, but the cluster went away before answering and did not come "
                "back within the deadline; retrying (the retry re-reads the topic first): "
            )
            return Condition(READY, False, Reason.CLUSTER_UNAVAILABLE, _cut(message + _messages(errors)))
    raise AssertionError(f"unknown outcome {outcome}")  # pragma: no cover


def reassigning_ready(topic_plan: TopicPlan) -> Condition | None:
    """Ready=False, reason Reassigning, with the moves still in flight, while Kafka's controller moves the topic's
    replicas: after this reconcile started it, or whenever one is seen running (kto's or another tool's). None
    when no reassignment runs for the topic."""
    started = next((a for a in topic_plan.actions if isinstance(a, Reassign)), None)
    topic = topic_plan.topic
    if started is not None:
        throttle = started.throttle_bytes_per_second
        how = f", throttled at {throttle} B/s" if throttle is not None else ""
        moves = "; ".join(m.describe() for m in started.moves)
        message = f"Reassigning topic {topic}: started moving {len(started.moves)} partitions{how}: {moves}"
        return Condition(READY, False, Reason.REASSIGNING, _cut(message))
    if topic_plan.reassigning is None:
        return None
    moving = topic_plan.reassigning
    progress = (
        f"{len(moving)} partitions still moving: {'; '.join(m.describe() for m in moving)}"
        if moving
        else "requested, waiting for the controller to start it"
    )
    message = f"Reassigning topic {topic}: {progress}"
    waiting = [
        c for c in topic_plan.changes if c.field == "replicas" or c.field.startswith("replicaAssignment.")
    ]
    if waiting:
        message += f"; then: {summarize_changes(tuple(waiting))} (queued until this one is done)"
    return Condition(READY, False, Reason.REASSIGNING, _cut(message))


def adopted_ready(ready: Condition, topic_plan: TopicPlan) -> Condition:
    """The Ready condition of a KafkaTopic taking over a topic that existed before it (created by hand, a script or
    another tool): it was neither created nor re-placed, only brought to the declaration as any update is. Said
    once, with what changed; in ``mode: Plan``, what adopting would change."""
    topic = topic_plan.topic
    if ready.reason is Reason.PLANNED:
        message = (
            f"mode: Plan: adopting existing topic {topic} would apply {len(topic_plan.actions)} actions (in "
            f"status.plan; nothing applied): {summarize_changes(topic_plan.changes)}"
        )
        return Condition(READY, False, Reason.PLANNED, _cut(message))
    if not ready.status:
        return ready
    if topic_plan.changes:
        message = f"Adopted existing topic {topic}: {summarize_changes(topic_plan.changes)}"
    else:
        message = f"Adopted existing topic {topic}: it already matched the declaration, nothing was changed"
    return Condition(READY, True, Reason.ADOPTED, _cut(message))


def recovered_creation_ready(topic_plan: TopicPlan) -> Condition:
    """The Ready condition of a KafkaTopic finding the topic its own earlier attempt created, after that attempt's
    status and Event were lost (the API server or the leader Lease went away between the write to ZooKeeper and
    the record in Kubernetes): Created, as the lost attempt would have said, with no Event of its own (the lost
    attempt's Event may have landed)."""
    topic = topic_plan.topic
    message = f"Created topic {topic} (the status of the attempt that created it was lost; recorded now)"
    if topic_plan.changes:
        message += f": then {summarize_changes(topic_plan.changes)}"
    return Condition(READY, True, Reason.CREATED, _cut(message))


def topic_status(
    *,
    generation: int | None,
    topic: str,
    state: TopicState | None,
    ready: Condition,
    drift: Sequence[Change] = (),
    plan: Sequence[Mapping[str, Any]] = (),
    previous: Mapping[str, Any] | None = None,
    now: datetime.datetime,
) -> dict[str, Any]:
    """A whole KafkaTopic status. ``previous`` is the current status (for the conditions' transition times)."""
    rows = drift_rows(drift)
    return {
        "observedGeneration": generation,
        "topicName": topic,
        "topicId": state.topic_id if state is not None else None,
        "partitions": state.partition_count if state is not None else None,
        "replicas": state.replication_factor if state is not None else None,
        "conditions": merge_conditions((previous or {}).get("conditions"), ready, now),
        "drift": rows,
        "driftCount": len(rows),
        "plan": [dict(item) for item in plan],
    }


def cluster_status(
    *,
    generation: int | None,
    state: ClusterState | None,
    declared: Collection[str],
    ready: Condition,
    previous: Mapping[str, Any] | None = None,
    now: datetime.datetime,
    kafka_version: KafkaVersion | None = None,
    kafka_version_declared: bool = True,
) -> dict[str, Any]:
    """A whole KafkaCluster status. ``declared`` are the topic names KafkaTopics declare for this cluster (in any
    namespace); the cluster's other topics are unmanaged, listed up to the CRD's limit. ``kafka_version``: its
    spec.kafkaVersion (``kafka_version_declared``: given, not the default), against which the release ZooKeeper
    shows, or the brokers answer, is reported."""
    conditions = merge_conditions((previous or {}).get("conditions"), ready, now)
    if state is None:
        return {"observedGeneration": generation, "connected": False, "conditions": conditions}
    wanted = declared if isinstance(declared, (set, frozenset)) else set(declared)
    unmanaged = undeclared_topics(state.topics, wanted)
    brokers = [
        {"id": b.id, **({"rack": b.rack} if b.rack is not None else {})}
        for b in sorted(state.brokers.values(), key=lambda b: b.id)
    ]
    return {
        "observedGeneration": generation,
        "connected": True,
        "clusterId": state.cluster_id,
        "controller": state.controller,
        "brokerCount": len(brokers),
        "brokers": brokers,
        "racks": sorted({b.rack for b in state.brokers.values() if b.rack is not None}),
        "topics": {"managed": len(wanted.intersection(state.topics)), "unmanaged": len(unmanaged)},
        "unmanagedTopics": unmanaged[:MAX_UNMANAGED_LISTED],
        "unreadable": unreadable_znodes(state)[:MAX_UNREADABLE_LISTED],
        "kraftMigration": _migration(state),
        "writes": writes_status(state.writer),
        "kafkaRelease": kafka_release_status(kafka_version, state, declared=kafka_version_declared),
        "conditions": conditions,
    }


def _migration(state: ClusterState) -> str | None:
    """``status.kraftMigration``: why nothing is written, and where the migration stands."""
    if state.kraft_migration is None:
        return None
    stage = f": {state.kraft_migration_stage}" if state.kraft_migration_stage is not None else ""
    return one_line(f"{state.kraft_migration}{stage}")


def writes_status(choice: WriterChoice | None) -> dict[str, str] | None:
    """``status.writes``: the migration's stage, the path changes take at it, and why."""
    if choice is None:
        return None
    return {**choice.to_dict(), "reason": one_line(choice.why)}


def kafka_release_status(
    kafka_version: KafkaVersion | None, state: ClusterState, *, declared: bool = True
) -> dict[str, Any] | None:
    """``status.kafkaRelease``: what ZooKeeper shows of the brokers' release against spec.kafkaVersion; or, for a
    cluster read through the brokers alone, what they answer. ``declared``: spec.kafkaVersion was given (else
    ``kafka_version`` is the default, and the brokers' answer is the release)."""
    if state.release_evidence is None:
        return _answered_release(kafka_version if declared else None, state)
    report = release_report(kafka_version, state.release_evidence)
    shown = {
        "declared": report["declared"],
        "seen": report["seen"],
        "writtenAs": report["written_as"],
        "clues": [one_line(clue, 300) for clue in report["clues"]][:20],
        "warning": one_line(report["warning"]) if report["warning"] is not None else None,
    }
    return {key: value for key, value in shown.items() if value is not None}


def _answered_release(declared: KafkaVersion | None, state: ClusterState) -> dict[str, Any] | None:
    """The release as brokers reached through the Admin protocol answer it: the line of their ApiVersions and of
    the finalized metadata.version, the newer (``brokers_line``, what a plan of an undeclared release follows);
    a declared release is what is written, with a warning where the brokers answer otherwise."""
    answered = brokers_line(state.metadata_version, state.broker_release)
    if answered is None:
        return None
    clues = []
    if state.broker_release is not None:
        clues.append(
            f"ApiVersions: the brokers speak the requests of Kafka {format_version(state.broker_release)}"
        )
    if state.metadata_version is not None:
        clues.append(f"DescribeFeatures: metadata.version {state.metadata_version} is finalized")
    shown: dict[str, Any] = {
        "seen": format_version(answered),
        "writtenAs": format_version(declared if declared is not None else answered),
        "clues": clues,
    }
    if declared is not None:
        shown["declared"] = format_version(declared)
        if answered != declared:
            shown["warning"] = (
                f"the brokers answer as Kafka {format_version(answered)}, not the {format_version(declared)} "
                "spec.kafkaVersion declares"
            )
    return shown


def unreadable_znodes(state: ClusterState) -> list[dict[str, str]]:
    """Every unreadable znode of the cluster, topics included, sorted by path, each message one bounded line."""
    found = {
        **{f"/brokers/topics/{t}": p for t, p in state.unreadable_topics.items()},
        **state.unreadable_znodes,
    }
    return [{"znode": one_line(path, 300), "problem": one_line(found[path], 500)} for path in sorted(found)]


def same_status(current: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether writing ``new`` would change nothing: None means absent, and a condition's transition time alone
    is not a change (it is carried over by ``merge_conditions`` anyway)."""
    have = current or {}
    for key, value in new.items():
        if key == "conditions":
            if _conditions_key(have.get(key)) != _conditions_key(value):
                return False
        elif have.get(key) != value and not (value is None and key not in have):
            return False
    return True


def _conditions_key(conditions: object) -> list[tuple[Any, ...]]:
    if not isinstance(conditions, list):
        return []
    return sorted(
        (c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
        for c in conditions
        if isinstance(c, Mapping)
    )
