"""A namespace's topics judged against the KafkaCluster's grant to it: ``tenancy.forbidden``, ``limit_violation``
and ``judge_plan`` over real plans (``topic_operator.plan.plan`` against a ``ClusterState``).

What is proven, and why it matters:
- Forbidden: a namespace no entry grants, or a name outside the grant's prefixes, is refused naming the rule;
  the KafkaCluster's own namespace never is.
- Limits: partitions, replicas and numeric configs against min and max (the bound itself allowed), a config
  outside allowedConfigs, deletionPolicy Delete without allowDelete; retention's -1 ("unlimited") is above any
  max and never below a min; judged on the changed fields only, so a topic over a narrowed limit
  (grandfathered) keeps working and only a change that breaks the limit is refused.
- Quotas: usage is counted in Kafka over the namespace's declared topics (a topic marked for deletion is not
  usage), creations and partition increases of one plan are added in the order of ``tenants``, and exactly the
  ones over the quota are refused, naming ``spec.tenants[i].quota.<what>``. Unchanged topics are never judged;
  DELETE without allowDelete is refused.
- ``Reconciler.plan(judge=...)`` turns every refusal into a REJECTED topic plan with its changes and no action,
  and ``apply`` writes only what was not refused.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Unpack

import pytest

from harness.states import cluster_spec, cluster_state, existing, spec
from topic_operator.access.interface import Backend, Outcome, Patience, ReadRequest, WriteResult
from topic_operator.kafka.errors import KafkaError, TopicAuthorizationError
from topic_operator.model import ClusterState, DeletionPolicy, TopicSpec
from topic_operator.plan import Action, AddPartitions, CreateTopic, Plan, TopicStatus, plan
from topic_operator.reconcile import Reconciler, TopicOutcome
from topic_operator.tenants.grants import Grant, Tenancy, read_tenancy
from topic_operator.tenants.rules import (
    Declared,
    QuotaExceededError,
    Tenant,
    TenantPolicyViolationError,
    changed_fields,
    forbidden,
    judge_plan,
    limit_violation,
    plan_judge,
)

HOME = "kafka"
CLUSTER = "kafka/main"


def tenancy_of(*entries: Mapping[str, Any]) -> Tenancy:
    tenancy = read_tenancy(HOME, list(entries))
    assert tenancy.problems == ()
    return tenancy


def grant_of(**entry: Any) -> Grant:
    """The grant of ``payments`` that ``entry`` (a ``spec.tenants`` item) says."""
    grant = tenancy_of({"namespaces": ["payments"], **entry}).grant_for("payments", None)
    assert grant is not None
    return grant


def assignment(partitions: int, first: int = 0) -> dict[int, tuple[int, ...]]:
    """``partitions`` partitions of three replicas each, on the six brokers of ``cluster_state``."""
    return {p: tuple((first + p + r) % 6 for r in range(3)) for p in range(partitions)}


def declared(
    partitions: int | None = 3, replicas: int | None = 3, deletes: bool = False, **config: str
) -> Declared:
    return Declared(partitions, replicas, {k.replace("_", "."): v for k, v in config.items()}, deletes)


# -- forbidden ------------------------------------------------------------------------------------------------------


def test_a_namespace_no_entry_grants_is_not_authorized_on_the_cluster() -> None:
    tenancy = tenancy_of({"namespaces": ["payments"]}, {"namespaceSelector": {"matchLabels": {"team": "a"}}})
    refusal = forbidden("orders", "other", {"team": "b"}, tenancy, CLUSTER)
    assert isinstance(refusal, TopicAuthorizationError)
    assert refusal.field == "cluster"
    assert str(refusal) == (
        "Not authorized to access topics: [orders]: KafkaCluster kafka/main does not grant namespace other "
        "(spec.tenants: no entry lists it or selects its labels)"
    )
    assert forbidden("orders", "other", {"team": "a"}, tenancy, CLUSTER) is None
    assert (
        forbidden("orders", "other", None, tenancy, CLUSTER) is not None
    )  # labels unknown: only names grant


def test_a_name_outside_the_grants_prefixes_is_not_authorized() -> None:
    tenancy = tenancy_of({"namespaces": ["payments"], "topicPrefixes": ["payments.", "billing."]})
    refusal = forbidden("orders", "payments", None, tenancy, CLUSTER)
    assert isinstance(refusal, TopicAuthorizationError)
    assert refusal.field == "topicName"
    assert str(refusal) == (
        "Not authorized to access topics: [orders]: namespace payments may use topic names starting with "
        "payments., billing. only (KafkaCluster kafka/main, spec.tenants[0].topicPrefixes)"
    )
    assert forbidden("payments.orders", "payments", None, tenancy, CLUSTER) is None
    assert forbidden("billing.orders", "payments", None, tenancy, CLUSTER) is None


def test_the_home_namespace_is_never_forbidden() -> None:
    tenancy = tenancy_of({"namespaces": [HOME], "topicPrefixes": ["only."]})
    assert forbidden("anything", HOME, None, tenancy, CLUSTER) is None


# -- limit_violation ------------------------------------------------------------------------------------------------

LIMITED = grant_of(
    limits={
        "min": {"partitions": 2, "replicas": 3, "min.insync.replicas": 2, "retention.ms": 3600000},
        "max": {"partitions": 12, "replicas": 3, "retention.ms": 604800000},
    }
)


@pytest.mark.parametrize(
    ("topic", "field", "problem"),
    [
        (
            declared(partitions=13),
            "partitions",
            "partitions 13 is above the most allowed, 12 (spec.tenants[0].limits.max.partitions)",
        ),
        (
            declared(partitions=1),
            "partitions",
            "partitions 1 is below the least allowed, 2 (spec.tenants[0].limits.min.partitions)",
        ),
        (
            declared(replicas=4),
            "replicas",
            "replicas 4 is above the most allowed, 3 (spec.tenants[0].limits.max.replicas)",
        ),
        (
            declared(replicas=2),
            "replicas",
            "replicas 2 is below the least allowed, 3 (spec.tenants[0].limits.min.replicas)",
        ),
        (
            declared(retention_ms="604800001"),
            "config.retention.ms",
            "config retention.ms 604800001 is above the most allowed, 604800000 "
            "(spec.tenants[0].limits.max.retention.ms)",
        ),
        (
            declared(retention_ms="-1"),
            "config.retention.ms",
            "config retention.ms -1 (unlimited) is above the most allowed, 604800000 "
            "(spec.tenants[0].limits.max.retention.ms)",
        ),
        (
            declared(retention_ms="59999"),
            "config.retention.ms",
            "config retention.ms 59999 is below the least allowed, 3600000 (spec.tenants[0].limits.min.retention.ms)",
        ),
        (
            declared(min_insync_replicas="1"),
            "config.min.insync.replicas",
            "config min.insync.replicas 1 is below the least allowed, 2 "
            "(spec.tenants[0].limits.min.min.insync.replicas)",
        ),
    ],
)
def test_each_bound_refuses_a_value_beyond_it_naming_the_limit(
    topic: Declared, field: str, problem: str
) -> None:
    refusal = limit_violation("payments.orders", topic, LIMITED, CLUSTER)
    assert isinstance(refusal, TenantPolicyViolationError)
    assert refusal.field == field
    assert str(refusal) == (
        f"Topic payments.orders breaks the limits KafkaCluster kafka/main sets for its namespace: {problem}"
    )


def test_a_value_at_a_bound_is_allowed() -> None:
    for topic in (
        declared(partitions=12, replicas=3),
        declared(partitions=2),
        declared(retention_ms="604800000", min_insync_replicas="2"),
        declared(retention_ms="3600000"),
    ):
        assert limit_violation("payments.orders", topic, LIMITED, CLUSTER) is None


def test_unlimited_retention_is_never_below_a_minimum() -> None:
    only_a_minimum = grant_of(limits={"min": {"retention.ms": 3600000, "retention.bytes": 1024}})
    topic = declared(retention_ms="-1", retention_bytes="-1")
    assert limit_violation("payments.orders", topic, only_a_minimum, CLUSTER) is None
    # -1 means "no limit" only to the retention configs: elsewhere it is the number -1.
    other = grant_of(limits={"min": {"segment.ms": 1}})
    assert limit_violation("payments.orders", declared(segment_ms="-1"), other, CLUSTER) is not None


def test_a_value_that_is_not_a_number_is_left_to_kafkas_own_rules() -> None:
    assert limit_violation("payments.orders", declared(retention_ms="7d"), LIMITED, CLUSTER) is None


def test_a_config_outside_allowed_configs_is_refused_naming_the_list() -> None:
    grant = grant_of(limits={"allowedConfigs": ["retention.ms", "cleanup.policy"]})
    refusal = limit_violation("payments.orders", declared(segment_bytes="1048576"), grant, CLUSTER)
    assert refusal is not None
    assert refusal.field == "config.segment.bytes"
    assert str(refusal).endswith(
        "config segment.bytes is not among the configs allowed (cleanup.policy, retention.ms: "
        "spec.tenants[0].limits.allowedConfigs)"
    )
    assert limit_violation("payments.orders", declared(retention_ms="1"), grant, CLUSTER) is None
    nothing = grant_of(limits={"allowedConfigs": []})
    refusal = limit_violation("payments.orders", declared(retention_ms="1"), nothing, CLUSTER)
    assert refusal is not None
    assert "(none: spec.tenants[0].limits.allowedConfigs)" in str(refusal)
    assert limit_violation("payments.orders", declared(), nothing, CLUSTER) is None


def test_a_limited_key_cannot_be_left_alone_and_the_grant_still_judges_it() -> None:
    """unmanagedConfig leaves a key to other tools; a key the grant limits stays the grant's, on any change."""
    leaving = Declared(3, 3, {}, False, frozenset({"retention.ms", "segment.ms"}))
    refusal = limit_violation("payments.orders", leaving, LIMITED, CLUSTER, fields={"partitions"})
    assert refusal is not None
    assert refusal.field == "unmanagedConfig"
    assert str(refusal).endswith(
        "config retention.ms is limited (spec.tenants[0].limits), so it cannot be left alone (unmanagedConfig)"
    )
    # a key the grant does not limit may be left alone
    assert (
        limit_violation(
            "payments.orders", Declared(3, 3, {}, False, frozenset({"segment.ms"})), LIMITED, CLUSTER
        )
        is None
    )
    # from a KafkaTopic's spec, as admission reads it
    body = {"partitions": 3, "replicas": 3, "unmanagedConfig": ["min.insync.replicas"]}
    assert limit_violation("payments.orders", Declared.of_body(body), LIMITED, CLUSTER) is not None


