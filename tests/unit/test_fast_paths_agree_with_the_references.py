"""The fast paths of ``kto validate`` cannot drift from their references: the Python function of each CRD CEL
rule gives cel-python's verdict on the CRD's own rule text, and fastjsonschema's generated code gives
jsonschema's verdict on the CRD schema, on generated documents. The CRDs stay the source of truth: a rule
without a function, or a function that disagrees, fails here."""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, find, given, settings
from hypothesis import strategies as st

from topic_operator.crd.cel_equivalents import EQUIVALENTS, FastCelRules, normalized_rule
from topic_operator.crd.cel_rules import CelFailure, CelRule, CelRules, RuleOutcome, check_rules
from topic_operator.manifests.schema import CRD_FILES, _validator, crd_schema, is_valid

# cel-python's lark parser raises the recursion limit while a test runs; hypothesis notes it.
pytestmark = pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SMALL = st.integers(min_value=-2, max_value=8)
NAMES = st.sampled_from(["orders", "orders.v2", "Orders_V2", "", "a" * 300])
CONFIG_KEYS = st.sampled_from(["retention.ms", "cleanup.policy", "min.insync.replicas"])
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), INT64, st.floats(allow_nan=False), st.text(max_size=8)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def topics(draw: st.DrawFn) -> dict[str, Any]:
    """KafkaTopics of the shape the rules run on (the schema's types, required fields present), with values
    chosen to make each rule both hold and fail: counts near each other, short assignments, odd names."""
    spec: dict[str, Any] = {
        "cluster": draw(st.sampled_from(["local", "other"])),
        "partitions": draw(st.one_of(SMALL, INT64)),
        "replicas": draw(st.one_of(SMALL, INT64)),
    }
    if draw(st.booleans()):
        spec["topicName"] = draw(NAMES)
    if draw(st.booleans()):
        spec["replicaAssignment"] = draw(st.lists(st.lists(SMALL, max_size=4), max_size=6))
    if draw(st.booleans()):
        spec["config"] = draw(
            st.dictionaries(st.one_of(st.text(max_size=10), CONFIG_KEYS), JSON_VALUES, max_size=3)
        )
    if draw(st.booleans()):
        spec["unmanagedConfig"] = draw(st.lists(st.one_of(CONFIG_KEYS, st.text(max_size=4)), max_size=3))
    metadata: dict[str, Any] = {"name": draw(NAMES)} if draw(st.integers(0, 5)) else {}
    return {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": metadata, "spec": spec}


@st.composite
def updates(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """An old object and a new one: unrelated, or the old one with a few fields changed or removed."""
    old = draw(topics())
    if draw(st.booleans()):
        return draw(topics()), old
    new = copy.deepcopy(old)
    for field in draw(
        st.lists(st.sampled_from(["partitions", "topicName", "cluster", "replicas"]), max_size=3)
    ):
        if (
            draw(st.booleans())
            and field in new["spec"]
            and field not in ("partitions", "replicas", "cluster")
        ):
            del new["spec"][field]
        elif field == "partitions":
            new["spec"]["partitions"] = old["spec"]["partitions"] + draw(st.integers(-2, 2))
        elif field == "replicas":
            new["spec"]["replicas"] = draw(SMALL)
        else:
            new["spec"][field] = draw(NAMES if field == "topicName" else st.sampled_from(["local", "other"]))
    return new, old


def verdicts(failures: list[CelFailure]) -> list[tuple[str, object, str, bool]]:
    """What must agree: where, the value, the rule, and whether it failed or could not be evaluated (the
    wording of an evaluation error is each evaluator's own)."""
    return [(f.field_path, f.value, f.rule, "(rule evaluation error:" in f.message) for f in failures]


FAST = FastCelRules(crd_schema("KafkaTopic"))
REFERENCE = CelRules(crd_schema("KafkaTopic"))

_INT64 = range(-(2**63), 2**63)


def _integers_fit_int64(value: object, schema: Mapping[str, Any]) -> bool:
    """Whether every value at a ``type: integer`` node of ``schema`` fits in an int64."""
    if schema.get("type") == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return value in _INT64
    properties = schema.get("properties", {})
    if isinstance(value, Mapping):
        return all(_integers_fit_int64(value[name], properties[name]) for name in properties if name in value)
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return all(_integers_fit_int64(item, items) for item in value)
    return True


def api_server_runs_the_rules(*documents: Mapping[str, Any]) -> bool:
    """Whether the API server would evaluate the CEL rules on these objects at all, as far as integers go.

    It decodes a JSON integer beyond int64 as a float64 (sigs.k8s.io/json: "int64 ... when possible, falling
    back to float64 on any parse or overflow error"); a float64 beyond 2**53 is not a JSON integer to its
    OpenAPI validator (kube-openapi, go-openapi/swag ``IsFloat64AJSONInteger``), so a ``type: integer`` field
    holding one fails with ``must be of type integer``, a ``field.ErrorTypeTypeInvalid``; and such an error is
    blocking (apiextensions-apiserver ``customresource/strategy.go`` ``hasBlockingErr``): the CEL rules are
    not evaluated, only "some validation rules were not checked because the object was invalid" is reported.

    Such an object is no test of the functions: CEL on Kubernetes never sees the value (its ints are int64), and
    neither evaluator gives the API server's answer there. cel-python refuses to bind the whole object
    (``json_to_cel``: "overflow"), so every rule whose ``self`` contains the field reports an evaluation
    error; the functions touch only the fields a rule names and compare Python ints of any size. Within
    int64 (values above ``maximum`` included: that failure is not blocking, the rules still run) both must
    agree. (``updates()`` makes such values: ``partitions`` of an int64 bound moved by up to 2.)
    """
    schema = crd_schema("KafkaTopic")
    return all(_integers_fit_int64(document, schema) for document in documents)


def test_every_rule_of_the_crds_has_a_python_function() -> None:
    for kind in CRD_FILES:
        assert FastCelRules(crd_schema(kind)).without_equivalent == (), kind
    rules = {
        normalized_rule(rule.rule) for kind in CRD_FILES for rule in FastCelRules(crd_schema(kind)).rules
    }
    assert rules == set(EQUIVALENTS), "a function for a rule the CRDs no longer carry"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=topics())
def test_on_a_create_the_functions_agree_with_cel_python(document: dict[str, Any]) -> None:
    assume(api_server_runs_the_rules(document))
    assert verdicts(FAST.check(document)) == verdicts(REFERENCE.check(document))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=updates())
