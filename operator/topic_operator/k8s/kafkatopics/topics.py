"""KafkaTopic reconciliation, shared by the operator's KafkaTopic work (``topic_work``), kopf's delete handler
and the KafkaCluster drift timer.

A reconcile is a fixed sequence of refusals before any work, then one trip through the engine:
paused? -> valid (CRD schema and Kafka rules, via the manifest loader)? -> its KafkaCluster known, and granting
this namespace and name (``tenants.rules``)? -> owner of the topic? -> cluster connected? -> the cluster's batch (plan,
judged against the grant's limits and quota, + apply) -> status and Events from the engine's result. The outcome is a
``Verdict``: the status to write, the Events to post, and whether to retry later. Nothing here imports kopf:
``TopicWork`` and the drift timer turn a Verdict into a status patch, Events and a retry.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kazoo.exceptions import KazooException

from topic_operator.access.interface import ClusterAccessError, ClusterMismatchError
from topic_operator.k8s.bodies import mapping
from topic_operator.k8s.census import CensusTally
from topic_operator.k8s.conditions import READY, Condition, Reason, merge_conditions
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.kafkaclusters.batching import BatcherClosedError, QueueFullError
from topic_operator.k8s.kafkaclusters.registry import ClusterHandle, TopicReport, TopicRequest
from topic_operator.k8s.kafkatopics.deletion import release_overdue
from topic_operator.k8s.kafkatopics.ownership import (
    ClaimsByTopic,
    ClusterKey,
    TopicClaim,
    claim_of,
    creation_time,
    owner_of,
)
from topic_operator.k8s.process.time_slices import TimeSlices, in_slices
from topic_operator.k8s.records import PAUSED_ANNOTATION, DeletionVerdict, EventSpec, Verdict, is_paused
from topic_operator.k8s.status import (
    adopted_ready,
    drift_rows,
    plan_items,
    ready_for_outcome,
    recovered_creation_ready,
    same_status,
    summarize_changes,
    topic_status,
)
from topic_operator.kafka.errors import TopicAuthorizationError
from topic_operator.manifests.loader import load_objects
from topic_operator.model import ApplyMode, ClusterState, TopicSpec, TopicState
from topic_operator.plan import TopicPlan, TopicStatus
from topic_operator.reconcile import TopicOutcome
from topic_operator.tenants.grants import cluster_reference
from topic_operator.tenants.rules import Tenant, forbidden

_CLUSTER_FAILURES = (
    ClusterAccessError,
    ClusterMismatchError,
    KazooException,
    BatcherClosedError,
)
"""What a batch raises when its cluster (ZooKeeper or the brokers) failed under it: the KafkaTopic is not at fault,
and is retried."""

__all__ = [
    "check_drift",
    "delete_topic",
    "describes_current_spec",
    "reconcile_topic",
    "settled_at_resume",
    "validate_topic",
]

logger = logging.getLogger(__name__)

_SETTLED: Final = {Reason.CREATED.value, Reason.UPDATED.value, Reason.IN_SYNC.value, Reason.ADOPTED.value}
_MAY_HAVE_WRITTEN: Final = {*_SETTLED, Reason.CLUSTER_UNAVAILABLE.value}
"""Ready reasons after which this KafkaTopic may have written its topic itself: never an adoption then."""
_ADOPTING_OUTCOMES: Final = (TopicOutcome.APPLIED, TopicOutcome.UNCHANGED, TopicOutcome.PLANNED)
_RETRIED_OUTCOMES: Final = {TopicOutcome.CONFLICT, TopicOutcome.NOT_WRITTEN, TopicOutcome.UNKNOWN}
_FINAL_REFUSALS: Final = {Reason.INVALID.value, Reason.NOT_SUPPORTED.value, Reason.PLANNED.value}

IdentityOf = Callable[[ClusterKey], str | None]


def settled_at_resume(body: Mapping[str, Any]) -> bool:
    """Whether a resume at start-up has nothing to do: the status already says Kafka matched this very spec
    (Ready=True, Created/Adopted/Updated/InSync, at this generation; a paused topic or one in mode Plan never says
    so), and the KafkaTopic is not being deleted. kopf lists every object when the operator starts; planning
    each such one again would repeat the KafkaCluster's drift check, which also runs at start and reverts what
    changed in Kafka while the operator was away. Spec changes made meanwhile come as updates, not resumes."""
    return _settled_ready(body) is not None and not mapping(body.get("metadata")).get("deletionTimestamp")


def describes_current_spec(body: Mapping[str, Any], *, paused: bool) -> bool:
    """Whether the status describes the KafkaTopic as it is: this generation of its spec, and paused exactly
    when the annotation says so (a pause or its end changes no generation). A KafkaTopic whose status does not
    is work for a reconcile; one whose status does changed nothing the operator acts on (a label, an
    annotation, the echo of a status)."""
    return _current(body) and paused == (_ready(body).get("reason") == Reason.PAUSED.value)


def _names(body: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(namespace, name, cluster, topic name)."""
    metadata, spec = mapping(body.get("metadata")), mapping(body.get("spec"))
    name = str(metadata.get("name", ""))
    return (
        str(metadata.get("namespace", "")),
        name,
        str(spec.get("cluster", "")),
        str(spec.get("topicName", name)),
    )


