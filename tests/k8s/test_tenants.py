"""KafkaTopics of other namespaces on a platform team's KafkaCluster, through the operator's handlers and a real
ZooKeeper: every refusal writes nothing and names its rule, quotas hold when a namespace's KafkaTopics arrive
together, a narrowed grant shrinks nothing, and a KafkaTopic its cluster does not grant holds no topic against
one it does. The admission webhook's judgement is held to the same rules on the same objects.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from k8s_world import World, kafka_cluster, kafka_topic, ready
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.k8s.kafkatopics.admission import IndexedFacts, admission_refusal, judge_review
from topic_operator.k8s.process.admission_serving import AdmissionAnswer
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = pytest.mark.timeout(60)

PLATFORM = "kafka"


def _platform_cluster(zk_chroot: ZkChroot, **spec: Any) -> dict[str, Any]:
    tenants = [
        {
            "namespaces": ["payments"],
            "topicPrefixes": ["payments."],
            "quota": {"topics": 5, "partitions": 40},
            "limits": {
                "max": {"partitions": 8, "retention.ms": 604800000},
                "allowedConfigs": ["retention.ms"],
            },
        },
        {
            "namespaceSelector": {"matchLabels": {"kto.dev/tenant": "analytics"}},
            "quota": {"topics": 3},
        },
    ]
    return kafka_cluster("main", zk_chroot.connect_string, namespace=PLATFORM, tenants=tenants, **spec)


def _topics(kafka_zk: KazooClient) -> dict[str, int]:
    return {name: len(t.partitions) for name, t in read_cluster(kafka_zk).topics.items()}


def test_a_namespace_the_cluster_does_not_grant_or_a_name_outside_its_prefixes_is_forbidden(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = _platform_cluster(zk_chroot)
    world.namespace_labels = {"clickstream": {"kto.dev/tenant": "analytics"}, "other": {}}
    granted = kafka_topic(
        "tx", cluster="kafka/main", namespace="payments", topicName="payments.tx", partitions=4
    )
    selected = kafka_topic("clicks", cluster="kafka/main", namespace="clickstream", partitions=2)
    outside = kafka_topic("stolen", cluster="kafka/main", namespace="payments", topicName="orders.stolen")
    stranger = kafka_topic("mine", cluster="kafka/main", namespace="other", partitions=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        for body in (granted, selected, outside, stranger):
            await world.topic_changed(body)

    world.run(scenario)
    assert (ready(granted)["reason"], ready(selected)["reason"]) == ("Created", "Created")
    assert ready(outside)["reason"] == "Forbidden"
    assert ready(outside)["message"] == (
        "Not authorized to access topics: [orders.stolen]: namespace payments may use topic names starting with "
        "payments. only (KafkaCluster kafka/main, spec.tenants[0].topicPrefixes); nothing is written"
    )
    assert ready(stranger)["reason"] == "Forbidden"
    assert "KafkaCluster kafka/main does not grant namespace other" in ready(stranger)["message"]
    assert _topics(kafka_zk) == {"payments.tx": 4, "clicks": 2}
    assert world.kube.events_of("stolen") == [("Warning", "Forbidden")]


def test_a_quota_holds_when_a_namespaces_kafkatopics_arrive_together(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """Eight creations from each of two namespaces at once: each namespace ends with exactly its quota of topics
    in Kafka (5 and 3), and the rest are QuotaExceeded naming the quota."""
    cluster = _platform_cluster(zk_chroot)
    world.namespace_labels = {"clickstream": {"kto.dev/tenant": "analytics"}}
    payments = [
        kafka_topic(
            f"p{i}", cluster="kafka/main", namespace="payments", topicName=f"payments.p{i}", partitions=1
        )
        for i in range(8)
    ]
    clicks = [
        kafka_topic(f"c{i}", cluster="kafka/main", namespace="clickstream", partitions=1) for i in range(8)
    ]

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await asyncio.gather(*(world.topic_changed(body) for body in [*payments, *clicks]))

    world.run(scenario)
    in_kafka = _topics(kafka_zk)
    assert len([t for t in in_kafka if t.startswith("payments.")]) == 5
    assert len([t for t in in_kafka if t.startswith("c")]) == 3
    reasons = [ready(body)["reason"] for body in [*payments, *clicks]]
    assert reasons.count("Created") == 8
    assert reasons.count("QuotaExceeded") == 8
    refused = next(body for body in payments if ready(body)["reason"] == "QuotaExceeded")
    assert "over its quota of 5 (spec.tenants[0].quota.topics)" in ready(refused)["message"]


def test_a_narrowed_grant_shrinks_nothing_and_refuses_only_a_change_that_breaks_it(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = _platform_cluster(zk_chroot)
    topic = kafka_topic(
        "tx", cluster="kafka/main", namespace="payments", topicName="payments.tx", partitions=8
    )
    too_big = kafka_topic(
        "big", cluster="kafka/main", namespace="payments", topicName="payments.big", partitions=9
    )

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(topic)
        await world.topic_changed(too_big)
        cluster["spec"]["tenants"][0]["limits"]["max"]["partitions"] = 4  # narrowed under an existing topic
        cluster["metadata"]["generation"] += 1
        await world.cluster_changed(cluster)
        await world.tick(cluster)
        await world.topic_changed(world.edit(topic, config={"retention.ms": 86400000}))  # within the limits

    world.run(scenario)
    assert ready(too_big)["reason"] == "PolicyViolation"  # judged again under the narrowed grant at once
    assert (
        "partitions 9 is above the most allowed, 4 (spec.tenants[0].limits.max.partitions)"
        in (ready(too_big)["message"])
    )
    assert ready(topic)["reason"] == "Updated"  # its 8 partitions are over the new limit, and stay
    assert _topics(kafka_zk) == {"payments.tx": 8}

    async def grow() -> None:  # a scenario of its own: each ends with the sessions closed
        await world.cluster_changed(cluster)
        await world.topic_changed(world.edit(topic, partitions=10))

    world.run(grow)
    assert ready(topic)["reason"] == "PolicyViolation"
    assert "partitions 10 is above the most allowed, 4" in ready(topic)["message"]
    assert _topics(kafka_zk) == {"payments.tx": 8}


def test_a_refusal_judged_again_at_each_drift_check_is_said_once(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """Refused creations stay unsettled, so each drift check judges them again; the status it writes must be the
    one the API server stores (its plan without null fields), or each check would write it and post an Event."""
    cluster = _platform_cluster(zk_chroot)
    big = kafka_topic(
        "big", cluster="kafka/main", namespace="payments", topicName="payments.big", partitions=12
    )

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(big)
        await world.tick(cluster)
        await world.tick(cluster)

    world.run(scenario)
    assert ready(big)["reason"] == "PolicyViolation"
    assert world.kube.events_of("big") == [("Warning", "PolicyViolation")]
    assert len([p for p in world.kube.status_patches if p[1] == "payments/big"]) == 1


def test_a_kafkatopic_its_cluster_does_not_grant_holds_no_topic_against_one_it_does(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """The older claim on ``payments.tx`` comes from a namespace the cluster does not grant: it would own the topic
    (oldest first) if it competed, and the payments team's KafkaTopic would be a Conflict."""
    cluster = _platform_cluster(zk_chroot)
    squatter = kafka_topic(
        "tx", cluster="kafka/main", namespace="other", topicName="payments.tx", partitions=1
    )
    owner = kafka_topic(
        "tx", cluster="kafka/main", namespace="payments", topicName="payments.tx", partitions=2
    )

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(squatter)
        await world.topic_changed(owner)

    world.run(scenario)
    assert (ready(squatter)["reason"], ready(owner)["reason"]) == ("Forbidden", "Created")
    assert _topics(kafka_zk) == {"payments.tx": 2}


