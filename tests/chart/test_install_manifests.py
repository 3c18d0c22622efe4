"""manifests/: every document validates (built-in kinds against Kubernetes' schemas, kto.dev objects against our
CRDs), the CRDs are the repository's, RBAC grants only what the operator uses, and the Deployment is hardened;
manifests/webhook/ (the opt-in admission webhook) and manifests/tenants/ (the tenants' role) are the chart's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from validation import ROOT, documents, problems, rendered_documents

from topic_operator.k8s.process.settings import environment_variables

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
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]},
]
SECRETS_RULES = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]
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
    assert not any(resource == "secrets" for _, resource, _ in everything)  # no Secrets cluster-wide
    # The leader Lease and the Secrets only in the operator's own namespace: Roles, not the ClusterRole.
    roles = {d["metadata"]["name"]: d for d in install_documents() if d["kind"] == "Role"}
    assert sorted(roles) == ["kafka-topic-operator-leader-election", "kafka-topic-operator-secrets"]
    assert {r["metadata"]["namespace"] for r in roles.values()} == {"kafka-topic-operator"}
    assert roles["kafka-topic-operator-leader-election"]["rules"] == LEASE_RULES
    assert roles["kafka-topic-operator-secrets"]["rules"] == SECRETS_RULES
    bindings = {d["metadata"]["name"]: d for d in install_documents() if d["kind"] == "RoleBinding"}
    assert bindings["kafka-topic-operator-secrets"]["roleRef"]["name"] == "kafka-topic-operator-secrets"


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


WEBHOOK = ROOT / "manifests" / "webhook"
TENANTS = ROOT / "manifests" / "tenants"


def _chart_role(values: dict[str, Any] | None, name: str) -> dict[str, Any]:
    (role,) = [
        d for d in rendered_documents(values) if d["kind"] == "ClusterRole" and d["metadata"]["name"] == name
    ]
    return role


KOPF_MANAGED_WEBHOOK_RULES = [
    # Without a shared certificate the leader serves the webhook through kopf, which keeps the configuration:
    # kopf's configuration_manager creates it when missing (409 ignored: no get), then patches it; no list/watch.
    # kopf runs one for the validating and one for the mutating configuration, whatever handlers there are: a
    # refused create of the (empty) mutating one stops the operator.
    {"apiGroups": ["admissionregistration.k8s.io"],
     "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"], "verbs": ["create"]},
    {"apiGroups": ["admissionregistration.k8s.io"],
     "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
     "resourceNames": ["kafka-topic-operator.kto.dev"], "verbs": ["patch"]},
]  # fmt: skip


def test_the_webhook_is_off_in_the_install_and_its_files_turn_it_on() -> None:
    """manifests/install/ has no webhook; manifests/webhook/ has the Service and the ClusterRole (the chart's
    webhook rules) for it, and each file says the `kubectl set env` that points the operator at that Service."""
    install = install_documents()
    assert not [d for d in install if "webhook" in d["metadata"]["name"]]
    assert "WEBHOOK" not in (INSTALL / "04-deployment.yaml").read_text()
    docs = documents(path.read_text() for path in sorted(WEBHOOK.glob("*.yaml")))
    assert sorted(d["kind"] for d in docs) == ["ClusterRole", "ClusterRoleBinding", "Service"]
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    assert role["rules"] == KOPF_MANAGED_WEBHOOK_RULES
    # the chart shares a certificate between replicas and makes the configuration itself: no such right there
    chart_role = _chart_role({"webhook": {"enabled": True}}, "kto-kafka-topic-operator")
    assert not [r for r in chart_role["rules"] if "admissionregistration.k8s.io" in r["apiGroups"]]
    (binding,) = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    (account,) = [d for d in install if d["kind"] == "ServiceAccount"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account["metadata"]["name"],
                                    "namespace": account["metadata"]["namespace"]}]  # fmt: skip
    (service,) = [d for d in docs if d["kind"] == "Service"]
    deployment = next(d for d in install if d["kind"] == "Deployment")
    assert service["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    (port,) = service["spec"]["ports"]
    assert port["port"] == 443
    set_env = (
        f"KTO_WEBHOOK_PORT={port['targetPort']} "
        f"KTO_WEBHOOK_SERVICE={service['metadata']['namespace']}/{service['metadata']['name']}"
    )
    for path in sorted(WEBHOOK.glob("*.yaml")):
        text = path.read_text()
        assert (
            f"kubectl -n {deployment['metadata']['namespace']} set env deployment/kafka-topic-operator"
            in text
        )
        assert set_env in text, path.name


def test_the_tenant_role_is_the_charts_and_its_example_binding_is_commented_out() -> None:
    text = (TENANTS / "tenant-role.yaml").read_text()
    (role,) = documents([text])
    assert role["kind"] == "ClusterRole"
    assert role["metadata"]["name"] == "kafka-topic-operator-tenant"
    assert role["rules"] == _chart_role(None, "kto-kafka-topic-operator-tenant")["rules"]
    assert not [
        k for k in role["metadata"]["labels"] if k.startswith("rbac.authorization.k8s.io/aggregate-to")
    ]
    # The example RoleBinding, once uncommented, is valid and binds the group team-a to this role in team-a.
    example = text[text.index("# ---\n") :]
    (binding,) = documents([re.sub(r"^# ?", "", example, flags=re.MULTILINE)])
    assert problems(binding) == []
    assert binding["kind"] == "RoleBinding"
    assert binding["metadata"]["namespace"] == "team-a"
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "kafka-topic-operator-tenant"}  # fmt: skip
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-a"}
    ]
