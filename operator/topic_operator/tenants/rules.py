"""Judging a namespace's topics against the KafkaCluster's grant to it: the same rules for the operator, its
admission webhook and ``kto``.

Three refusals, each naming the rule, the limit and the value:
- **Forbidden** (Kafka's TopicAuthorizationException): the KafkaCluster does not grant the namespace, or the
  topic name is outside the grant's prefixes. It depends on the declaration alone, so it is decided before
  anything is read, and such a declaration never competes for a topic with a granted one.
- **PolicyViolation** (Kafka's PolicyViolationException, as a broker's create-topic policy would answer): a topic
  outside the grant's per-topic limits. A new topic is judged whole; a change is judged on the fields it changes,
  so a grant narrowed under existing topics shrinks and deletes nothing, and refuses only the changes that break
  it.
- **QuotaExceeded** (a PolicyViolationException too): the namespace would hold more topics, or partitions in all,
  than its quota. Usage is counted in Kafka, over the topics the namespace's KafkaTopics declare, and every
  creation and partition increase of one plan is added in order, so the writes of one batch never take a
  namespace over its quota, and one batch runs at a time per cluster.

Pure: plain data in, errors out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from topic_operator.kafka.errors import KafkaError, PolicyViolationError, TopicAuthorizationError
from topic_operator.model import ClusterState, DeletionPolicy, TopicSpec
from topic_operator.plan import AddPartitions, CreateTopic, Plan, TopicStatus
from topic_operator.tenants.grants import UNLIMITED_WHEN_NEGATIVE, Grant, Quota, Tenancy

__all__ = [
    "Declared",
    "QuotaExceededError",
    "Tenant",
    "TenantPolicyViolationError",
    "TenantUsage",
    "Usage",
    "changed_fields",
    "forbidden",
    "grant_admitting",
    "judge_plan",
    "limit_violation",
    "over_quota",
    "plan_judge",
    "tenant_usage",
    "usage_of",
]


class TenantPolicyViolationError(PolicyViolationError):
    """A topic outside the per-topic limits of its namespace's grant."""


class QuotaExceededError(TenantPolicyViolationError):
    """A creation or a partition increase that would take its namespace over its quota."""


@dataclass(frozen=True, slots=True)
class Usage:
    topics: int = 0
    partitions: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.topics + other.topics, self.partitions + other.partitions)


@dataclass(frozen=True, slots=True)
class Tenant:
    """A KafkaTopic's namespace as a tenant of one KafkaCluster, with what judging its plan needs."""

    namespace: str
    cluster: str
    """The KafkaCluster as ``namespace/name``, for messages."""
    grant: Grant
    topics: frozenset[str] = field(default=frozenset(), repr=False)
    """The topic names the namespace's KafkaTopics declare on this cluster: its usage is theirs, in Kafka."""


@dataclass(frozen=True, slots=True)
class Declared:
    """What per-topic limits look at, from a TopicSpec or from a KafkaTopic's raw spec (admission)."""

    partitions: int | None
    replicas: int | None
    config: Mapping[str, str]
    deletes: bool
    left_alone: frozenset[str] = frozenset()
    """The config keys the KafkaTopic leaves to other tools (``spec.unmanagedConfig``)."""

    @classmethod
    def of_spec(cls, spec: TopicSpec) -> Declared:
        return cls(
            spec.partitions,
            spec.replicas,
            spec.config,
            spec.deletion_policy is DeletionPolicy.DELETE,
            spec.unmanaged_config,
        )

    @classmethod
    def of_body(cls, spec: Mapping[str, Any]) -> Declared:
        partitions, replicas = spec.get("partitions"), spec.get("replicas")
        assignment = spec.get("replicaAssignment")
        if isinstance(assignment, Mapping) and assignment:
            partitions = partitions if _whole(partitions) else len(assignment)
            first = next(iter(assignment.values()))
            replicas = replicas if _whole(replicas) else (len(first) if isinstance(first, list) else None)
        config, unmanaged = spec.get("config"), spec.get("unmanagedConfig")
        return cls(
            partitions if _whole(partitions) else None,
            replicas if _whole(replicas) else None,
            {str(k): _text(v) for k, v in config.items()} if isinstance(config, Mapping) else {},
            spec.get("deletionPolicy") == DeletionPolicy.DELETE.value,
            frozenset(str(k) for k in unmanaged) if isinstance(unmanaged, list) else frozenset(),
        )


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def forbidden(
    topic: str,
    namespace: str,
    labels: Mapping[str, str] | None,
    tenancy: Tenancy,
    cluster: str,
) -> TopicAuthorizationError | None:
    """Why namespace ``namespace`` (labels ``labels``; None: unknown) may not declare ``topic`` on the KafkaCluster
    ``cluster`` (``namespace/name``) whose grants are ``tenancy``; None when it may."""
    admitted = grant_admitting(topic, namespace, labels, tenancy, cluster)
    return admitted if isinstance(admitted, TopicAuthorizationError) else None


