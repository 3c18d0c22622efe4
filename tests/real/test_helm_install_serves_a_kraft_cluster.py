"""``helm install`` with a KRaft cluster and a tenant, on the real kube-apiserver, and the operator serving them as
the chart deploys it.

The chart is rendered with a ``clusters`` entry that only the Admin protocol can reach (``bootstrapServers``, TLS
and SCRAM from Secrets, Kafka 3.9) and a tenant grant; every object it renders is applied server-side, as
``helm install`` would. ``kto run`` then runs with the Deployment's own arguments and environment, logged in with a
token of the chart's ServiceAccount, so the chart's RBAC (the ClusterRole, the Secrets Role of the release's
namespace, the Lease) is what it has. A tenant's ServiceAccount, bound to the chart's tenant ClusterRole, declares
a topic the grant admits, which lands on the brokers, and one it does not, which the chart's
ValidatingAdmissionPolicy refuses in the operator's words.

What a lone API server cannot host is left out and said so: the Pod itself (no kubelet; the process stands for
it) and a webhook behind a Service (no Service network; the chart leaves the webhook off by default, and
``test_admission_on_every_replica.py`` serves it).
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from harness.kafka_clients import partitions
from harness.kraft_cluster import SECURED_PASSWORD, SECURED_USER, KRaftCluster
from harness.kto_objects import (
    KTO_API,
    kafka_topic,
    ready,
    remove_kto_objects,
    wait_cluster_ready,
    wait_topic,
)
from harness.kube_client import KubeApiError, KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import Credentials, RealApiServer
from harness.server_binaries import ROOT
from harness.tenants import Namespaces, expect_refused, tenant_client
from topic_operator.tenants.grants import read_tenancy
from topic_operator.tenants.rules import grant_admitting

pytestmark = pytest.mark.timeout(180)

CHART = ROOT / "helm" / "kafka-topic-operator"
ADMISSION_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
LEFT_TO_THE_TEST = {"KTO_HEALTH_PORT", "KTO_METRICS_PORT", "KTO_MATERIAL_DIR"}
"""The Deployment's settings the process cannot take as they are: ports of a Pod of its own (free ports here) and
its emptyDir (a directory of the test's)."""


def _secret(namespace: str, name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "data": {key: base64.b64encode(value.encode()).decode() for key, value in data.items()},
    }


def _rendered(values: dict[str, Any], release: str, namespace: str) -> list[dict[str, Any]]:
    with helm.Chart.load(CHART) as chart:
        rendered = chart.render(values, name=release, namespace=namespace, is_install=True)
    return [
        document
        for name, text in sorted(rendered.items())
        if name.endswith((".yaml", ".yml"))
        for document in yaml.safe_load_all(text)
        if document
    ]


def _deployed_environment(deployment: dict[str, Any], namespace: str) -> dict[str, str]:
    """The operator container's environment as its Pod would have it (the downward API's namespace filled in)."""
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["run"]
    environment: dict[str, str] = {}
    for variable in container["env"]:
        if variable["name"] in LEFT_TO_THE_TEST:
            continue
        if "valueFrom" in variable:
            assert variable["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}, variable
            environment[variable["name"]] = namespace
        else:
            environment[variable["name"]] = variable["value"]
    return environment


def _delete(kube: KubeClient, document: dict[str, Any]) -> None:
    plural, namespaced = kube.resource(document["apiVersion"], document["kind"])
    namespace = document["metadata"].get("namespace") if namespaced else None
    with contextlib.suppress(KubeApiError):
        kube.delete(document["apiVersion"], plural, namespace, document["metadata"]["name"])


def _policy_refuses(kube: KubeClient, body: dict[str, Any]) -> None:
    """Until the API server's admission (its view of the KafkaClusters is an informer, a moment behind the
    install) refuses ``body``: a dry run, which admission judges and nothing stores."""
    path = kube.path(KTO_API, "kafkatopics", body["metadata"]["namespace"]) + "?dryRun=All"

    def refused() -> bool:
        try:
            kube.call("POST", path, body)
        except KubeApiError as error:
            return error.status == 403
        return False

    kube.wait_for(
        refused, timeout=30, what="the chart's admission policy judging by the KafkaCluster's grants"
    )


def test_the_chart_declares_a_kraft_cluster_and_a_tenant_and_the_operator_serves_them(
    apiserver: RealApiServer,
    kube: KubeClient,
    secured: tuple[KRaftCluster, Credentials],
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    cluster, credentials = secured
    names = Namespaces.new()
    platform = names.create(kube, "platform")
    team = names.create(kube, "team")
    stranger = names.create(kube, "stranger")
    release = f"kto-{names.suffix}"
    grants = [{"namespaces": [team], "topicPrefixes": ["team."]}]
    values = {
        "clusters": [
            {
                "name": "events",
                "bootstrapServers": cluster.client_bootstrap_servers,
                "kafkaVersion": "3.9",
                "tls": {"secretName": "kafka-ca"},
                "sasl": {"mechanism": "SCRAM-SHA-512", "secretName": "kto-kafka-user"},
                "tenants": grants,
            }
        ],
    }
    documents = _rendered(values, release, platform)
    kinds = [document["kind"] for document in documents]
    assert kinds.count("KafkaCluster") == 1
    assert set(ADMISSION_KINDS) <= set(kinds)
    kube.create("secrets", _secret(platform, "kafka-ca", **{"ca.crt": credentials.ca_file.read_text()}))
    kube.create(
        "secrets", _secret(platform, "kto-kafka-user", username=SECURED_USER, password=SECURED_PASSWORD)
    )
    try:
        for document in documents:
            if (
                "namespace" not in document["metadata"]
                and kube.resource(document["apiVersion"], document["kind"])[1]
            ):
                document["metadata"]["namespace"] = platform
            kube.apply_document(document)
        (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
        account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        kubeconfig = apiserver.kubeconfig(
            tmp_path / "chart-kubeconfig", token=apiserver.service_account_token(platform, account)
        )
        operator = operators(kubeconfig=kubeconfig, **_deployed_environment(deployment, platform))
        operator.wait_ready()
        connected = wait_cluster_ready(kube, platform, "events", timeout=90)
        assert ready(connected)["reason"] == "Connected", ready(connected)

        tenant = tenant_client(apiserver, kube, team, role=f"{release}-kafka-topic-operator-tenant")
        reference = f"{platform}/events"
        tenant.create("kafkatopics", kafka_topic(team, "orders", reference, topicName="team.orders"))
        created = wait_topic(kube, team, "orders", 1, "Created", timeout=90)
        assert (created["status"]["partitions"], created["status"]["replicas"]) == (3, 3)
        assert sorted(partitions(cluster.bootstrap_servers, "team.orders")) == [0, 1, 2]

        tenancy = read_tenancy(platform, grants)
        for namespace, client, topic in ((team, tenant, "other.orders"), (stranger, kube, "team.orders")):
            words = grant_admitting(topic, namespace, {}, tenancy, reference)
            assert isinstance(words, Exception), (namespace, topic)
            refused = kafka_topic(namespace, "refused", reference, topicName=topic)
            _policy_refuses(kube, refused)
            expect_refused(lambda c=client, r=refused: c.create("kafkatopics", r), 403, str(words))
        assert "Traceback" not in operator.output()
    finally:  # the API server is shared: the chart's cluster-wide objects must not judge the tests that follow
        for document in reversed(documents):
            if document["kind"] in (*ADMISSION_KINDS, "ClusterRole", "ClusterRoleBinding"):
                _delete(kube, document)
        for namespace in (team, stranger, platform):
            remove_kto_objects(kube, namespace)