def test_deletion_policy_delete_needs_allow_delete() -> None:
    refusal = limit_violation("payments.orders", declared(deletes=True), grant_of(), CLUSTER)
    assert refusal is not None
    assert refusal.field == "deletionPolicy"
    assert str(refusal).endswith(
        "deletionPolicy Delete is not allowed (spec.tenants[0].allowDelete is false)"
    )
    assert (
        limit_violation("payments.orders", declared(deletes=True), grant_of(allowDelete=True), CLUSTER)
        is None
    )


def test_every_broken_limit_is_said_and_the_first_names_the_field() -> None:
    refusal = limit_violation("payments.orders", declared(13, 4, True, retention_ms="-1"), LIMITED, CLUSTER)
    assert refusal is not None
    assert refusal.field == "partitions"
    message = str(refusal)
    for part in ("partitions 13", "replicas 4", "retention.ms -1 (unlimited)", "deletionPolicy Delete"):
        assert part in message
    assert message.count("; ") == 3


def test_the_unlimited_home_grant_refuses_nothing() -> None:
    home = tenancy_of().grant_for(HOME, None)
    assert home is not None
    assert limit_violation("anything", declared(10_000, 9, True, retention_ms="-1"), home, CLUSTER) is None


def test_only_the_fields_given_are_judged() -> None:
    grandfathered = declared(partitions=24, retention_ms="86400000")
    assert limit_violation("payments.old", grandfathered, LIMITED, CLUSTER) is not None  # as a new topic
    assert limit_violation("payments.old", grandfathered, LIMITED, CLUSTER, {"config.retention.ms"}) is None
    assert limit_violation("payments.old", grandfathered, LIMITED, CLUSTER, set()) is None
    refusal = limit_violation("payments.old", grandfathered, LIMITED, CLUSTER, {"partitions"})
    assert refusal is not None
    assert refusal.field == "partitions"
    too_long = declared(partitions=24, retention_ms="-1")
    refusal = limit_violation("payments.old", too_long, LIMITED, CLUSTER, {"config.retention.ms"})
    assert refusal is not None
    assert refusal.field == "config.retention.ms"
    assert "partitions" not in str(refusal)
    deletes = declared(partitions=24, deletes=True)
    assert limit_violation("payments.old", deletes, LIMITED, CLUSTER, {"replicas"}) is None
    assert limit_violation("payments.old", deletes, LIMITED, CLUSTER, {"deletionPolicy"}) is not None