def _version(body: Mapping[str, Any] | None) -> tuple[object, object]:
    """What identifies a version of an object's spec: its uid and generation (the API server bumps the
    generation on every spec change)."""
    metadata = (body or {}).get("metadata") or {}
    return metadata.get("uid"), metadata.get("generation")


def validate_topic(ctx: OperatorContext, body: Mapping[str, Any]) -> tuple[TopicSpec | None, list[str]]:
    """The spec, or the reasons it is invalid (field path: rule), checked against its KafkaCluster's Kafka
    version and topic prefixes when that KafkaCluster is known.

    Validation (the CRD schema, the CEL rules, Kafka's rules) depends only on the two specs, so its result is
    kept with the (KafkaTopic, KafkaCluster) spec versions it was computed for: the echo of a status write, a
    resume or a drift check does not validate the same spec again. One entry per KafkaTopic, its latest: an
    older version is never asked for again."""
    namespace, name, cluster, _ = _names(body)
    cluster_body = ctx.cluster_bodies.get(cluster_reference(namespace, cluster))
    uid, generation = _version(body)
    version = (generation, *_version(cluster_body))
    known = None if uid is None or generation is None else ctx.validations.get(uid)
    if known is not None and known[0] == version:
        return known[1], list(known[2])
    objects = [cluster_body, body] if cluster_body is not None else [body]
    manifests = load_objects(objects, origin=f"{namespace}/{name}", limits=ctx.manifest_limits)
    errors = [
        f"{e.field_path}: {e.rule}" if e.field_path else e.rule
        for e in manifests.errors
        if e.kind in ("KafkaTopic", "")
    ]
    spec = manifests.topics[0] if manifests.topics and not errors else None
    if uid is not None and generation is not None:
        ctx.validations.put(
            uid, (version, spec, tuple(errors))
        )  # one entry per KafkaTopic: its latest version
    return spec, errors


def _simple(
    body: Mapping[str, Any],
    now: datetime.datetime,
    reason: Reason,
    message: str,
    *,
    result: str,
    event_type: str = "Warning",
    retry: str | None = None,
) -> Verdict:
    """A verdict reached before the engine ran: the Ready condition changes, the Kafka-side fields stay."""
    _, _, _, topic = _names(body)
    previous = body.get("status") or {}
    status = {
        "observedGeneration": (body.get("metadata") or {}).get("generation"),
        "topicName": topic,
        "conditions": merge_conditions(
            previous.get("conditions"), Condition(READY, False, reason, message), now
        ),
    }
    return Verdict(status, result, (EventSpec(event_type, reason.value, message),), retry)


