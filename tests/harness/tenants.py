"""Tenants of a platform's KafkaCluster, as a real API server sees them: namespaces with labels, the tenant role of
``manifests/tenants/`` bound to a ServiceAccount, what RBAC lets that account do, and the settled state of a
namespace's KafkaTopics.

Used by ``tests/real/test_tenants_on_a_real_apiserver.py``; everything goes through ``KubeClient``, so a reader
can replay it with kubectl.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kazoo.client import KazooClient

from harness.kto_objects import KTO_API, ready
from harness.kube_client import KubeApiError, KubeClient
from harness.real_apiserver import RealApiServer

__all__ = [
    "TENANT_ROLE",
    "WEBHOOK_MANIFESTS",
    "Namespaces",
    "can_i",
    "expect_refused",
    "kafka_topics_in_zookeeper",
    "manifest_documents",
    "may",
    "settled_topics",
    "tenant_client",
]

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
TENANT_ROLE = MANIFESTS / "tenants" / "tenant-role.yaml"
WEBHOOK_MANIFESTS = MANIFESTS / "webhook"


def manifest_documents(*paths: Path) -> list[dict[str, Any]]:
    """The documents of each file (or every ``*.yaml`` of each directory), as ``kubectl apply -f`` reads them."""
    files = [f for p in paths for f in (sorted(p.glob("*.yaml")) if p.is_dir() else [p])]
    return [d for f in files for d in yaml.safe_load_all(f.read_text()) if d]


@dataclass
class Namespaces:
    """A platform namespace and tenant namespaces of one test (a suffix of its own: the API server is shared, and
    without a controller-manager a namespace is never really deleted)."""

    suffix: str
    created: list[str] = field(default_factory=list)

    @classmethod
    def new(cls) -> Namespaces:
        return cls(uuid.uuid4().hex[:6])

    def __getitem__(self, short: str) -> str:
        """``platform`` -> ``platform-<suffix>``, ``team-a`` -> ``team-a-<suffix>``."""
        return f"{short}-{self.suffix}"

    def create(self, kube: KubeClient, short: str, labels: Mapping[str, str] | None = None) -> str:
        name = self[short]
        metadata: dict[str, Any] = {"name": name, "labels": dict(labels or {})}
        kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
        self.created.append(name)
        return name

    def label(self, kube: KubeClient, short: str, labels: Mapping[str, str | None]) -> None:
        kube.patch("v1", "namespaces", None, self[short], {"metadata": {"labels": dict(labels)}})


def can_i(client: KubeClient, verb: str, resource: str, namespace: str, *, group: str = "kto.dev") -> bool:
    """``kubectl auth can-i`` as the client's own user (a SelfSubjectAccessReview; ``resource`` may carry a
    ``/subresource``)."""
    plural, _, subresource = resource.partition("/")
    review = client.call(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {
                    "namespace": namespace,
                    "verb": verb,
                    "group": group,
                    "resource": plural,
                    "subresource": subresource,
                }
            },
        },
    )
    return bool(review["status"].get("allowed"))


def may(kube: KubeClient, user: str, verb: str, group: str, resource: str, name: str = "") -> bool:
    """``kubectl auth can-i --as USER`` of the admin's client: a SubjectAccessReview of a cluster-scoped
    ``resource`` (named ``name``, if given) for ``user``, e.g. ``system:serviceaccount:<namespace>:<name>``."""
    review = kube.call(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "resourceAttributes": {"verb": verb, "group": group, "resource": resource, "name": name},
            },
        },
    )
    return bool(review["status"].get("allowed"))


def tenant_client(
    apiserver: RealApiServer,
    kube: KubeClient,
    namespace: str,
    account: str = "deployer",
    role: str | None = None,
) -> KubeClient:
    """ServiceAccount ``account`` made in ``namespace`` and the tenant ClusterRole ``role`` bound to it there (a
    RoleBinding, as the role's own comment says); a client with its token, returned once the API server's
    authorizer lets it create KafkaTopics there (RBAC is read from an informer cache: a binding just written takes
    a moment to count). Without ``role``, ``manifests/tenants/tenant-role.yaml`` is applied and its role bound."""
    if role is None:
        for document in manifest_documents(TENANT_ROLE):
            kube.apply_document(document)
            role = document["metadata"]["name"]
    kube.apply_document(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}}
    )
    kube.apply_document(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": f"{account}-kafkatopics", "namespace": namespace},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }
    )
    client = apiserver.client(token=apiserver.service_account_token(namespace, account))
    client.wait_for(
        lambda: can_i(client, "create", "kafkatopics", namespace),
        timeout=20,
        what=f"the RoleBinding of {namespace}/{account} in effect",
    )
    return client


def kafka_topics_in_zookeeper(zk: KazooClient) -> set[str]:
    """The topics a Kafka cluster of this chroot has (``/brokers/topics``), with or without their configs."""
    topics = set(zk.get_children("/brokers/topics")) if zk.exists("/brokers/topics") else set()
    return topics | (set(zk.get_children("/config/topics")) if zk.exists("/config/topics") else set())


def settled_topics(
    kube: KubeClient,
    namespace: str,
    names: Collection[str],
    reasons: Iterable[str],
    *,
    timeout: float = 60,
) -> dict[str, dict[str, Any]]:
    """Until every KafkaTopic of ``names`` in ``namespace`` has a Ready condition of its current generation with
    one of ``reasons``; their Ready conditions then, by name. A timeout names the ones that were not."""
    wanted, expected = set(names), set(reasons)
    seen: dict[str, object] = {}

    def settled() -> dict[str, dict[str, Any]] | None:
        found: dict[str, dict[str, Any]] = {}
        for body in kube.list(KTO_API, "kafkatopics", namespace):
            name = body["metadata"]["name"]
            if name not in wanted:
                continue
            condition = ready(body)
            observed = (body.get("status") or {}).get("observedGeneration")
            seen[name] = (observed, condition.get("reason"))
            if observed == body["metadata"]["generation"] and condition.get("reason") in expected:
                found[name] = condition
        return found if set(found) == wanted else None

    try:
        result: dict[str, dict[str, Any]] = kube.wait_for(
            settled,
            timeout=timeout,
            what=f"{len(wanted)} KafkaTopics of {namespace} settled as {sorted(expected)}",
        )
    except AssertionError as error:
        raise AssertionError(f"{error}; (observedGeneration, reason) were {seen}") from None
    return result


def expect_refused(call: Callable[[], object], status: int, *texts: str) -> KubeApiError:
    """Run ``call``; it must fail with HTTP ``status`` and a message carrying every one of ``texts``."""
    with pytest.raises(KubeApiError) as refused:
        call()
    error = refused.value
    assert error.status == status, f"expected HTTP {status}, got {error.status}: {error.message}"
    missing = [text for text in texts if text not in error.message]
    assert missing == [], f"{missing} not in the refusal: {error.message}"
    return error