def test_declared_of_a_raw_spec_reads_what_limits_look_at() -> None:
    body = {
        "partitions": 3,
        "replicas": 2,
        "config": {"retention.ms": 1000, "preallocate": True},
        "deletionPolicy": "Delete",
    }
    assert Declared.of_body(body) == Declared(3, 2, {"retention.ms": "1000", "preallocate": "true"}, True)
    by_assignment = {"replicaAssignment": {"0": [1, 2, 3], "1": [2, 3, 1]}}
    assert Declared.of_body(by_assignment) == Declared(2, 3, {}, False)
    assert Declared.of_body({"partitions": "3", "replicas": True, "config": "x"}) == Declared(
        None, None, {}, False
    )
    assert Declared.of_spec(spec("t", 4, 2, {"a": "b"}, deletion=DeletionPolicy.DELETE)) == Declared(
        4, 2, {"a": "b"}, True
    )


def test_changed_fields_are_the_limited_fields_an_update_changes() -> None:
    old = {"partitions": 3, "replicas": 3, "config": {"retention.ms": "1000", "cleanup.policy": "delete"}}
    assert changed_fields(old, old) == set()
    new = {"partitions": 6, "replicas": 3, "config": {"retention.ms": "2000"}, "deletionPolicy": "Delete"}
    assert changed_fields(old, new) == {"partitions", "config.retention.ms", "deletionPolicy"}
    assert changed_fields({**new, "partitions": 3}, {**old, "deletionPolicy": "Retain"}) == {
        "config.retention.ms",
        "config.cleanup.policy",
    }


