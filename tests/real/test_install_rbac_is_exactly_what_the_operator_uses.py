"""The ClusterRole of ``manifests/install/`` is enough for the operator, and no more than it needs.

``kto run`` logs in with a TokenRequest token of the install's ServiceAccount, as its Pod would, and goes through
everything that needs a permission: a KafkaCluster whose credentials are in a Secret, a topic created and
reconfigured (status, Events, kopf's progress), a Delete topic with its finalizer, the leader Lease with a
standby. The
API server's audit log then says what it asked for: no request was refused, and every (group, resource, verb)
the ClusterRole grants was used. A grant the operator never uses is a privilege too many.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml
from kazoo.client import KazooClient

from harness.kto_objects import KTO_API, kafka_cluster, kafka_topic, ready, wait_cluster_ready, wait_topic
from harness.kube_client import KubeClient
from harness.operator_process import start_operator
from harness.real_apiserver import AS_DEPLOYED, RealApiServer, grant_secrets
from harness.zookeeper import ZkChroot

pytestmark = pytest.mark.timeout(150)

INSTALL = Path(__file__).resolve().parents[2] / "manifests" / "install"
ACCOUNT = "system:serviceaccount:kafka-topic-operator:kafka-topic-operator"


def _granted() -> set[tuple[str, str, str]]:
    """(API group, resource, verb) of every rule of the install's ClusterRole and Roles."""
    documents = yaml.safe_load_all((INSTALL / "03-rbac.yaml").read_text())
    return {
        (group, resource, verb)
        for role in documents
        if role and role["kind"] in ("ClusterRole", "Role")
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def _used(events: list[dict[str, object]]) -> set[tuple[str, str, str]]:
    found = set()
    for event in events:
        ref = event.get("objectRef") or {}
        assert isinstance(ref, dict)
        resource = ref.get("resource", "")
        if ref.get("subresource"):
            resource = f"{resource}/{ref['subresource']}"
        found.add((ref.get("apiGroup", ""), resource, str(event["verb"])))
    return found


def test_the_install_role_is_enough_and_every_grant_is_used(
    apiserver: RealApiServer,
    kube: KubeClient,
    namespace: str,
    operator_kubeconfig: Path,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    tmp_path: Path,
) -> None:
    # a short retry, so that a KafkaCluster refused its Secret is tried again soon after its RoleBinding lands
    deployed = {**AS_DEPLOYED, "KTO_RETRY_DELAY": "2"}
    active = start_operator(tmp_path, operator_kubeconfig, name="active", **deployed)
    active.wait_ready()
    standby = start_operator(tmp_path, operator_kubeconfig, name="standby", **deployed)
    try:
        standby.wait_ready()
        secret = {
            "username": base64.b64encode(b"kto").decode(),
            "password": base64.b64encode(b"s3cret").decode(),
        }
        kube.create("secrets", {"apiVersion": "v1", "kind": "Secret",
                                "metadata": {"name": "zk-creds", "namespace": namespace}, "data": secret})  # fmt: skip
        # Secrets only where a RoleBinding lets the operator read them: not yet in this namespace, so the
        # KafkaCluster naming one is Ready=False, naming the RoleBinding, while the operator serves its others
        secured = kafka_cluster(namespace, "secured", zk_chroot.connect_string)
        secured["spec"]["zookeeper"]["auth"] = {"type": "Digest", "secretName": "zk-creds"}
        kube.create("kafkaclusters", secured)
        kube.create(
            "kafkaclusters", kafka_cluster(namespace, "main", zk_chroot.connect_string, allowDelete=True)
        )
        wait_cluster_ready(kube, namespace)
        refused = wait_cluster_ready(kube, namespace, "secured", status="False")
        assert ready(refused)["reason"] == "SecretForbidden"
        assert f"RoleBinding {namespace}/kafka-topic-operator-secrets is missing" in ready(refused)["message"]
        grant_secrets(kube, namespace)  # as the security page says, for a namespace of its own
        wait_cluster_ready(kube, namespace, "secured")
        kube.create("kafkatopics", kafka_topic(namespace, "orders"))
        wait_topic(kube, namespace, "orders", 1, "Created")
        kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"config": {"retention.ms": 60000}}})
        wait_topic(kube, namespace, "orders", 2, "Updated")
        kube.create("kafkatopics", kafka_topic(namespace, "scratch", deletionPolicy="Delete"))
        wait_topic(kube, namespace, "scratch", 1, "Created")
        kube.delete(KTO_API, "kafkatopics", namespace, "scratch")
        kube.wait_for(lambda: [t["metadata"]["name"] for t in kube.list(KTO_API, "kafkatopics", namespace)]
                      == ["orders"], timeout=30, what="the Delete topic gone")  # fmt: skip
        assert kafka_zk.exists("/admin/delete_topics/scratch")
    finally:
        codes = [active.stop(), standby.stop()]
    assert codes == [0, 0], active.output()[-3000:] + standby.output()[-3000:]

    events = apiserver.audit_events(ACCOUNT)
    assert events, "the audit log recorded no request of the ServiceAccount"
    refused = {
        f"{e['verb']} {e['requestURI']}" for e in events if e.get("responseStatus", {}).get("code") == 403
    }
    # the Secret of a namespace without the RoleBinding, and nothing else
    assert refused == {f"get /api/v1/namespaces/{namespace}/secrets/zk-creds"}, "RBAC refused the operator"
    unused = _granted() - _used(events)
    assert unused == set(), f"granted but never used: {sorted(unused)}"
