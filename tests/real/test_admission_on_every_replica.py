"""With a shared webhook certificate, every replica answers admission, standing by or leading, and a leader change
loses no review: two ``kto run`` processes behind one Service (a round-robin port here, as a Service's endpoints),
the ValidatingWebhookConfiguration as the chart makes it with ``failurePolicy: Fail``, so that a review no replica
answers would refuse the apply, and applies of KafkaTopics a grant admits and refuses before, during and after the
leader stops. Each answer is the operator's, in its words."""

from __future__ import annotations

import base64
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.kto_objects import kafka_cluster, kafka_topic, remove_kto_objects, wait_cluster_ready
from harness.kube_client import KubeApiError, KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import RealApiServer
from harness.service_proxy import RoundRobinService
from harness.tenants import Namespaces
from harness.waiting import eventually
from harness.zookeeper import ZkChroot
from topic_operator.tenants.grants import read_tenancy
from topic_operator.tenants.rules import grant_admitting
from topic_operator.testing.local_server import free_port

pytestmark = pytest.mark.timeout(150)

ADMISSION = "admissionregistration.k8s.io/v1"


def _configuration(name: str, port: int, ca: bytes, label: str) -> dict[str, Any]:
    """The chart's ValidatingWebhookConfiguration, calling ``127.0.0.1:port`` and limited to this test's
    namespaces (the API server is shared with the tests that follow)."""
    return {
        "apiVersion": ADMISSION,
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "kafkatopics.validate.kto.dev",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "timeoutSeconds": 10,
                "namespaceSelector": {"matchLabels": {label: "yes"}},
                "clientConfig": {
                    "url": f"https://127.0.0.1:{port}/validate-kafkatopics",
                    "caBundle": base64.b64encode(ca).decode(),
                },
                "rules": [
                    {
                        "apiGroups": ["kto.dev"],
                        "apiVersions": ["v1alpha1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["kafkatopics"],
                        "scope": "Namespaced",
                    }
                ],
            }
        ],
    }


def _leading(operator: Operator) -> bool:
    status, text = operator.readyz()
    return status == 200 and "standby" not in text


def test_two_replicas_answer_admission_through_a_leader_change(
    apiserver: RealApiServer,
    kube: KubeClient,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    certificates = tmp_path / "webhook-tls"  # the Secret the chart mounts: a certificate for 127.0.0.1
    certificates.mkdir()
    shutil.copyfile(apiserver.credentials.cert_file, certificates / "tls.crt")
    shutil.copyfile(apiserver.credentials.key_file, certificates / "tls.key")
    names = Namespaces.new()
    label = f"kto-webhook-{names.suffix}"
    platform = names.create(kube, "platform", {label: "yes"})
    team = names.create(kube, "team", {label: "yes"})
    grants = [{"namespaces": [team], "topicPrefixes": ["team."]}]
    tenancy = read_tenancy(platform, grants)
    ports = [free_port(), free_port()]
    replicas = [
        operators(
            KTO_WEBHOOK_PORT=str(port),
            KTO_WEBHOOK_LISTEN="127.0.0.1",
            KTO_WEBHOOK_CERTIFICATE_DIR=str(certificates),
            KTO_LEASE_DURATION="6",
            KTO_LEASE_RENEW_DEADLINE="4",
            KTO_LEASE_RETRY_PERIOD="1",
        )
        for port in ports
    ]
    for replica in replicas:
        replica.wait_ready()
    leader = eventually(lambda: next((r for r in replicas if _leading(r)), None), timeout=60, what="a leader")
    configuration = f"kto-webhook-{names.suffix}"
    answered: list[tuple[str, str | None]] = []

    def apply(round_number: int) -> None:
        """A KafkaTopic the grant admits and one it refuses; each answer checked against the operator's words."""
        for topic in (f"team.r{round_number}", f"other.r{round_number}"):
            expected = grant_admitting(topic, team, {label: "yes"}, tenancy, f"{platform}/main")
            refusal = str(expected) if isinstance(expected, Exception) else None
            try:
                kube.create("kafkatopics", kafka_topic(team, f"t{round_number}-{topic.split('.')[0]}",
                                                       f"{platform}/main", topicName=topic, partitions=1,
                                                       replicas=1))  # fmt: skip
                got = None
            except KubeApiError as error:
                got = error.message.split("denied the request: ", 1)[-1]
            assert got == refusal, (round_number, topic, got)
            answered.append((topic, got))

    with RoundRobinService(ports) as service:
        kube.create("validatingwebhookconfigurations",
                    _configuration(configuration, service.port, apiserver.credentials.ca_file.read_bytes(), label))  # fmt: skip
        try:
            kube.create(
                "kafkaclusters", kafka_cluster(platform, "main", zk_chroot.connect_string, tenants=grants)
            )
            wait_cluster_ready(kube, platform)
            for round_number in range(4):  # both replicas answer, in turn: the leader and the standby
                apply(round_number)
            assert all(service.handed[port] >= 2 for port in ports), service.handed
            # the leader terminates while the applies go on: out of the endpoints first, as a terminating pod is
            service.remove(ports[replicas.index(leader)])
            stopping = threading.Thread(target=leader.stop, name="leader stopping")
            stopping.start()
            for round_number in range(4, 12):
                apply(round_number)
            stopping.join(timeout=30)
            (successor,) = [r for r in replicas if r is not leader]
            eventually(lambda: _leading(successor), timeout=30, what="the standby leading")
            for round_number in range(12, 14):
                apply(round_number)
        finally:
            kube.delete(ADMISSION, "validatingwebhookconfigurations", None, configuration)
            for namespace in (team, platform):
                remove_kto_objects(kube, namespace)
    assert sum(got is None for _, got in answered) == 14
    assert sum(got is not None for _, got in answered) == 14