def _from_report(body: Mapping[str, Any], report: TopicReport, now: datetime.datetime) -> Verdict:
    _, _, _, topic = _names(body)
    result = report.result
    if result is None:
        message = f"the engine reported nothing for topic {topic}; retrying"
        return _simple(body, now, Reason.CLUSTER_UNAVAILABLE, message, result="missing", retry=message)
    ready = ready_for_outcome(result.outcome, result.plan, result.errors, exists=report.state is not None)
    if result.outcome is TopicOutcome.UNCHANGED and result.plan.reassigning is None:
        ready = _settled_ready(body) or ready
    adopting = _adopting(body, result.plan, report) and result.outcome in _ADOPTING_OUTCOMES
    recovered = adopting and _created_since_declared(body, report)
    if recovered and ready.status:
        adopting = False
        ready = recovered_creation_ready(result.plan)
    elif adopting:
        ready = adopted_ready(ready, result.plan)
    remaining = report.remaining if report.remaining is not None else result.plan
    status = topic_status(
        generation=(body.get("metadata") or {}).get("generation"),
        topic=topic,
        # A plan of adoption observes the topic without taking it over: its fields stay unset, so that the
        # first apply is still said to adopt it (status.plan shows what it would change).
        state=None if adopting and result.outcome is TopicOutcome.PLANNED else report.state,
        ready=ready,
        drift=remaining.changes,
        plan=plan_items(remaining, pending=True),
        previous=body.get("status"),
        now=now,
    )
    events: tuple[EventSpec, ...] = ()
    # A recovered creation posts no Event: the lost attempt's Event may have landed (Events and the status are
    # written apart), and an Event said twice is worse than one lost, which Kubernetes allows anyway.
    if result.outcome is not TopicOutcome.UNCHANGED:
        normal = ready.status or result.outcome is TopicOutcome.PLANNED or ready.reason is Reason.REASSIGNING
        kind = "Normal" if normal else "Warning"
        events = (EventSpec(kind, ready.reason.value, ready.message),)
    retry = ready.message if result.outcome in _RETRIED_OUTCOMES else None
    return Verdict(status, result.outcome.value, events, retry)


async def _handle_for(ctx: OperatorContext, key: ClusterKey) -> ClusterHandle | None:
    handle = ctx.clusters.get(key)
    if handle is None:
        handle = await ctx.clusters.wait_for(key, ctx.settings.cluster_wait)
    return handle if handle is not None and handle.alive else None


def _owner_or_none(
    ctx: OperatorContext, body: Mapping[str, Any], claims: ClaimsByTopic, identity_of: IdentityOf
) -> TopicClaim | None:
    """The other KafkaTopic owning this one's topic, or None when this one owns it. Claims their KafkaCluster
    does not grant compete with none (``ownership.competitors``)."""
    claim = claim_of(body)
    if claim is None:
        return None
    owner = owner_of(claim, claims.get(claim.topic, ()), identity_of, lambda c: _refusal(ctx, c) is None)
    return None if owner == claim else owner


def _refusal(ctx: OperatorContext, claim: TopicClaim) -> TopicAuthorizationError | None:
    """Why the claim's KafkaCluster does not grant it (its namespace, or its topic name), or None: it does, or
    the KafkaCluster is in the claim's own namespace, or not known (then nothing is granted or refused yet)."""
    key = claim.cluster_key
    if key[0] == claim.namespace:
        return None
    tenancy = ctx.tenancy_of(key)
    if tenancy is None:
        return None
    return forbidden(claim.topic, claim.namespace, ctx.labels_of(claim.namespace), tenancy, "/".join(key))


def _refusal_of(ctx: OperatorContext, body: Mapping[str, Any]) -> TopicAuthorizationError | None:
    """``_refusal`` of the claim a KafkaTopic body makes (None: it makes none, and is invalid anyway)."""
    claim = claim_of(body)
    return _refusal(ctx, claim) if claim is not None else None


def _tenant(ctx: OperatorContext, namespace: str, key: ClusterKey) -> Tenant | None:
    """The KafkaTopic's namespace as a tenant of KafkaCluster ``key`` of another namespace, with the topics its
    usage counts (None: the cluster's own namespace, never limited)."""
    tenancy = ctx.tenancy_of(key)
    if key[0] == namespace or tenancy is None:
        return None
    grant = tenancy.grant_for(namespace, ctx.labels_of(namespace))
    if grant is None:
        return None
    # The namespace's topic names only where a quota counts them: a copy per change, of the namespace's size.
    topics = ctx.claims.tenant_topics(key, namespace) if grant.quota.limited else frozenset()
    return Tenant(namespace, "/".join(key), grant, topics)