def test_the_cluster_status_and_metrics_show_each_namespaces_usage_against_its_quota(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = _platform_cluster(zk_chroot)
    world.namespace_labels = {"clickstream": {"kto.dev/tenant": "analytics"}}
    bodies = [
        kafka_topic("a", cluster="kafka/main", namespace="payments", topicName="payments.a", partitions=3),
        kafka_topic("b", cluster="kafka/main", namespace="payments", topicName="payments.b", partitions=2),
        kafka_topic("c", cluster="kafka/main", namespace="clickstream", partitions=1),
    ]

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        for body in bodies:
            await world.topic_changed(body)
        await world.tick(cluster)

    world.run(scenario)
    assert cluster["status"]["tenants"] == [
        {"namespace": "clickstream", "topics": 1, "partitions": 1, "quota": {"topics": 3}},
        {"namespace": "payments", "topics": 2, "partitions": 5, "quota": {"topics": 5, "partitions": 40}},
    ]
    assert cluster["status"]["tenantErrors"] == []
    metrics = world.ctx.metrics
    assert metrics.value("kto_tenant_partitions", cluster="kafka/main", namespace="payments") == 5
    assert metrics.value("kto_tenant_quota_topics", cluster="kafka/main", namespace="clickstream") == 3
    assert (
        world.ctx.metrics.registry.get_sample_value(
            "kto_tenant_quota_partitions", {"cluster": "kafka/main", "namespace": "clickstream"}
        )
        is None
    )  # no partition quota there: no series


def test_a_grant_the_operator_cannot_read_grants_nothing_and_is_reported(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """What an older CRD let through: an empty selector would grant every namespace; here it grants none."""
    cluster = kafka_cluster(
        "main", zk_chroot.connect_string, namespace=PLATFORM, tenants=[{"namespaceSelector": {}}]
    )
    body = kafka_topic("t", cluster="kafka/main", namespace="payments", partitions=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(body)
        await world.tick(cluster)

    world.run(scenario)
    assert ready(cluster)["status"] == "True"  # the cluster itself keeps serving its own namespace
    assert ready(body)["reason"] == "Forbidden"
    (problem,) = cluster["status"]["tenantErrors"]
    assert problem.startswith("spec.tenants[0].namespaceSelector: {}: an empty namespaceSelector would grant")
    assert _topics(kafka_zk) == {}


def test_a_deletion_the_grant_does_not_allow_keeps_the_topic(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = _platform_cluster(zk_chroot, allow_delete=True)
    body = kafka_topic(
        "tx", cluster="kafka/main", namespace="payments", topicName="payments.tx", partitions=1
    )

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(body)
        await world.topic_deleted(world.edit(body, deletionPolicy="Delete"))

    world.run(scenario)
    assert _topics(kafka_zk) == {"payments.tx": 1}
    (event,) = [e for e in world.kube.events if e.name == "tx" and e.reason == "DeletionRefused"]
    assert (
        "deletionPolicy Delete is not allowed for namespace payments (spec.tenants[0].allowDelete"
        in event.message
    )


def test_admission_refuses_what_the_operator_would_with_the_same_words(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = _platform_cluster(zk_chroot)
    existing = [
        kafka_topic(
            f"p{i}", cluster="kafka/main", namespace="payments", topicName=f"payments.p{i}", partitions=8
        )
        for i in range(4)
    ]

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        for body in existing:
            await world.topic_changed(body)

    world.run(scenario)
    ctx = world.ctx

    def refusal(body: dict[str, Any], old: dict[str, Any] | None = None) -> str | None:
        """The leader's answer, from its indexes; a standby's, from the API server, is the same."""
        indexed = admission_refusal(IndexedFacts(ctx), body, old, body["metadata"]["namespace"])
        request = {"operation": "UPDATE" if old else "CREATE", "object": body, "oldObject": old,
                   "namespace": body["metadata"]["namespace"]}  # fmt: skip
        fetched = asyncio.run(judge_review(ctx, lambda: False, request))
        assert fetched.refusal == indexed
        assert fetched == asyncio.run(judge_review(ctx, lambda: True, request))
        return indexed

    fine = kafka_topic(
        "ok", cluster="kafka/main", namespace="payments", topicName="payments.ok", partitions=8
    )
    assert refusal(fine) is None
    assert refusal(kafka_topic("x", cluster="kafka/main", namespace="other")) == (
        "Not authorized to access topics: [x]: KafkaCluster kafka/main does not grant namespace other "
        "(spec.tenants: no entry lists it or selects its labels)"
    )
    big = kafka_topic(
        "big", cluster="kafka/main", namespace="payments", topicName="payments.big", partitions=9
    )
    assert "partitions 9 is above the most allowed, 8" in str(refusal(big))
    config = kafka_topic(
        "cfg", cluster="kafka/main", namespace="payments", topicName="payments.cfg", partitions=1,
        config={"cleanup.policy": "compact"},
    )  # fmt: skip
    assert "config cleanup.policy is not among the configs allowed (retention.ms" in str(refusal(config))
    # the quotas, over the declarations: 4 topics of 8 partitions declared; a fifth of 8 is at both quotas
    more = kafka_topic(
        "more", cluster="kafka/main", namespace="payments", topicName="payments.more", partitions=8
    )
    assert refusal(more) is None

    async def create_more() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(more)

    world.run(create_more)
    assert ready(more)["reason"] == "Created"
    sixth = kafka_topic(
        "six", cluster="kafka/main", namespace="payments", topicName="payments.six", partitions=1
    )
    assert "would take namespace payments to 6 topics on KafkaCluster kafka/main, over its quota of 5" in str(
        refusal(sixth)
    )
    assert refusal(more, more) is None  # an update of a declared topic adds nothing
    # a KafkaTopic naming a KafkaCluster that does not exist is admitted (GitOps applies in no set order),
    # with a warning naming the cluster, by the leader and by a standby alike
    missing = kafka_topic("lost", cluster="kafka/nowhere", namespace="payments")
    request = {"operation": "CREATE", "object": missing, "oldObject": None, "namespace": "payments"}
    for leading in (True, False):
        answer = asyncio.run(judge_review(ctx, lambda leading=leading: leading, request))
        assert answer == AdmissionAnswer(
            None,
            ("KafkaCluster kafka/nowhere does not exist: the KafkaTopic waits for it (ClusterNotFound)",),
        )
    assert asyncio.run(judge_review(ctx, lambda: False, {**request, "object": fine})).warnings == ()
    # an update is judged on what it changes: a config change of a topic at the partition limit passes
    old = existing[0]
    new = {**old, "spec": {**old["spec"], "config": {"retention.ms": 3600000}}}
    assert refusal(new, old) is None
    assert "retention.ms -1 (unlimited) is above the most allowed" in str(
        refusal({**old, "spec": {**old["spec"], "config": {"retention.ms": -1}}}, old)
    )
    # an update that leaves the spec alone (labels, kopf's finalizer) is never judged, even where the namespace is
    # no longer granted: refused, it would keep a KafkaTopic from being deleted
    stranger = kafka_topic("gone", cluster="kafka/main", namespace="other")
    relabelled = {**stranger, "metadata": {**stranger["metadata"], "finalizers": ["kto.dev/finalizer"]}}
    assert refusal(relabelled) is not None
    assert refusal(relabelled, stranger) is None
    deleting = {**stranger, "metadata": {**stranger["metadata"], "deletionTimestamp": "2025-01-01T00:00:00Z"}}
    assert refusal({**deleting, "spec": {**stranger["spec"], "partitions": 9}}, stranger) is None
    # the cluster's own namespace, and a cluster not known, are never judged
    assert refusal(kafka_topic("own", cluster="main", namespace=PLATFORM, partitions=100)) is None
    assert refusal(kafka_topic("y", cluster="elsewhere/main", namespace="payments")) is None
