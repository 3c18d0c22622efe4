"""What the project ships, on a real kube-apiserver: the install manifests and the chart apply server-side, the
examples are admitted, and the CRDs' schema and CEL rules refuse what they promise to refuse, in their own words.

kmock cannot say any of this: it has no admission chain, no CEL, no structural-schema check of the CRDs
themselves and no server-side apply.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from harness.kto_objects import KTO_API, remove_kto_objects
from harness.kube_client import KubeApiError, KubeClient
from harness.real_apiserver import install_documents, wait_established

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "kafka-topic-operator"
EXAMPLES = ROOT / "manifests" / "examples"


def _documents(*paths: Path) -> list[dict[str, Any]]:
    return [d for path in paths for d in yaml.safe_load_all(path.read_text()) if d]


def _topic(namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": KTO_API,
        "kind": "KafkaTopic",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"cluster": "main", "partitions": 3, "replicas": 3, **spec},
    }


def _refusal(call: Any) -> KubeApiError:
    with pytest.raises(KubeApiError) as caught:
        call()
    return caught.value


def test_the_install_manifests_were_applied_and_applying_them_again_changes_nothing(kube: KubeClient) -> None:
    """The session's API server got ``manifests/install/`` server-side; a second apply is a no-op (same
    resourceVersion for every object), as ``kubectl apply --server-side`` run twice by GitOps must be."""
    for document in install_documents():
        plural, namespaced = kube.resource(document["apiVersion"], document["kind"])
        metadata = document["metadata"]
        before = kube.get(document["apiVersion"], plural, metadata.get("namespace"), metadata["name"])
        after = kube.apply_document(document)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"], (
            f"{document['kind']} {metadata['name']} changed on a second apply"
        )
        assert namespaced == ("namespace" in metadata), document["kind"]


def test_the_charts_rendered_objects_apply_server_side(kube: KubeClient) -> None:
    """The chart with every optional object on (a KafkaCluster, the metrics Service) in a namespace of its own."""
    namespace = "kto-chart"
    values = {
        "metrics": {"service": {"enabled": True}},
        "clusters": [
            {
                "name": "main",
                "zookeeper": {"connect": "127.0.0.1:1,127.0.0.1:2/kafka"},  # never connected to
                "kafkaVersion": "3.3",
                "allowDelete": True,
                "reassignment": {"enabled": True, "throttleBytesPerSecond": 10485760},
            }
        ],
    }
    with helm.Chart.load(CHART) as chart:
        rendered = chart.render(values, name="kto-chart", namespace=namespace, is_install=True)
    documents = [
        d
        for name, text in sorted(rendered.items())
        if name.endswith((".yaml", ".yml"))
        for d in yaml.safe_load_all(text)
        if d
    ]
    kinds = {d["kind"] for d in documents}
    assert {
        "Deployment",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "KafkaCluster",
        "Service",
    } <= kinds
    crds = _documents(*sorted((CHART / "crds").glob("*.yaml")))
    kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    for crd in crds:  # the chart's copies: byte-identical to crds/, so this apply changes nothing
        kube.apply_document(crd)
        wait_established(kube, crd["metadata"]["name"])
    policies = [d for d in documents if d["kind"].startswith("ValidatingAdmissionPolicy")]
    assert [d["kind"] for d in policies] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    try:
        for document in documents:
            if (
                "namespace" not in document["metadata"]
                and kube.resource(document["apiVersion"], document["kind"])[1]
            ):
                document["metadata"]["namespace"] = namespace
            applied = kube.apply_document(document)
            assert applied["metadata"]["name"] == document["metadata"]["name"]
        cluster = kube.get(KTO_API, "kafkaclusters", namespace, "main")
        assert cluster["spec"]["reassignment"]["throttleBytesPerSecond"] == 10485760
    finally:  # the API server is shared: its admission policy would judge the KafkaTopics of the tests that follow
        for document in reversed(policies):
            plural = (
                "validatingadmissionpolicybindings"
                if document["kind"].endswith("Binding")
                else ("validatingadmissionpolicies")
            )
            with contextlib.suppress(KubeApiError):
                kube.delete(document["apiVersion"], plural, None, document["metadata"]["name"])
        remove_kto_objects(kube, namespace)


def test_the_example_manifests_are_admitted(kube: KubeClient, namespace: str) -> None:
    for document in _documents(*sorted(EXAMPLES.glob("*.yaml"))):
        if document["apiVersion"] != KTO_API:
            continue  # the Strimzi example needs Strimzi's CRD, which this server does not have
        document["metadata"]["namespace"] = namespace
        kube.apply_document(document)
    names = {t["metadata"]["name"] for t in kube.list(KTO_API, "kafkatopics", namespace)}
    assert {"orders", "orders-audit"} <= names


def test_the_cel_rules_refuse_a_decrease_a_rename_and_a_cluster_change_in_their_own_words(
    kube: KubeClient, namespace: str
) -> None:
    kube.create("kafkatopics", _topic(namespace, "orders", partitions=6))

    decrease = _refusal(
        lambda: kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"partitions": 3}})
    )
    assert decrease.status == 422
    assert "partitions can only be increased (Kafka cannot remove partitions)" in decrease.message

    rename = _refusal(
        lambda: kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"topicName": "orders-v2"}})
    )
    assert rename.status == 422
    assert "the topic name is immutable" in rename.message

    moved = _refusal(
        lambda: kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"cluster": "other"}})
    )
    assert moved.status == 422
    assert "cluster is immutable" in moved.message

    # Nothing of it was stored; an increase is admitted.
    assert kube.get(KTO_API, "kafkatopics", namespace, "orders")["spec"]["partitions"] == 6
    grown = kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"partitions": 8}})
    assert grown["spec"]["partitions"] == 8
    assert grown["metadata"]["generation"] == 2


def test_the_schema_refuses_what_kafka_could_never_take(kube: KubeClient, namespace: str) -> None:
    cases = {
        "zero partitions": _topic(namespace, "a", partitions=0),
        "an assignment of the wrong length": _topic(
            namespace, "b", partitions=2, replicaAssignment=[[1, 2, 3]]
        ),
        "an unknown field": {
            **_topic(namespace, "c"),
            "spec": {**_topic(namespace, "c")["spec"], "partition": 3},
        },
        "a rack-aware mode Kafka lacks": _topic(namespace, "d", rackAwareMode="Sometimes"),
    }
    for case, body in cases.items():
        refused = _refusal(lambda body=body: kube.call(
            "POST", f"/apis/{KTO_API}/namespaces/{namespace}/kafkatopics?fieldValidation=Strict", body
        ))  # fmt: skip
        assert refused.status in (400, 422), (case, refused)
    assert kube.list(KTO_API, "kafkatopics", namespace) == []


def test_a_status_written_by_a_client_goes_only_through_the_status_subresource(
    kube: KubeClient, namespace: str
) -> None:
    """The operator's status patches rely on the subresource: the main resource ignores ``status``."""
    created = kube.create("kafkatopics", {**_topic(namespace, "s"), "status": {"partitions": 99}})
    assert "status" not in created or created["status"].get("partitions") != 99
    body = copy.deepcopy(created)
    patched = kube.call(
        "PATCH",
        kube.path(KTO_API, "kafkatopics", namespace, "s") + "/status",
        {"status": {"partitions": 3}},
        "application/merge-patch+json",
    )
    assert patched["status"]["partitions"] == 3
    assert patched["metadata"]["generation"] == body["metadata"]["generation"]


