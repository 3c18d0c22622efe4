"""manifests/: every document validates (built-in kinds against Kubernetes' schemas, kto.dev objects against our
CRDs), the CRDs are the repository's, RBAC grants only what the operator uses, and the Deployment is hardened."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from validation import ROOT, documents, problems

from topic_operator.k8s.settings import environment_variables

INSTALL = ROOT / "manifests" / "install"
ALL_MANIFESTS = sorted((ROOT / "manifests").rglob("*.yaml"))


def install_documents() -> list[dict]:
    return documents(path.read_text() for path in sorted(INSTALL.glob("*.yaml")))


@pytest.mark.parametrize("path", ALL_MANIFESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_manifest_validates(path: Path) -> None:
    docs = documents([path.read_text()])
    assert docs
    for doc in docs:
        if doc.get("apiVersion", "").startswith("kafka.strimzi.io/"):
            continue  # Strimzi topics in the examples are migration input for `kto`, not objects we install
        assert problems(doc) == [], doc.get("metadata", {}).get("name")


def test_the_validator_refuses_what_the_api_server_would() -> None:
    deployment = next(d for d in install_documents() if d["kind"] == "Deployment")
    deployment["spec"]["replicas"] = "two"
    assert problems(deployment)
    topic = {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": "x"},
             "spec": {"cluster": "c", "partitions": 0, "replicas": 1, "colour": "blue"}}  # fmt: skip
    found = " ".join(problems(topic))
    assert "partitions" in found
    assert "colour" in found


def test_crds_are_byte_identical_copies() -> None:
    for name in ("kafkaclusters.kto.dev.yaml", "kafkatopics.kto.dev.yaml"):
        source = (ROOT / "crds" / name).read_bytes()
        assert (INSTALL / f"01-crd-{name}").read_bytes() == source
        assert (ROOT / "helm" / "kafka-topic-operator" / "crds" / name).read_bytes() == source


def test_files_apply_in_dependency_order() -> None:
    kinds = [doc["kind"] for doc in install_documents()]
    assert kinds[0] == "Namespace"
    assert kinds.index("Deployment") > max(i for i, k in enumerate(kinds) if k == "CustomResourceDefinition")
    assert kinds.index("Deployment") > kinds.index("ClusterRoleBinding")


EXPECTED_RULES = [
    {
        "apiGroups": ["kto.dev"],
        "resources": ["kafkatopics", "kafkaclusters"],
        "verbs": ["list", "watch", "patch"],
    },
    {
        "apiGroups": ["kto.dev"],
        "resources": ["kafkatopics/status", "kafkaclusters/status"],
        "verbs": ["patch"],
    },
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
]
LEASE_RULES = [
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]}
]


def test_rbac_is_least_privilege() -> None:
    (role,) = [d for d in install_documents() if d["kind"] == "ClusterRole"]
    assert role["rules"] == EXPECTED_RULES
    everything = [
        (g, r, v)
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    ]
    assert not any("*" in item for item in everything)
    assert ("", "secrets", "list") not in everything
    # The leader Lease only in the operator's own namespace: a Role, not the ClusterRole.
    (lease_role,) = [d for d in install_documents() if d["kind"] == "Role"]
    assert lease_role["metadata"]["namespace"] == "kafka-topic-operator"
    assert lease_role["rules"] == LEASE_RULES


def test_the_deployment_is_hardened_and_configured_by_known_variables() -> None:
    deployment = next(d for d in install_documents() if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"]["requests"]
    assert container["resources"]["limits"]["memory"]
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/tmp"}
    known = set(environment_variables().values())
    assert {e["name"] for e in container["env"]} <= known
    assert container["args"] == ["run"]


def test_the_service_exposes_metrics_of_the_operator_pods() -> None:
    docs = install_documents()
    service = next(d for d in docs if d["kind"] == "Service")
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "metrics"
    assert yaml.safe_dump(service)