def grant_admitting(
    topic: str,
    namespace: str,
    labels: Mapping[str, str] | None,
    tenancy: Tenancy,
    cluster: str,
) -> Grant | TopicAuthorizationError:
    """The grant under which ``namespace`` declares ``topic`` (its limits and quota then apply), or why it may not
    (``forbidden``'s refusal)."""
    grant = tenancy.grant_for(namespace, labels)
    refused = f"Not authorized to access topics: [{topic}]"
    if grant is None:
        return TopicAuthorizationError(
            f"{refused}: KafkaCluster {cluster} does not grant namespace {namespace} "
            "(spec.tenants: no entry lists it or selects its labels)",
            field="cluster",
        )
    if not grant.allows_name(topic):
        return TopicAuthorizationError(
            f"{refused}: namespace {namespace} may use topic names starting with "
            f"{', '.join(grant.topic_prefixes)} only (KafkaCluster {cluster}, {grant.path}.topicPrefixes)",
            field="topicName",
        )
    return grant


def limit_violation(
    topic: str, declared: Declared, grant: Grant, cluster: str, fields: Collection[str] | None = None
) -> TenantPolicyViolationError | None:
    """What of ``declared`` breaks the per-topic limits of ``grant``, judged on ``fields`` only (``partitions``,
    ``replicas``, ``config.<key>``, ``deletionPolicy``; None: all of it, as for a new topic). None: nothing."""
    if grant.unlimited:
        return None

    def judged(name: str) -> bool:
        return fields is None or name in fields

    limits = grant.limits
    problems: list[tuple[str, str]] = []  # (field, what is wrong with it)
    for name, value in (("partitions", declared.partitions), ("replicas", declared.replicas)):
        if value is not None and judged(name):
            problems += [(name, p) for p in _bounds(name, value, limits.minimum, limits.maximum, grant)]
    for key, text in sorted(declared.config.items()):
        field = f"config.{key}"
        if not judged(field):
            continue
        if limits.allowed_configs is not None and key not in limits.allowed_configs:
            allowed = ", ".join(sorted(limits.allowed_configs)) or "none"
            why = f"config {key} is not among the configs allowed ({allowed}: {grant.path}.limits.allowedConfigs)"
            problems.append((field, why))
            continue
        if key in limits.minimum or key in limits.maximum:
            try:
                number = int(text)
            except ValueError:
                continue  # not a number: Kafka's own rules refuse it, or the key is not numeric
            bounds = _bounds(f"config {key}", number, limits.minimum, limits.maximum, grant, key=key)
            problems += [(field, p) for p in bounds]
    for key in sorted(declared.left_alone & (set(limits.minimum) | set(limits.maximum))):
        # judged with any change: leaving a key to other tools must not take it out of the grant's reach
        why = f"config {key} is limited ({grant.path}.limits), so it cannot be left alone (unmanagedConfig)"
        problems.append(("unmanagedConfig", why))
    if declared.deletes and judged("deletionPolicy") and not grant.allow_delete:
        problems.append(
            ("deletionPolicy", f"deletionPolicy Delete is not allowed ({grant.path}.allowDelete is false)")
        )
    if not problems:
        return None
    return TenantPolicyViolationError(
        f"Topic {topic} breaks the limits KafkaCluster {cluster} sets for its namespace: "
        + "; ".join(why for _, why in problems),
        field=problems[0][0],
    )


def _bounds(
    what: str,
    value: int,
    minimum: Mapping[str, int],
    maximum: Mapping[str, int],
    grant: Grant,
    *,
    key: str | None = None,
) -> list[str]:
    name = key or what
    unlimited = name in UNLIMITED_WHEN_NEGATIVE and value < 0
    problems = []
    if name in maximum and (unlimited or value > maximum[name]):
        shown = f"{value} (unlimited)" if unlimited else str(value)
        problems.append(
            f"{what} {shown} is above the most allowed, {maximum[name]} ({grant.path}.limits.max.{name})"
        )
    if name in minimum and not unlimited and value < minimum[name]:
        problems.append(
            f"{what} {value} is below the least allowed, {minimum[name]} ({grant.path}.limits.min.{name})"
        )
    return problems


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
    """The limited fields an update of a KafkaTopic's spec changes (``Declared`` of each, compared)."""
    before, after = Declared.of_body(old), Declared.of_body(new)
    changed = {name for name in ("partitions", "replicas") if getattr(before, name) != getattr(after, name)}
    changed |= {f"config.{k}" for k in after.config if before.config.get(k) != after.config[k]}
    if after.deletes and not before.deletes:
        changed.add("deletionPolicy")
    return changed


def usage_of(topics: Iterable[str], state: ClusterState) -> Usage:
    """A namespace's usage in Kafka: the topics of ``topics`` that exist (not marked for deletion), with their
    partitions."""
    count = partitions = 0
    for name in topics:
        topic = state.topics.get(name)
        if topic is not None and name not in state.marked_for_deletion and not topic.marked_for_deletion:
            count += 1
            partitions += len(topic.partitions)
    return Usage(count, partitions)