# -- judge_plan over real plans -----------------------------------------------------------------------------------


def payments(
    grant: Grant, declared_topics: Collection[str], order: Sequence[str] | None = None
) -> dict[str, Tenant]:
    """Every topic of ``order`` (default: ``declared_topics``) as declared by ``payments`` under ``grant``, in that
    order: what the loader and the operator give ``judge_plan``."""
    tenant = Tenant("payments", CLUSTER, grant, frozenset(declared_topics))
    return dict.fromkeys(order if order is not None else declared_topics, tenant)


def judged(
    specs: Sequence[TopicSpec],
    state: ClusterState,
    tenants: Mapping[str, Tenant],
    *,
    deleting: Sequence[TopicSpec] = (),
    allow_delete: bool = False,
) -> tuple[Plan, dict[str, KafkaError]]:
    made = plan(specs, state, cluster_spec(allow_delete=allow_delete), deleting=deleting)
    return made, judge_plan(made, state, tenants, {s.name: s for s in [*deleting, *specs]})


def status_of(made: Plan, topic: str) -> TopicStatus:
    topic_plan = made.for_topic(topic)
    assert topic_plan is not None
    return topic_plan.status


def test_eight_creations_against_a_quota_of_five_refuse_exactly_the_last_three_in_tenants_order() -> None:
    names = [f"payments.{letter}" for letter in "hgfedcba"]  # the arrival order: not the plan's sorted order
    specs = [spec(name, 1) for name in names]
    made, refusals = judged(specs, cluster_state(), payments(grant_of(quota={"topics": 5}), names))
    assert all(status_of(made, name) is TopicStatus.CREATE for name in names)
    assert sorted(refusals) == ["payments.a", "payments.b", "payments.c"]
    for name, refusal in refusals.items():
        assert isinstance(refusal, QuotaExceededError)
        assert refusal.field == "topicName"
        assert str(refusal) == (
            f"Topic {name} would take namespace payments to 6 topics on KafkaCluster kafka/main, over its quota "
            "of 5 (spec.tenants[0].quota.topics)"
        )