async def reconcile_topic(
    ctx: OperatorContext, body: Mapping[str, Any], *, claims: ClaimsByTopic, identity_of: IdentityOf
) -> Verdict:
    """Make the topic match ``body`` (a KafkaTopic), or say why not."""
    now = ctx.clock()
    namespace, name, cluster, topic = _names(body)
    label = f"{namespace}/{cluster}"
    if is_paused(body):
        message = f'Reconciliation is paused (annotation {PAUSED_ANNOTATION}: "true"); Kafka is not touched'
        return _simple(body, now, Reason.PAUSED, message, result="paused", event_type="Normal")
    spec, errors = validate_topic(ctx, body)
    if spec is None:
        return _simple(body, now, Reason.INVALID, "; ".join(errors) or "invalid KafkaTopic", result="invalid")
    key = cluster_reference(namespace, cluster)
    refused = _refused_before_reading(ctx, body, key, now)
    if refused is not None:
        return refused
    owner = _owner_or_none(ctx, body, claims, identity_of)
    if owner is not None:
        message = (
            f"Topic {topic} of cluster {cluster} is owned by KafkaTopic {owner.ref}, which is older; "
            "this KafkaTopic changes nothing while that one exists"
        )
        return _simple(body, now, Reason.CONFLICT, message, result="conflict")
    handle = await _handle_for(ctx, key)
    if handle is None:
        message = f"KafkaCluster {cluster} is not connected; retrying"
        return _simple(
            body, now, Reason.CLUSTER_UNAVAILABLE, message, result="cluster_unavailable", retry=message
        )
    try:
        request = TopicRequest(spec, tenant=_tenant(ctx, namespace, key))
        report = await asyncio.wait_for(
            handle.batcher.submit((namespace, name), request), ctx.settings.stuck_after
        )
    except TimeoutError:
        message = f"KafkaCluster {cluster}: no answer within {ctx.settings.stuck_after:g} s (a batch is stuck); retrying"
        return _simple(
            body, now, Reason.CLUSTER_UNAVAILABLE, message, result="cluster_unavailable", retry=message
        )
    except QueueFullError as error:
        ctx.metrics.queue_overflows.labels(label).inc()
        return Verdict({}, "deferred", retry=str(error))
    except _CLUSTER_FAILURES as error:
        ctx.metrics.count_cluster_error(label, "connection_lost")
        message = f"KafkaCluster {cluster} failed during the reconcile ({error}); retrying"
        return _simple(
            body, now, Reason.CLUSTER_UNAVAILABLE, message, result="cluster_unavailable", retry=message
        )
    return _from_report(body, report, now)


def _refused_before_reading(
    ctx: OperatorContext, body: Mapping[str, Any], key: ClusterKey, now: datetime.datetime
) -> Verdict | None:
    """ClusterNotFound, or Forbidden by the KafkaCluster's grants: decided from the declaration alone, before
    anything is read, and not retried (the KafkaCluster's arrival, and each of its drift checks, reconcile the
    KafkaTopics left unsettled)."""
    namespace, _, cluster, topic = _names(body)
    if key not in ctx.cluster_bodies:
        where = f"namespace {key[0]}" + ("" if key[0] == namespace else f" (spec.cluster: {cluster})")
        message = f"No KafkaCluster {key[1]} in {where}; topic {topic} waits for it, nothing is written"
        return _simple(body, now, Reason.CLUSTER_NOT_FOUND, message, result="cluster_not_found")
    refusal = _refusal_of(ctx, body)
    if refusal is not None:
        return _simple(body, now, Reason.FORBIDDEN, f"{refusal}; nothing is written", result="forbidden")
    return None