@dataclass(frozen=True, slots=True)
class TenantUsage:
    """One namespace's usage of a KafkaCluster against its quota: a row of the KafkaCluster's ``status.tenants``
    and of the tenant metrics."""

    namespace: str
    usage: Usage
    quota: Quota

    def to_status(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "namespace": self.namespace,
            "topics": self.usage.topics,
            "partitions": self.usage.partitions,
        }
        quota = {
            k: v
            for k, v in (("topics", self.quota.topics), ("partitions", self.quota.partitions))
            if v is not None
        }
        if quota:
            row["quota"] = quota
        return row


def tenant_usage(
    tenancy: Tenancy,
    declared: Mapping[str, Collection[str]],
    labels: Callable[[str], Mapping[str, str] | None],
    state: ClusterState,
) -> list[TenantUsage]:
    """Each namespace's usage, by name: ``declared`` holds, for every other namespace with KafkaTopics on the
    cluster, the topic names they declare; a namespace the grants no longer match shows no quota."""
    rows = []
    for namespace in sorted(declared):
        if namespace == tenancy.home:
            continue
        grant = tenancy.grant_for(namespace, labels(namespace))
        rows.append(
            TenantUsage(namespace, usage_of(declared[namespace], state), grant.quota if grant else Quota())
        )
    return rows


def judge_plan(
    plan: Plan, state: ClusterState, tenants: Mapping[str, Tenant], specs: Mapping[str, TopicSpec]
) -> dict[str, KafkaError]:
    """The topics of ``plan`` (planned against ``state``) that their namespace's grant refuses, by topic name.

    ``tenants`` says, by topic name, which namespace declared each topic of another namespace than the
    KafkaCluster's (the others are not judged), in the order their changes arrived: usage is added in that order,
    so the later changes are the ones over a quota. Only topics with something to write are judged."""
    refusals: dict[str, KafkaError] = {}
    usage: dict[str, Usage] = {}
    for name, tenant in tenants.items():
        topic_plan = plan.for_topic(name)
        spec = specs.get(name)
        if tenant.grant.unlimited or topic_plan is None or not topic_plan.actions:
            continue
        if topic_plan.status is TopicStatus.DELETE:
            if not tenant.grant.allow_delete:
                refusals[name] = TenantPolicyViolationError(
                    f"Topic {name} is not deleted: deletionPolicy Delete is not allowed for namespace "
                    f"{tenant.namespace} ({tenant.grant.path}.allowDelete is false on KafkaCluster {tenant.cluster})",
                    field="deletionPolicy",
                )
            continue
        fields = None if topic_plan.status is TopicStatus.CREATE else {c.field for c in topic_plan.changes}
        if spec is not None:
            violation = limit_violation(name, Declared.of_spec(spec), tenant.grant, tenant.cluster, fields)
            if violation is not None:
                refusals[name] = violation
                continue
        quota = tenant.grant.quota
        if not quota.limited:
            continue
        used = usage.get(tenant.namespace)
        if used is None:
            used = usage_of(tenant.topics, state)
        added = _added(topic_plan.actions)
        if not (added.topics or added.partitions):
            continue  # adds nothing: a namespace over a narrowed quota may still change its topics' configs
        over = over_quota(name, tenant, used + added, growing=added)
        if over is not None:
            refusals[name] = over
            usage[tenant.namespace] = used
        else:
            usage[tenant.namespace] = used + added
    return refusals


def plan_judge(
    tenants: Mapping[str, Tenant], specs: Iterable[TopicSpec]
) -> Callable[[Plan, ClusterState], dict[str, KafkaError]] | None:
    """``judge_plan`` over ``tenants`` and ``specs``, as the ``Reconciler``'s judge of a plan and the state it was
    made against (None: no topic of another namespace, nothing to judge)."""
    if not tenants:
        return None
    by_name = {spec.name: spec for spec in specs}
    return lambda plan, state: judge_plan(plan, state, tenants, by_name)


def _added(actions: Iterable[object]) -> Usage:
    added = Usage()
    for action in actions:
        if isinstance(action, CreateTopic):
            added += Usage(1, len(action.assignment))
        elif isinstance(action, AddPartitions):
            added += Usage(0, len(action.new_partitions))
    return added


def over_quota(
    topic: str, tenant: Tenant, after: Usage, *, growing: Usage | None = None
) -> QuotaExceededError | None:
    """The refusal of ``topic`` when it would take its namespace's usage to ``after``, over its quota. With
    ``growing`` (what the change adds), only what it adds is held to the quota: a partition increase of a
    namespace already over a narrowed topic quota is judged on partitions alone."""
    quota, path = tenant.grant.quota, tenant.grant.path
    for what, value, limit, adds in (
        ("topics", after.topics, quota.topics, growing is None or growing.topics > 0),
        ("partitions", after.partitions, quota.partitions, growing is None or growing.partitions > 0),
    ):
        if limit is not None and adds and value > limit:
            return QuotaExceededError(
                f"Topic {topic} would take namespace {tenant.namespace} to {value} {what} on KafkaCluster "
                f"{tenant.cluster}, over its quota of {limit} ({path}.quota.{what})",
                field="partitions" if what == "partitions" else "topicName",
            )
    return None