def test_a_quota_exactly_used_refuses_nothing() -> None:
    names = [f"payments.{n}" for n in range(5)]
    _, refusals = judged(
        [spec(n, 1) for n in names], cluster_state(), payments(grant_of(quota={"topics": 5}), names)
    )
    assert refusals == {}


def test_partition_increases_count_against_the_partition_quota_in_order() -> None:
    state = cluster_state(existing("payments.a", assignment(4)), existing("payments.b", assignment(4, 1)))
    grant = grant_of(quota={"partitions": 10})
    specs = [spec("payments.b", 5), spec("payments.a", 6)]  # 8 used; b +1 arrives first, then a +2
    made, refusals = judged(specs, state, payments(grant, ["payments.b", "payments.a"]))
    assert all(isinstance(a, AddPartitions) for a in made.actions)
    assert sorted(refusals) == ["payments.a"]
    refusal = refusals["payments.a"]
    assert isinstance(refusal, QuotaExceededError)
    assert refusal.field == "partitions"
    assert str(refusal) == (
        "Topic payments.a would take namespace payments to 11 partitions on KafkaCluster kafka/main, over its "
        "quota of 10 (spec.tenants[0].quota.partitions)"
    )
    # In the other order a (+2) fits exactly and b (+1) is the one over.
    _, refusals = judged(specs, state, payments(grant, ["payments.a", "payments.b"]))
    assert sorted(refusals) == ["payments.b"]


def test_a_creation_counts_its_partitions_too() -> None:
    grant = grant_of(quota={"topics": 10, "partitions": 6})
    _, refusals = judged(
        [spec("payments.a", 4), spec("payments.b", 3), spec("payments.c", 2)],
        cluster_state(),
        payments(grant, ["payments.a", "payments.b", "payments.c"]),
    )
    # a: 4; b would take it to 7 (refused, adds nothing); c: 6.
    assert sorted(refusals) == ["payments.b"]
    assert "to 7 partitions" in str(refusals["payments.b"])


def test_existing_declared_topics_count_toward_usage_and_undeclared_ones_do_not() -> None:
    state = cluster_state(
        existing("payments.a", assignment(1)),
        existing("payments.b", assignment(1)),
        existing("someone.elses", assignment(1)),
    )
    grant = grant_of(quota={"topics": 3})
    declared_topics = ["payments.a", "payments.b", "payments.new", "payments.newer"]
    specs = [spec(name, 1) for name in declared_topics]
    _, refusals = judged(specs, state, payments(grant, declared_topics))
    assert sorted(refusals) == ["payments.newer"]
    assert "to 4 topics" in str(refusals["payments.newer"])


def test_a_topic_marked_for_deletion_is_not_usage() -> None:
    state = cluster_state(
        existing("payments.a", assignment(1)), existing("payments.going", assignment(1), marked=True)
    )
    grant = grant_of(quota={"topics": 2})
    declared_topics = ["payments.a", "payments.going", "payments.new"]
    specs = [spec("payments.a", 1), spec("payments.new", 1)]
    _, refusals = judged(specs, state, payments(grant, declared_topics, ["payments.a", "payments.new"]))
    assert refusals == {}
    # Counted once it is not marked: the same plan is then over the quota.
    live = cluster_state(existing("payments.a", assignment(1)), existing("payments.going", assignment(1)))
    _, refusals = judged(specs, live, payments(grant, declared_topics, ["payments.a", "payments.new"]))
    assert sorted(refusals) == ["payments.new"]


