"""The ValidatingAdmissionPolicy of the chart and of the plain manifests: one spec (the chart's
``files/admission-policy.yaml``), bound to every namespace that holds KafkaClusters. What it decides is tested on
the real kube-apiserver (``tests/real/test_admission_policy_on_a_real_apiserver.py``)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from validation import CHART, ROOT, rendered_documents

POLICY_SPEC = yaml.safe_load((CHART / "files" / "admission-policy.yaml").read_text())
MANIFESTS = ROOT / "manifests" / "admission-policy" / "policy.yaml"


def _of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def test_the_plain_manifests_carry_the_charts_policy() -> None:
    policy, binding = yaml.safe_load_all(MANIFESTS.read_text())
    assert policy["kind"] == "ValidatingAdmissionPolicy"
    assert policy["spec"] == POLICY_SPEC
    assert binding["spec"] == {
        "policyName": policy["metadata"]["name"],
        "validationActions": ["Deny"],
        "paramRef": {"namespace": "kafka-topic-operator", "selector": {}, "parameterNotFoundAction": "Allow"},
    }


@pytest.mark.parametrize(
    ("values", "namespaces"),
    [
        (None, ["kafka-topic-operator"]),
        ({"clusterNamespaces": ["kafka", "platform"]}, ["kafka", "platform"]),
        (
            {"clusters": [{"name": "main", "namespace": "kafka", "bootstrapServers": "k:9092"}]},
            ["kafka", "kafka-topic-operator"],
        ),
    ],
    ids=["default", "clusterNamespaces", "clusters"],
)
def test_the_policy_is_bound_to_every_namespace_that_holds_kafkaclusters(
    values: dict[str, Any] | None, namespaces: list[str]
) -> None:
    docs = rendered_documents(values)
    (policy,) = _of_kind(docs, "ValidatingAdmissionPolicy")
    assert policy["spec"] == POLICY_SPEC
    bindings = _of_kind(docs, "ValidatingAdmissionPolicyBinding")
    assert sorted(b["spec"]["paramRef"]["namespace"] for b in bindings) == namespaces
    for binding in bindings:
        assert binding["spec"]["policyName"] == policy["metadata"]["name"]
        assert binding["spec"]["validationActions"] == ["Deny"]
        assert binding["spec"]["paramRef"]["parameterNotFoundAction"] == "Allow"


def test_the_policy_can_be_left_out() -> None:
    docs = rendered_documents({"admissionPolicy": {"enabled": False}})
    assert _of_kind(docs, "ValidatingAdmissionPolicy") == []
    assert _of_kind(docs, "ValidatingAdmissionPolicyBinding") == []


def test_the_policy_judges_kafkatopics_against_kafkaclusters_only() -> None:
    assert POLICY_SPEC["paramKind"] == {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster"}
    (rule,) = POLICY_SPEC["matchConstraints"]["resourceRules"]
    assert (rule["resources"], rule["operations"]) == (["kafkatopics"], ["CREATE", "UPDATE"])
