"""The admission policy on the real kube-apiserver, with no operator running: the API server itself refuses a
KafkaTopic outside its KafkaCluster's grants or topic prefixes, with the message the operator gives for the same
declaration (computed here by the operator's own code: ``tenants.rules.grant_admitting`` and the planner).

The policy and its binding are the plain manifests' (``manifests/admission-policy/``), bound to this test's
platform namespace; both are removed afterwards, since the API server is shared.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from harness.kto_objects import KTO_API, kafka_topic, remove_kto_objects
from harness.kube_client import KubeApiError, KubeClient
from harness.server_binaries import ROOT
from harness.states import brokers
from harness.tenants import Namespaces
from topic_operator.model import ClusterSpec, ClusterState, TopicSpec
from topic_operator.plan import plan_topic
from topic_operator.tenants.grants import read_tenancy
from topic_operator.tenants.rules import grant_admitting

pytestmark = pytest.mark.timeout(120)

ADMISSION = "admissionregistration.k8s.io/v1"
POLICY = ROOT / "manifests" / "admission-policy" / "policy.yaml"
GRANTS: list[dict[str, Any]] = [
    {"namespaceSelector": {"matchLabels": {"tier": "gold"}}, "topicPrefixes": ["gold."]},
    {
        "namespaceSelector": {
            "matchExpressions": [
                {"key": "tier", "operator": "NotIn", "values": ["gold", "banned"]},
                {"key": "kafka", "operator": "Exists"},
            ]
        },
        "topicPrefixes": ["shared.", "misc."],
    },
    {"namespaceSelector": {"matchExpressions": [{"key": "kafka", "operator": "DoesNotExist"},
                                                                 {"key": "tier", "operator": "In", "values": ["bronze"]}]}},
]  # fmt: skip
ALLOWED_PREFIXES = ["gold.", "shared.", "own.", "bronze."]
NAMESPACE_LABELS = {
    "gold": {"tier": "gold"},
    "silver": {"tier": "silver", "kafka": "yes"},
    "banned": {"tier": "banned", "kafka": "yes"},
    "bronze": {"tier": "bronze"},
    "none": {},
}


@pytest.fixture
def policy(kube: KubeClient) -> Iterator[Namespaces]:
    """The manifests' policy, under a name of this test's own, bound to its platform namespace; removed after."""
    names = Namespaces.new()
    suffix = uuid.uuid4().hex[:6]
    policy_document, binding = yaml.safe_load_all(POLICY.read_text())
    policy_document["metadata"]["name"] = f"kto-{suffix}"
    binding["metadata"]["name"] = f"kto-{suffix}"
    binding["spec"]["policyName"] = f"kto-{suffix}"
    binding["spec"]["paramRef"]["namespace"] = names["platform"]
    kube.create("validatingadmissionpolicies", policy_document)
    kube.create("validatingadmissionpolicybindings", binding)
    yield names
    kube.delete(ADMISSION, "validatingadmissionpolicybindings", None, f"kto-{suffix}")
    kube.delete(ADMISSION, "validatingadmissionpolicies", None, f"kto-{suffix}")
    for namespace in sorted(names.created, key=lambda n: n.startswith("platform")):
        remove_kto_objects(kube, namespace)


def _operators_words(topic: str, namespace: str, platform: str) -> str | None:
    """What the operator refuses a KafkaTopic of ``namespace`` naming KafkaCluster ``platform/main`` with, or
    None: the grant first (decided before anything is read), then the cluster's topic prefixes."""
    labels = NAMESPACE_LABELS.get(namespace.rsplit("-", 1)[0], {})
    granted = grant_admitting(topic, namespace, labels, read_tenancy(platform, GRANTS), f"{platform}/main")
    if isinstance(granted, Exception):
        return str(granted)
    cluster = ClusterSpec("main", "", allowed_topic_prefixes=tuple(ALLOWED_PREFIXES))
    planned = plan_topic(
        TopicSpec("main", topic, 1, 1), ClusterState(cluster_id="c", brokers=brokers(), topics={}), cluster
    )
    return str(planned.rejections[0]) if planned.rejections else None


def _refusal(kube: KubeClient, body: dict[str, Any], *, dry_run: bool = False) -> tuple[int, str] | None:
    """None when admitted; else the API server's status and message, less its policy and binding preamble."""
    path = kube.path(KTO_API, "kafkatopics", body["metadata"]["namespace"]) + (
        "?dryRun=All" if dry_run else ""
    )
    try:
        kube.call("POST", path, body)
    except KubeApiError as error:
        return error.status, error.message.split("denied request: ", 1)[-1]
    return None