async def delete_topic(
    ctx: OperatorContext, body: Mapping[str, Any], *, claims: ClaimsByTopic, identity_of: IdentityOf
) -> DeletionVerdict:
    """The end of a KafkaTopic with ``deletionPolicy: Delete``: delete the Kafka topic if the cluster allows it,
    and always let the KafkaTopic go in the end (see ``deletion``)."""
    now = ctx.clock()
    namespace, name, cluster, topic = _names(body)

    def kept(why: str, event_type: str = "Normal") -> DeletionVerdict:
        return DeletionVerdict(
            True, "retained", (EventSpec(event_type, "Retained", f"Kafka topic {topic} kept: {why}"),)
        )

    if is_paused(body):
        return kept(f'the KafkaTopic is paused ({PAUSED_ANNOTATION}: "true")')
    spec, errors = validate_topic(ctx, body)
    if spec is None:
        return kept("the KafkaTopic is invalid: " + "; ".join(errors), "Warning")
    key = cluster_reference(namespace, cluster)
    refusal = _refusal_of(ctx, body)
    if refusal is not None:
        return kept(str(refusal), "Warning")
    owner = _owner_or_none(ctx, body, claims, identity_of)
    if owner is not None:
        return kept(f"it is owned by KafkaTopic {owner.ref}")
    handle = await _handle_for(ctx, key)
    failure = f"KafkaCluster {cluster} is not connected"
    if handle is not None:
        try:
            report = await asyncio.wait_for(
                handle.batcher.submit(
                    (namespace, name), TopicRequest(spec, deleting=True, tenant=_tenant(ctx, namespace, key))
                ),
                ctx.settings.stuck_after,
            )
        except TimeoutError:
            failure = f"KafkaCluster {cluster} gave no answer within {ctx.settings.stuck_after:g} s (a batch is stuck)"
        except QueueFullError as error:
            return DeletionVerdict(False, "deferred", retry=str(error))
        except _CLUSTER_FAILURES as error:
            failure = f"KafkaCluster {cluster} failed during the deletion ({error})"
        else:
            return _deletion_outcome(report, topic)
    timeout = ctx.settings.deletion_timeout
    if release_overdue(body, now, timeout):
        message = (
            f"{failure} for more than {timeout:g} s since the deletion was requested: finalizer released, "
            f"Kafka topic {topic} left in place"
        )
        return DeletionVerdict(True, "released", (EventSpec("Warning", "FinalizerReleased", message),))
    return DeletionVerdict(False, "cluster_unavailable", retry=f"{failure}; retrying")


def _deletion_outcome(report: TopicReport, topic: str) -> DeletionVerdict:
    result = report.result
    if result is None or result.outcome is TopicOutcome.CONFLICT:
        return DeletionVerdict(
            False, "conflict", retry=f"topic {topic} kept changing during its deletion; retrying"
        )
    plan = result.plan
    match result.outcome:
        case TopicOutcome.APPLIED:
            message = f"Kafka topic {topic} marked for deletion (the controller deletes it)"
            return DeletionVerdict(True, "deleted", (EventSpec("Normal", "Deleted", message),))
        case TopicOutcome.PLANNED:
            message = f"mode: Plan: Kafka topic {topic} would be deleted; nothing was done"
            return DeletionVerdict(True, "planned", (EventSpec("Normal", "Planned", message),))
        case TopicOutcome.REJECTED:
            why = "; ".join(e.message for e in plan.rejections) or "refused"
            message = f"Kafka topic {topic} kept: {why}"
            return DeletionVerdict(True, "retained", (EventSpec("Warning", "DeletionRefused", message),))
    gone = "already marked for deletion" if plan.status is TopicStatus.UNCHANGED else "not deleted"
    return DeletionVerdict(
        True, "deleted", (EventSpec("Normal", "Deleted", f"Kafka topic {topic} is {gone}"),)
    )


def _ready(body: Mapping[str, Any]) -> Mapping[str, Any]:
    for condition in (body.get("status") or {}).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == READY:
            return condition
    return {}


def _adopting(body: Mapping[str, Any], topic_plan: TopicPlan, report: TopicReport) -> bool:
    """Whether this reconcile takes over a topic that existed before: this KafkaTopic has never observed its topic
    (its status has no partition count, which every reconcile that reached Kafka records, and which a pause, a
    refusal or a conflict leaves in place), the engine did not create it now, and no earlier attempt of this
    KafkaTopic may have: after Created, Updated or InSync (a write whose re-read an outage cut short leaves no
    partition count) or ClusterUnavailable (a batch cut short, its outcome not written or unknown), the topic
    found may be this KafkaTopic's own creation."""
    status = body.get("status") or {}
    return (
        report.state is not None
        and topic_plan.status is not TopicStatus.CREATE
        and status.get("partitions") is None
        and _ready(body).get("reason") not in _MAY_HAVE_WRITTEN
    )


def _created_since_declared(body: Mapping[str, Any], report: TopicReport) -> bool:
    """Whether this KafkaTopic is finding its own creation rather than adopting a topic made by someone else: it
    has no Ready condition at all (no attempt was ever recorded: not a conflict with an older declaration, not a
    pause or a refusal, during which someone else may have made the topic), and the topic znode appeared after the
    KafkaTopic was declared. So an attempt wrote the topic, and its status and Event were lost with the API server
    or the leader Lease. The creationTimestamp has whole seconds and the two clocks are the API server's and
    ZooKeeper's: a topic made by hand in the same second, or a skew between the clocks, only changes which of
    Created or Adopted is said."""
    if _ready(body):
        return False
    created_ms = report.state.created_ms if report.state is not None else None
    declared = creation_time((body.get("metadata") or {}).get("creationTimestamp"))
    return created_ms is not None and declared is not None and created_ms >= int(declared.timestamp()) * 1000