def test_on_an_update_the_functions_agree_with_cel_python(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    new, old = pair
    assume(api_server_runs_the_rules(new, old))
    assert verdicts(FAST.check(new, old)) == verdicts(REFERENCE.check(new, old))


CLUSTER_FAST, CLUSTER_REFERENCE = (
    FastCelRules(crd_schema("KafkaCluster")),
    CelRules(crd_schema("KafkaCluster")),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    managed=st.dictionaries(
        st.sampled_from(["only", "allBut", "other"]),
        st.one_of(st.lists(CONFIG_KEYS, max_size=2), JSON_VALUES),
    )
)
def test_on_managed_topic_config_the_functions_agree_with_cel_python(managed: dict[str, Any]) -> None:
    document = {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "local"},
        "spec": {"bootstrapServers": "127.0.0.1:9092", "managedTopicConfig": managed},
    }
    assert verdicts(CLUSTER_FAST.check(document)) == verdicts(CLUSTER_REFERENCE.check(document))


def _off_by_one(rule: CelRule, activation: Mapping[str, Any]) -> RuleOutcome:
    """A plausible mistake: ``>`` where the rule says ``>=``."""
    if rule.rule == "self >= oldSelf":
        return None if activation["self"] > activation["oldSelf"] else ""
    from topic_operator.crd.cel_equivalents import evaluate_equivalent

    return evaluate_equivalent(rule, activation)


def test_the_comparison_catches_a_wrong_function() -> None:
    """The agreement tests can fail: a function with an off-by-one is found out on generated updates."""
    new, old = find(
        updates(),
        lambda pair: (
            api_server_runs_the_rules(*pair)
            and verdicts(check_rules(FAST.rules, pair[0], pair[1], _off_by_one))
            != verdicts(REFERENCE.check(pair[0], pair[1]))
        ),
        settings=settings(max_examples=2000, deadline=None, database=None),
    )
    assert new["spec"]["partitions"] == old["spec"]["partitions"]


# ---- the schema -----------------------------------------------------------------------------------------------

ODD_VALUES = st.one_of(
    JSON_VALUES,
    st.binary(max_size=4),
    st.sets(st.integers(0, 3), max_size=3),
    st.just(datetime.date(2024, 1, 1)),
    st.just(3.0),
    st.just(True),
    st.just(2**64),
    st.sampled_from(
        ["local\n", "local", "Local", "a.b", "-a", "x" * 254, "127.0.0.1:2181/kafka", "h:1,h:2/c/"]
    ),
)
PATHS = {
    "KafkaTopic": [
        ("spec", "cluster"), ("spec", "topicName"), ("spec", "partitions"), ("spec", "replicas"),
        ("spec", "config"), ("spec", "replicaAssignment"), ("spec", "rackAwareMode"), ("spec", "deletionPolicy"),
        ("spec", "mode"), ("spec", "unknown"), ("metadata",), ("spec",), ("kind",), ("status",),
    ],
    "KafkaCluster": [
        ("spec", "zookeeper", "connect"), ("spec", "zookeeper"), ("spec", "kafkaVersion"), ("spec", "allowDelete"),
        ("spec", "allowedTopicPrefixes"), ("spec", "zookeeper", "auth"), ("spec", "zookeeper", "tls"),
        ("spec", "reassignment"), ("spec", "reassignment", "enabled"),
        ("spec", "reassignment", "throttleBytesPerSecond"), ("spec", "other"), ("spec",), ("metadata",),
    ],
}  # fmt: skip
BASES = {
    "KafkaTopic": {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "orders"},
        "spec": {
            "cluster": "local",
            "partitions": 3,
            "replicas": 2,
            "replicaAssignment": [[0, 1], [1, 2], [2, 0]],
        },
    },
    "KafkaCluster": {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "local"},
        "spec": {
            "zookeeper": {"connect": "127.0.0.1:2181/kafka", "auth": {"type": "Digest", "secretName": "s"}}
        },
    },
}


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(sorted(BASES)))
    document = copy.deepcopy(BASES[kind])
    for path in draw(st.lists(st.sampled_from(PATHS[kind]), max_size=3)):
        parent: Any = document
        for step in path[:-1]:
            if not isinstance(parent.get(step), dict):
                parent[step] = {}
            parent = parent[step]
        if draw(st.integers(0, 4)) == 0:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = draw(ODD_VALUES)
    return kind, document


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_fastjsonschema_and_jsonschema_give_one_verdict(case: tuple[str, dict[str, Any]]) -> None:
    kind, document = case
    checked = {k: v for k, v in document.items() if k != "status"}
    assert is_valid(kind, document) == (not list(_validator(kind).iter_errors(checked)))


@pytest.mark.parametrize("kind", sorted(BASES))
def test_the_unmutated_bases_are_valid_and_fastjsonschema_fills_in_nothing(kind: str) -> None:
    document = copy.deepcopy(BASES[kind])
    assert is_valid(kind, document)
    assert document == BASES[kind]  # no defaults written into the document