def _message(refusal: tuple[int, str] | None) -> str | None:
    if refusal is None:
        return None
    status, message = refusal
    assert status in (403, 422), message  # Forbidden (a grant), Invalid (the cluster's prefixes)
    return message


def _policy_sees(kube: KubeClient, namespace: str, cluster: str, rule: str) -> None:
    """Until the API server's view of the KafkaClusters (an informer, a moment behind) refuses a KafkaTopic of
    ``namespace`` naming ``cluster`` by ``rule``: a dry run, which admission judges and nothing stores."""
    probe = kafka_topic(namespace, f"probe-{uuid.uuid4().hex[:6]}", cluster, partitions=1, replicas=1)

    def refused() -> bool:
        refusal = _refusal(kube, probe, dry_run=True)
        return refusal is not None and rule in refusal[1]

    kube.wait_for(refused, timeout=30, what=f"the admission policy judging by {rule!r}")


def test_the_api_server_refuses_what_the_operator_refuses_in_its_words(
    kube: KubeClient, policy: Namespaces
) -> None:
    platform = policy.create(kube, "platform")
    for short, labels in NAMESPACE_LABELS.items():
        policy.create(kube, short, labels)
    cluster = {"apiVersion": KTO_API, "kind": "KafkaCluster", "metadata": {"name": "main", "namespace": platform},
               "spec": {"bootstrapServers": "127.0.0.1:9", "allowedTopicPrefixes": ALLOWED_PREFIXES,
                        "tenants": GRANTS}}  # fmt: skip
    kube.create("kafkaclusters", cluster)
    _policy_sees(kube, policy["none"], f"{platform}/main", "does not grant namespace")
    seen = {"admitted": 0, "refused": 0}
    for short in ["platform", *NAMESPACE_LABELS]:
        namespace = policy[short]
        for topic in ("gold.orders", "shared.events", "misc.logs", "own.audit", "bronze.x"):
            expected = _operators_words(topic, namespace, platform)
            reference = "main" if namespace == platform else f"{platform}/main"
            body = kafka_topic(namespace, topic, reference, partitions=1, replicas=1)
            assert _message(_refusal(kube, body)) == expected, (namespace, topic)
            seen["refused" if expected else "admitted"] += 1
    assert seen["admitted"] >= 5, seen
    assert seen["refused"] >= 10, seen

    # a KafkaTopic naming a KafkaCluster of a namespace the policy is not bound to is left to the operator
    assert _refusal(kube, kafka_topic(policy["none"], "anything", "main", partitions=1, replicas=1)) is None


def test_a_change_is_judged_and_the_operators_own_updates_pass(kube: KubeClient, policy: Namespaces) -> None:
    platform = policy.create(kube, "platform")
    team = policy.create(kube, "gold", NAMESPACE_LABELS["gold"])
    grants = [{"namespaces": [team]}]
    kube.create("kafkaclusters", {"apiVersion": KTO_API, "kind": "KafkaCluster",
                                  "metadata": {"name": "main", "namespace": platform},
                                  "spec": {"bootstrapServers": "127.0.0.1:9", "tenants": grants}})  # fmt: skip
    _policy_sees(kube, policy.create(kube, "none"), f"{platform}/main", "does not grant namespace")
    assert _refusal(kube, kafka_topic(team, "orders", f"{platform}/main", partitions=1, replicas=1)) is None
    # the grant withdrawn: a change of the spec is refused, the operator's finalizer and annotations are not
    kube.patch(
        KTO_API, "kafkaclusters", platform, "main", {"spec": {"tenants": [{"namespaces": ["elsewhere"]}]}}
    )
    _policy_sees(kube, team, f"{platform}/main", f"does not grant namespace {team}")
    with pytest.raises(KubeApiError, match=f"KafkaCluster {platform}/main does not grant namespace {team}"):
        kube.patch(KTO_API, "kafkatopics", team, "orders", {"spec": {"partitions": 2}})
    finalizer = {"metadata": {"finalizers": ["kto.dev/finalizer"], "annotations": {"kto.dev/seen": "1"}}}
    kube.patch(KTO_API, "kafkatopics", team, "orders", finalizer)
    kube.patch(KTO_API, "kafkatopics", team, "orders", {"metadata": {"finalizers": None}})
    assert kube.get(KTO_API, "kafkatopics", team, "orders")["spec"]["partitions"] == 1