def _settled_ready(body: Mapping[str, Any]) -> Condition | None:
    """The Ready condition of a spec already reconciled (Created, Updated or InSync at this generation), kept by a
    reconcile that changes nothing: a drift check or a retry reconciles a settled KafkaTopic again, and rewriting
    each "Updated" as "InSync" would write 10,000 statuses to say nothing new."""
    ready = _ready(body)
    if _current(body) and ready.get("status") == "True" and ready.get("reason") in _SETTLED:
        return Condition(READY, True, Reason(ready["reason"]), str(ready.get("message", "")))
    return None


def _current(body: Mapping[str, Any]) -> bool:
    """The status describes the current spec."""
    status = body.get("status") or {}
    return status.get("observedGeneration") == (body.get("metadata") or {}).get("generation")


async def check_drift(
    ctx: OperatorContext,
    handle: ClusterHandle,
    kept: Sequence[TopicClaim],
    *,
    claims: ClaimsByTopic,
    identity_of: IdentityOf,
    state: ClusterState | None = None,
) -> tuple[int, ClusterState]:
    """The drift timer's work for one cluster: plan every owned, unpaused KafkaTopic of it against the watched
    view (one plan), report out-of-band changes, revert them through the engine (forward-only: the planner never
    decreases partitions), and bring back any status that is not settled (an unreachable cluster, a conflict
    whose owner went away). ``kept``: the claims of the cluster's KafkaTopics, each with its body as last seen.
    ``state``: the cluster as the round just read it, else it is read here.
    Returns how many topics drifted, and the cluster as the check read it (the round reports the tenants' usage
    from it: through the brokers, a read is the whole cluster).

    A body is decoded from its claim where a walk needs it and dropped after, never all at once: at 50,000
    KafkaTopics the decoded bodies together would be a few hundred MB more at every check. Every walk gives the
    event loop back as it goes (``time_slices``).

    Each check that completes is one observation of ``kto_drift_check_duration_seconds``; one that fails counts
    nothing, so a rate of 0 warns that a cluster's checks stopped completing. A completed check also counts the
    cluster's KafkaTopics by Ready condition (``census``), with the statuses it has just written."""
    started = time.monotonic()
    if state is None:  # else the round's own read, moments ago
        state = await handle.run(handle.state)
    owned: list[tuple[TopicClaim, TopicSpec]] = []
    again: list[Mapping[str, Any]] = []
    slices = TimeSlices()
    async for claim in in_slices(kept, slices):
        body: Mapping[str, Any] = claim.body
        if is_paused(body) or not _current(body):
            continue  # a spec not reconciled yet is TopicWork's to handle (and retry): never raced here
        if _owner_or_none(ctx, body, claims, identity_of) is not None:
            if _ready(body).get("reason") != Reason.CONFLICT.value:
                again.append(body)  # a topic now owned by an older KafkaTopic
            continue
        spec, _ = validate_topic(ctx, body)
        if spec is None:
            continue  # Invalid until its spec changes, and then TopicWork handles it
        owned.append((claim, spec))
    # The plan is pure over the state just read, so it is made off the cluster's thread: there it held up the
    # batches of KafkaTopics created or changed meanwhile (a plan of 50,000 topics takes a second or two on a
    # busy machine, and a new KafkaTopic queued behind it was Ready 2.5 s after its creation).
    plan = await asyncio.to_thread(handle.reconciler.plan, [s for _, s in owned], state=state)
    drifted = 0
    reverts: set[int] = set()  # ids of the bodies in ``again`` that revert drift
    async for claim, spec in in_slices(owned, slices):
        body = claim.body
        topic_plan = plan.for_topic(spec.name)
        ready = _ready(body)
        settled = _current(body) and ready.get("status") == "True" and ready.get("reason") in _SETTLED
        changes = topic_plan.changes if topic_plan is not None else ()
        if settled and changes:
            drifted += 1
            reverting = ctx.settings.revert_drift and spec.mode is ApplyMode.APPLY
            rows = drift_rows(changes)
            if reverting or rows != (body.get("status") or {}).get("drift"):  # report each new drift once
                ctx.metrics.drift_detected.labels(handle.label).inc()
                message = f"Topic {spec.name} was changed outside kafka-topic-operator: {summarize_changes(changes)}"
                message += "; reverting" if reverting else "; not reverted"
                ctx.events.post(body, type="Warning", reason="DriftDetected", message=message)
            if (
                reverting or spec.mode is ApplyMode.PLAN
            ):  # Plan mode: status.plan shows what a revert would do
                again.append(body)
                if reverting:
                    reverts.add(id(body))
            elif rows != (body.get("status") or {}).get("drift"):
                await _patch(ctx, body, {"drift": rows, "driftCount": len(rows)})
        elif not settled and ready.get("reason") not in _FINAL_REFUSALS:
            again.append(body)  # left unsettled: its cluster was down, or the owner it lost to is gone
        elif _current(body) and ready.get("reason") == Reason.INVALID.value and _refusal_lifted(topic_plan):
            again.append(body)  # refused against the cluster as it was (too few brokers up): no longer
        elif not changes and (body.get("status") or {}).get("driftCount"):
            again.append(body)  # drift that went away (reverted by hand): clear it
        elif settled and not changes and _topic_id_unreported(body, state.topics.get(spec.name)):
            again.append(body)  # the controller gave the topic its id after the status was written
    ctx.metrics.drifted_topics.labels(handle.label).set(drifted)
    again = [body for body in again if not _left_to_topic_work(ctx, body)]
    verdicts = await asyncio.gather(
        *(reconcile_topic(ctx, body, claims=claims, identity_of=identity_of) for body in again)
    )
    written: dict[tuple[str, str], Mapping[str, Any]] = {}
    for body, verdict in zip(again, verdicts, strict=True):
        ctx.metrics.reconciles.labels(handle.label, verdict.result).inc()
        if id(body) in reverts and verdict.result == TopicOutcome.APPLIED.value:
            ctx.metrics.drift_reverted.labels(handle.label).inc()
        if verdict.status and not same_status(body.get("status"), verdict.status):
            await _patch(ctx, body, verdict.status)
            namespace, name, _, _ = _names(body)
            written[namespace, name] = verdict.status
            for event in verdict.events:
                ctx.events.post(body, type=event.type, reason=event.reason, message=event.message)
    tally = CensusTally()
    async for claim in in_slices(kept, slices):
        tally.add(written.get((claim.namespace, claim.name)) or claim.body.get("status"))
    ctx.metrics.record_census(handle.label, tally.census())
    ctx.metrics.drift_check_duration.labels(handle.label).observe(time.monotonic() - started)
    return drifted, state