def test_unchanged_topics_are_never_judged() -> None:
    # Over every limit and the quota (grandfathered), but nothing to write: no refusal.
    state = cluster_state(
        existing("payments.big", assignment(24), {"retention.ms": "-1"}),
        existing("payments.other", assignment(1)),
        existing("orders", assignment(1)),
    )
    grant = grant_of(
        topicPrefixes=["payments."],
        quota={"topics": 1, "partitions": 1},
        limits={"max": {"partitions": 12, "retention.ms": 1000}},
    )
    specs = [spec("payments.big", 24, 3, {"retention.ms": "-1"}), spec("payments.other", 1)]
    made, refusals = judged(specs, state, payments(grant, ["payments.big", "payments.other"]))
    assert {t.status for t in made.topics} == {TopicStatus.UNCHANGED}
    assert refusals == {}


def test_a_creation_outside_the_limits_is_refused_as_a_policy_violation_and_uses_no_quota() -> None:
    grant = grant_of(quota={"topics": 1}, limits={"max": {"partitions": 12}})
    _, refusals = judged(
        [spec("payments.big", 24), spec("payments.small", 1)],
        cluster_state(),
        payments(grant, ["payments.big", "payments.small"]),
    )
    assert sorted(refusals) == ["payments.big"]
    refusal = refusals["payments.big"]
    assert type(refusal) is TenantPolicyViolationError
    assert refusal.field == "partitions"
    assert "partitions 24 is above the most allowed, 12" in str(refusal)


def test_a_grandfathered_topic_may_change_what_its_limits_allow_but_not_grow_beyond_them() -> None:
    state = cluster_state(existing("payments.old", assignment(24), {"retention.ms": "86400000"}))
    grant = grant_of(limits={"max": {"partitions": 12, "retention.ms": 604800000}})
    tenants = payments(grant, ["payments.old"])
    config_only = spec("payments.old", 24, 3, {"retention.ms": "172800000"})
    made, refusals = judged([config_only], state, tenants)
    assert status_of(made, "payments.old") is TopicStatus.CHANGE
    assert refusals == {}
    _, refusals = judged([spec("payments.old", 30, 3, {"retention.ms": "86400000"})], state, tenants)
    assert refusals["payments.old"].field == "partitions"
    _, refusals = judged([spec("payments.old", 24, 3, {"retention.ms": "-1"})], state, tenants)
    assert refusals["payments.old"].field == "config.retention.ms"


def test_deleting_a_topic_needs_allow_delete_on_the_grant() -> None:
    state = cluster_state(existing("payments.old", assignment(1)))
    removed = spec("payments.old", 1, deletion=DeletionPolicy.DELETE)
    made, refusals = judged(
        [], state, payments(grant_of(), ["payments.old"]), deleting=[removed], allow_delete=True
    )
    assert status_of(made, "payments.old") is TopicStatus.DELETE
    refusal = refusals["payments.old"]
    assert type(refusal) is TenantPolicyViolationError
    assert refusal.field == "deletionPolicy"
    assert str(refusal) == (
        "Topic payments.old is not deleted: deletionPolicy Delete is not allowed for namespace payments "
        "(spec.tenants[0].allowDelete is false on KafkaCluster kafka/main)"
    )
    allowed = payments(grant_of(allowDelete=True, quota={"topics": 0}), ["payments.old"])
    _, refusals = judged([], state, allowed, deleting=[removed], allow_delete=True)
    assert refusals == {}


def test_the_home_namespace_and_undeclared_tenants_are_not_judged() -> None:
    home = tenancy_of().grant_for(HOME, None)
    assert home is not None
    names = [f"t{n}" for n in range(3)]
    _, refusals = judged(
        [spec(n, 100) for n in names], cluster_state(), {n: Tenant(HOME, CLUSTER, home) for n in names}
    )
    assert refusals == {}
    # A topic of the plan with no tenant (the KafkaCluster's own namespace's) is not judged either.
    _, refusals = judged([spec("orders", 100)], cluster_state(), payments(grant_of(quota={"topics": 0}), []))
    assert refusals == {}