@pytest.mark.parametrize(("throttle", "admitted"), [(1, True), (2**63 - 1024, True), (2**63 - 1023, False)])
def test_the_throttle_bound_is_the_one_the_api_server_holds(
    kube: KubeClient, namespace: str, throttle: int, admitted: bool
) -> None:
    """kmock and jsonschema took ``maximum: 9223372036854775807``; the real API server holds bounds as float64,
    turned it into -2**63 and refused every throttle. The bound is now one float64 holds exactly."""
    body = {
        "apiVersion": KTO_API,
        "kind": "KafkaCluster",
        "metadata": {"name": "main", "namespace": namespace},
        "spec": {
            "zookeeper": {"connect": "127.0.0.1:1/kafka"},
            "reassignment": {"throttleBytesPerSecond": throttle},
        },
    }
    if admitted:
        assert (
            kube.create("kafkaclusters", body)["spec"]["reassignment"]["throttleBytesPerSecond"] == throttle
        )
    else:
        refused = _refusal(lambda: kube.create("kafkaclusters", body))
        assert refused.status == 422
        assert "less than or equal to 9223372036854774784" in refused.message


def test_the_argocd_health_checks_are_a_configmap_the_api_server_takes(kube: KubeClient) -> None:
    """What the Argo CD page tells its users to merge into ``argocd-cm``. (The PrometheusRule and ServiceMonitor of
    ``manifests/monitoring/`` need prometheus-operator's CRDs, which this API server does not have.)"""
    (document,) = _documents(ROOT / "manifests" / "argocd" / "argocd-cm-kto-health.yaml")
    kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}})
    applied = kube.apply_document(document)
    assert set(applied["data"]) == {
        "resource.customizations.health.kto.dev_KafkaTopic",
        "resource.customizations.health.kto.dev_KafkaCluster",
    }