def _left_to_topic_work(ctx: OperatorContext, body: Mapping[str, Any]) -> bool:
    """Whether the KafkaTopic is already ``TopicWork``'s: a reconcile of it running or queued, or a retry
    pending, which is then run at once. Reconciled here as well, the two would share one batch's result and
    each post its Event: one creation said twice."""
    work = ctx.topic_work
    if work is None:
        return False
    namespace, name, _, _ = _names(body)
    return work.busy_with(namespace, name) or work.retry_now(namespace, name)


def _refusal_lifted(topic_plan: TopicPlan | None) -> bool:
    """A valid declaration the engine refused against the cluster (a replication factor above the brokers up at
    the time, a broker of its assignment not registered) that the cluster as it is now takes: the refusal was
    the cluster's state, not the declaration's, so the topic is reconciled again. A declaration itself invalid
    never gets here (it is refused before planning, and only a new spec brings it back)."""
    return topic_plan is not None and not topic_plan.rejections and bool(topic_plan.actions)


def _topic_id_unreported(body: Mapping[str, Any], topic: TopicState | None) -> bool:
    """The topic has an id (Kafka 2.8+: the controller adds it to the topic znode after the creation) that the
    status does not show yet."""
    topic_id = topic.topic_id if topic is not None else None
    return topic_id is not None and (body.get("status") or {}).get("topicId") != topic_id


async def _patch(ctx: OperatorContext, body: Mapping[str, Any], status: Mapping[str, Any]) -> None:
    namespace, name, _, _ = _names(body)
    try:
        await ctx.patch_status("kafkatopics", namespace, name, status)
    except (
        Exception
    ) as error:  # one topic's failed PATCH (deleted meanwhile, API hiccup) must not stop the rest
        logger.warning("status of KafkaTopic %s/%s not written: %s", namespace, name, error)