def test_a_change_that_adds_nothing_is_not_refused_by_a_quota_already_exceeded() -> None:
    state = cluster_state(existing("payments.a", assignment(1)), existing("payments.b", assignment(1)))
    grant = grant_of(quota={"topics": 1})  # narrowed under two existing topics
    specs = [spec("payments.a", 1, 3, {"retention.ms": "1000"}), spec("payments.b", 1)]
    _, refusals = judged(specs, state, payments(grant, ["payments.a", "payments.b"]))
    assert refusals == {}


# -- the Reconciler -----------------------------------------------------------------------------------------------


class RecordingStore:
    """A store that holds ``state`` and records what it is asked to write (every write applies)."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.written: list[Action] = []

    @property
    def backend(self) -> Backend:
        return Backend.ZOOKEEPER

    def read_cluster(self, **request: Unpack[ReadRequest]) -> ClusterState:
        return self.state

    def validate(self, actions: Sequence[Action]) -> dict[str, KafkaError]:
        return {}

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        self.written.extend(actions)
        return [WriteResult(action, Outcome.APPLIED) for action in actions]


def test_the_reconciler_turns_refusals_into_rejected_topics_without_actions_and_writes_only_the_rest() -> (
    None
):
    names = ["payments.c", "payments.b", "payments.a"]
    specs = [spec(name, 2) for name in names]
    state = cluster_state()
    tenants = payments(grant_of(quota={"topics": 2}), names)
    by_name = {s.name: s for s in specs}

    def judge(made: Plan, against: ClusterState) -> Mapping[str, KafkaError]:
        assert against is state
        return judge_plan(made, against, tenants, by_name)

    store = RecordingStore(state)
    reconciler = Reconciler(store, cluster_spec())
    judged_plan = reconciler.plan(specs, state=state, judge=judge)
    refused = judged_plan.for_topic("payments.a")
    assert refused is not None
    assert refused.status is TopicStatus.REJECTED
    assert refused.actions == ()
    assert [c.field for c in refused.changes] == ["partitions", "replicas"]  # the reviewer still sees them
    [rejection] = refused.rejections
    assert isinstance(rejection, QuotaExceededError)
    assert "spec.tenants[0].quota.topics" in str(rejection)
    assert [t.status for t in judged_plan.topics if t.topic != "payments.a"] == [TopicStatus.CREATE] * 2
    assert store.written == []  # planning writes nothing

    report = reconciler.apply(specs, state=state, judge=judge)
    assert {r.topic: r.outcome for r in report.results} == {
        "payments.a": TopicOutcome.REJECTED,
        "payments.b": TopicOutcome.APPLIED,
        "payments.c": TopicOutcome.APPLIED,
    }
    assert sorted(a.topic for a in store.written) == ["payments.b", "payments.c"]
    assert all(isinstance(a, CreateTopic) for a in store.written)


def test_without_a_judge_the_reconciler_plans_as_before() -> None:
    specs = [spec(f"payments.{n}", 2) for n in range(3)]
    store = RecordingStore(cluster_state())
    made = Reconciler(store, cluster_spec()).plan(specs, state=store.state)
    assert [t.status for t in made.topics] == [TopicStatus.CREATE] * 3


def test_a_plan_made_beforehand_is_applied_as_planning_again_would_apply_it() -> None:
    """``kto apply`` passes the preview it showed as ``planned``: the report and the writes are those of an
    apply that plans again, judged or not; a plan without the state it was made against is refused."""
    names = ["payments.c", "payments.b", "payments.a"]
    specs = [spec(name, 2) for name in names]
    tenants = payments(grant_of(quota={"topics": 2}), names)
    for judge in (None, plan_judge(tenants, specs)):
        state = cluster_state()
        again, reused = RecordingStore(state), RecordingStore(state)
        expected = Reconciler(again, cluster_spec()).apply(specs, state=state, judge=judge)
        preview = Reconciler(reused, cluster_spec()).plan(specs, state=state, judge=judge)
        got = Reconciler(reused, cluster_spec()).apply(specs, state=state, judge=judge, planned=preview)
        assert got == expected
        assert reused.written == again.written
    with pytest.raises(ValueError, match="with the state it was made against"):
        Reconciler(RecordingStore(cluster_state()), cluster_spec()).apply(specs, planned=preview)
