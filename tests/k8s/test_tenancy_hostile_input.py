"""Hostile input for the grants' judgements: whatever a KafkaCluster's ``spec.tenants`` and a KafkaTopic hold (an
older CRD let them through, a manifest was never applied, a request reached the webhook without the schema's
checks), the admission webhook's judgement and ``kto validate`` answer with a verdict, never a traceback, and a
namespace the grants do not admit is never admitted.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from k8s_world import FakeKubernetes

from topic_operator.cli.main import main
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.kafkatopics.admission import IndexedFacts, admission_refusal
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.tenants.grants import read_tenancy

_scalars = st.none() | st.booleans() | st.integers(-3, 100) | st.text(max_size=8)
JSONISH = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
"""Any JSON value."""

_grant = st.fixed_dictionaries(
    {},
    optional={
        "namespaces": st.one_of(st.lists(st.sampled_from(["payments", "other", "Bad"]), max_size=2), JSONISH),
        "namespaceSelector": st.one_of(
            st.fixed_dictionaries(
                {"matchLabels": st.dictionaries(st.sampled_from(["team", "x y"]), JSONISH)}
            ),
            JSONISH,
        ),
        "topicPrefixes": st.one_of(st.lists(st.sampled_from(["payments.", ""]), max_size=2), JSONISH),
        "quota": st.one_of(
            st.fixed_dictionaries({}, optional={"topics": JSONISH, "partitions": JSONISH}), JSONISH
        ),
        "limits": st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "max": st.dictionaries(
                        st.sampled_from(["partitions", "retention.ms", "Bad Key"]), JSONISH
                    ),
                    "min": st.dictionaries(st.sampled_from(["replicas", "retention.ms"]), JSONISH),
                    "allowedConfigs": JSONISH,
                },
            ),
            JSONISH,
        ),
        "allowDelete": JSONISH,
    },
)
TENANTS = st.one_of(st.lists(_grant, max_size=3), JSONISH)
TOPIC_SPECS = st.fixed_dictionaries(
    {"cluster": st.one_of(st.just("kafka/main"), JSONISH)},
    optional={
        "topicName": st.one_of(st.sampled_from(["payments.t", "other.t"]), JSONISH),
        "partitions": JSONISH,
        "replicas": JSONISH,
        "config": st.one_of(
            st.dictionaries(st.sampled_from(["retention.ms", "cleanup.policy"]), JSONISH), JSONISH
        ),
        "replicaAssignment": JSONISH,
        "deletionPolicy": st.one_of(st.sampled_from(["Delete", "Retain"]), JSONISH),
    },
)


def _context(tenants: object) -> OperatorContext:
    kube = FakeKubernetes()
    ctx = OperatorContext(OperatorSettings(), kube, kube)
    ctx.cluster_bodies[("kafka", "main")] = {
        "metadata": {"namespace": "kafka", "name": "main", "uid": "u", "generation": 1},
        "spec": {"tenants": tenants},
    }
    return ctx


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tenants=TENANTS,
    spec=TOPIC_SPECS,
    old=st.none() | TOPIC_SPECS,
    namespace=st.sampled_from(["payments", "x"]),
)
def test_admission_answers_any_input_and_admits_no_namespace_the_grants_do_not(
    tenants: object, spec: dict[str, Any], old: dict[str, Any] | None, namespace: str
) -> None:
    ctx = _context(tenants)
    body = {"metadata": {"name": "t", "namespace": namespace}, "spec": spec}
    before = None if old is None else {"metadata": {"name": "t", "namespace": namespace}, "spec": old}
    verdict = admission_refusal(IndexedFacts(ctx), body, before, namespace)
    assert verdict is None or isinstance(verdict, str)
    granted = read_tenancy("kafka", tenants).grant_for(namespace, ctx.labels_of(namespace))
    changes_spec = before is None or before["spec"] != spec
    judged = (
        spec.get("cluster") == "kafka/main" and isinstance(spec.get("topicName", "t"), str) and changes_spec
    )
    if judged and granted is None:
        assert verdict is not None
        assert "Not authorized to access topics" in verdict


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tenants=TENANTS, spec=TOPIC_SPECS)
def test_kto_validate_answers_any_grant_and_topic_with_a_verdict(
    tenants: object, spec: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    directory = tmp_path_factory.mktemp("hostile")
    documents = [
        {
            "apiVersion": "kto.dev/v1alpha1",
            "kind": "KafkaCluster",
            "metadata": {"name": "main", "namespace": "kafka"},
            "spec": {"zookeeper": {"connect": "127.0.0.1:2181/kafka"}, "tenants": tenants},
        },
        {
            "apiVersion": "kto.dev/v1alpha1",
            "kind": "KafkaTopic",
            "metadata": {"name": "t", "namespace": "payments"},
            "spec": spec,
        },
    ]
    (directory / "all.yaml").write_text(yaml.safe_dump_all(documents))
    assert main(["validate", str(directory)]) in (0, 1)
