"""The CRDs' rules for multi-tenancy: a KafkaTopic may name a KafkaCluster of another namespace as
``<namespace>/<name>``, and a KafkaCluster grants other namespaces in ``spec.tenants``. Each CEL rule is evaluated
offline as the API server would (cel-python, the reference, and the Python functions ``kto validate`` runs) and
accepts a good value and refuses a bad one in its own words; the OpenAPI part (bounds, patterns, enums) is checked
with jsonschema, and the functions are held to cel-python's verdict on generated grants and cluster names."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from topic_operator.crd.cel_equivalents import FastCelRules
from topic_operator.crd.cel_rules import CelFailure, CelRules, rules_of

# cel-python's lark parser raises the recursion limit while a test runs; hypothesis notes it.
pytestmark = pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")

CRDS = Path(__file__).resolve().parents[2] / "crds"


def _schema(name: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / name).read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


TOPIC_SCHEMA = _schema("kafkatopics.kto.dev.yaml")
CLUSTER_SCHEMA = _schema("kafkaclusters.kto.dev.yaml")

CLUSTER_FORM_MESSAGE = (
    "spec.cluster must be a KafkaCluster name, or <namespace>/<name> for a KafkaCluster of another namespace"
)
GRANT_MESSAGE = "a tenant grant names namespaces, a namespaceSelector or both"
EMPTY_SELECTOR_MESSAGE = (
    "an empty namespaceSelector would grant every namespace: give matchLabels or matchExpressions, or list the "
    "namespaces"
)
LABEL_KEY_MESSAGE = (
    "every matchLabels key must be a label key: an optional DNS subdomain prefix and '/', then a name of at most "
    "63 characters of [A-Za-z0-9-_.] that starts and ends with a letter or digit"
)
IN_MESSAGE = "operator In and NotIn need at least one value in values"
EXISTS_MESSAGE = "operator Exists and DoesNotExist take no values; leave values out"
MIN_MAX_MESSAGE = "limits.min must not exceed limits.max for a name that both give"
LIMIT_NAME_MESSAGE = (
    "a limit's name must be partitions, replicas or a topic config key: at most 249 characters of [a-z0-9.]"
)

GRANT = ("spec", "tenants", "[*]")
SELECTOR = (*GRANT, "namespaceSelector")

EVALUATORS = pytest.mark.parametrize("evaluator", [CelRules, FastCelRules], ids=["cel-python", "functions"])


def _topic(cluster: object) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "orders"},
        "spec": {"cluster": cluster, "partitions": 6, "replicas": 3},
    }


def _cluster(*tenants: object, **status: object) -> dict[str, Any]:
    document: dict[str, Any] = {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "shared", "namespace": "platform"},
        "spec": {"bootstrapServers": "kafka:9092", "tenants": list(tenants)},
    }
    if status:
        document["status"] = status
    return document


GOOD_GRANTS: list[dict[str, Any]] = [
    {
        "namespaces": ["team-a", "team-b"],
        "topicPrefixes": ["team-a.", "shared."],
        "quota": {"topics": 50, "partitions": 600},
        "limits": {
            "min": {"partitions": 1, "replicas": 3, "retention.ms": 3600000},
            "max": {"partitions": 24, "replicas": 3, "retention.ms": 604800000, "max.message.bytes": 1048576},
            "allowedConfigs": ["retention.ms", "cleanup.policy", "max.message.bytes"],
        },
        "allowDelete": True,
    },
    {
        "namespaceSelector": {
            "matchLabels": {"kto.dev/tenant": "true", "team": "", "Example.COM_x": "v-1.2_3"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging"]},
                {"key": "example.com/tier", "operator": "NotIn", "values": ["legacy"]},
                {"key": "kto.dev/opt-in", "operator": "Exists"},
                {"key": "frozen", "operator": "DoesNotExist", "values": []},
            ],
        },
        "quota": {"topics": 0},
        "limits": {"max": {"retention.bytes": -1}},
    },
    {"namespaces": ["ci"], "namespaceSelector": {"matchExpressions": [{"key": "ci", "operator": "Exists"}]}},
]


def test_the_kafkacluster_carries_exactly_these_rules() -> None:
    rules = [(r.path, r.message, r.field_path) for r in rules_of(CLUSTER_SCHEMA) if r.path[:2] == GRANT[:2]]
    assert rules == [
        (GRANT, GRANT_MESSAGE, ""),
        ((*GRANT, "limits"), MIN_MAX_MESSAGE, ".min"),
        ((*GRANT, "limits", "max"), LIMIT_NAME_MESSAGE, ""),
        ((*GRANT, "limits", "min"), LIMIT_NAME_MESSAGE, ""),
        (SELECTOR, EMPTY_SELECTOR_MESSAGE, ""),
        ((*SELECTOR, "matchExpressions", "[*]"), IN_MESSAGE, ".values"),
        ((*SELECTOR, "matchExpressions", "[*]"), EXISTS_MESSAGE, ".values"),
        ((*SELECTOR, "matchLabels"), LABEL_KEY_MESSAGE, ""),
    ]
    cluster_rules = [r for r in rules_of(TOPIC_SCHEMA) if r.path == ("spec", "cluster")]
    assert [r.message for r in cluster_rules] == [
        "cluster is immutable; create a new KafkaTopic for a topic of another cluster",
        CLUSTER_FORM_MESSAGE,
    ]


# ---- KafkaTopic spec.cluster -----------------------------------------------------------------------------------

GOOD_CLUSTERS = [
    "local",
    "kafka.prod-1",
    "a" * 253,
    "platform/shared",
    "team-a/kafka.prod-1",
    "0/1",
    "n" * 63 + "/c",
    "n/" + "c" * 253,
]
BAD_CLUSTERS = {
    "three parts": "a/b/c",
    "no namespace": "/x",
    "no name": "ns/",
    "only a slash": "/",
    "empty": "",
    "upper case and underscore in the namespace": "Ns_1/x",
    "a dot in the namespace": "team.a/x",
    "a namespace ending in a dash": "team-/x",
    "a namespace of 64 characters": "n" * 64 + "/c",
    "a bare name of 254 characters": "a" * 254,
    "a name of 254 characters after a namespace": "n/" + "c" * 254,
    "a bad name after a namespace": "ns/Local_Cluster",
    "a bare name that is no object name": "Local_Cluster",
    "a trailing line break": "local\n",
    "a space": "ns /x",
}


@EVALUATORS
@pytest.mark.parametrize("cluster", GOOD_CLUSTERS)
def test_a_name_or_a_namespace_and_a_name_is_accepted(evaluator: type[CelRules], cluster: str) -> None:
    assert evaluator(TOPIC_SCHEMA).check(_topic(cluster)) == []


@EVALUATORS
@pytest.mark.parametrize("cluster", list(BAD_CLUSTERS.values()), ids=list(BAD_CLUSTERS))
def test_any_other_cluster_is_refused_naming_the_accepted_forms(
    evaluator: type[CelRules], cluster: str
) -> None:
    (failure,) = evaluator(TOPIC_SCHEMA).check(_topic(cluster))
    assert (failure.field_path, failure.value, failure.message) == (
        "spec.cluster",
        cluster,
        CLUSTER_FORM_MESSAGE,
    )


@EVALUATORS
def test_the_cluster_stays_immutable_across_namespaces(evaluator: type[CelRules]) -> None:
    """Naming the same KafkaCluster another way is a change too: the reference stays as first written."""
    old = _topic("local")
    spelt_out = copy.deepcopy(old)
    spelt_out["spec"]["cluster"] = "team-a/local"
    assert [f.message for f in evaluator(TOPIC_SCHEMA).check(spelt_out, old)] == [
        "cluster is immutable; create a new KafkaTopic for a topic of another cluster"
    ]
    assert evaluator(TOPIC_SCHEMA).check(copy.deepcopy(spelt_out), spelt_out) == []


def test_the_cluster_keeps_its_bounds_and_its_printer_column() -> None:
    crd = yaml.safe_load((CRDS / "kafkatopics.kto.dev.yaml").read_text())
    cluster = TOPIC_SCHEMA["properties"]["spec"]["properties"]["cluster"]
    assert (cluster["type"], cluster["minLength"], cluster["maxLength"]) == ("string", 1, 63 + 1 + 253)
    description = " ".join(cluster["description"].split())
    assert "<namespace>/<name>" in description
    assert "spec.tenants" in description
    assert "Immutable" in description
    columns = {c["name"]: c["jsonPath"] for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]}
    assert columns["Cluster"] == ".spec.cluster"
    validator = jsonschema.Draft4Validator(TOPIC_SCHEMA)
    assert list(validator.iter_errors(_topic("platform/shared"))) == []
    assert [e.validator for e in validator.iter_errors(_topic("n/" + "c" * 316))] == ["maxLength"]


@pytest.mark.parametrize("cluster", GOOD_CLUSTERS)
def test_the_clusters_pattern_takes_both_forms(cluster: str) -> None:
    assert list(jsonschema.Draft4Validator(TOPIC_SCHEMA).iter_errors(_topic(cluster))) == []


@pytest.mark.parametrize(
    "cluster",
    ["a/b/c", "/x", "ns/", "Ns_1/x", "team.a/x", "n" * 64 + "/c", "ns/Local_Cluster", "Local_Cluster"],
)
def test_the_clusters_pattern_refuses_other_forms_without_cel(cluster: str) -> None:
    """What checks the schema alone (the loader of kto plan and apply, editors) refuses them too; the CEL rule
    adds the message that names the accepted forms. Lengths past a part's bound are the CEL rule's alone."""
    errors = list(jsonschema.Draft4Validator(TOPIC_SCHEMA).iter_errors(_topic(cluster)))
    assert [(list(e.absolute_path), e.validator) for e in errors] == [(["spec", "cluster"], "pattern")]


# ---- KafkaCluster spec.tenants: the CEL rules ------------------------------------------------------------------


@EVALUATORS
def test_good_grants_pass_every_rule(evaluator: type[CelRules]) -> None:
    assert evaluator(CLUSTER_SCHEMA).check(_cluster(*GOOD_GRANTS)) == []
    assert evaluator(CLUSTER_SCHEMA).check(_cluster()) == []


BAD_GRANTS: dict[str, tuple[dict[str, Any], str, str]] = {
    "neither namespaces nor a selector": (
        {"topicPrefixes": ["team-a."], "quota": {"topics": 5}},
        "spec.tenants[0]",
        GRANT_MESSAGE,
    ),
    "an empty selector": (
        {"namespaceSelector": {}},
        "spec.tenants[0].namespaceSelector",
        EMPTY_SELECTOR_MESSAGE,
    ),
    "a selector of empty lists": (
        {"namespaceSelector": {"matchLabels": {}, "matchExpressions": []}},
        "spec.tenants[0].namespaceSelector",
        EMPTY_SELECTOR_MESSAGE,
    ),
    "In without values": (
        {"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "In"}]}},
        "spec.tenants[0].namespaceSelector.matchExpressions[0].values",
        IN_MESSAGE,
    ),
    "NotIn with no value": (
        {"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": []}]}},
        "spec.tenants[0].namespaceSelector.matchExpressions[0].values",
        IN_MESSAGE,
    ),
    "Exists with values": (
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "env", "operator": "Exists", "values": ["prod"]}]
            }
        },
        "spec.tenants[0].namespaceSelector.matchExpressions[0].values",
        EXISTS_MESSAGE,
    ),
    "DoesNotExist with values": (
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "x", "operator": "DoesNotExist", "values": ["y"]}]
            }
        },
        "spec.tenants[0].namespaceSelector.matchExpressions[0].values",
        EXISTS_MESSAGE,
    ),
    "a label key starting with a dash": (
        {"namespaceSelector": {"matchLabels": {"-team": "a"}}},
        "spec.tenants[0].namespaceSelector.matchLabels",
        LABEL_KEY_MESSAGE,
    ),
    "a label key whose name has 64 characters": (
        {"namespaceSelector": {"matchLabels": {"example.com/" + "n" * 64: "a"}}},
        "spec.tenants[0].namespaceSelector.matchLabels",
        LABEL_KEY_MESSAGE,
    ),
    "a label key with two slashes": (
        {"namespaceSelector": {"matchLabels": {"a/b/c": "a"}}},
        "spec.tenants[0].namespaceSelector.matchLabels",
        LABEL_KEY_MESSAGE,
    ),
    "a label key with an upper-case prefix": (
        {"namespaceSelector": {"matchLabels": {"Example.com/team": "a"}}},
        "spec.tenants[0].namespaceSelector.matchLabels",
        LABEL_KEY_MESSAGE,
    ),
    "min above max": (
        {"namespaces": ["team-a"], "limits": {"min": {"partitions": 12}, "max": {"partitions": 6}}},
        "spec.tenants[0].limits.min",
        MIN_MAX_MESSAGE,
    ),
    "a limit name of upper case": (
        {"namespaces": ["team-a"], "limits": {"max": {"Retention.ms": 1}}},
        "spec.tenants[0].limits.max",
        LIMIT_NAME_MESSAGE,
    ),
    "a limit name of 250 characters": (
        {"namespaces": ["team-a"], "limits": {"min": {"a" * 250: 1}}},
        "spec.tenants[0].limits.min",
        LIMIT_NAME_MESSAGE,
    ),
}


@EVALUATORS
@pytest.mark.parametrize(("grant", "where", "message"), list(BAD_GRANTS.values()), ids=list(BAD_GRANTS))
def test_a_bad_grant_is_refused_in_its_rules_words(
    evaluator: type[CelRules], grant: dict[str, Any], where: str, message: str
) -> None:
    failures = evaluator(CLUSTER_SCHEMA).check(_cluster(*GOOD_GRANTS, grant))
    shifted = where.replace("spec.tenants[0]", f"spec.tenants[{len(GOOD_GRANTS)}]")
    assert [(f.field_path, f.message) for f in failures] == [(shifted, message)]


@EVALUATORS
def test_min_and_max_are_compared_only_for_names_both_give(evaluator: type[CelRules]) -> None:
    grant = {
        "namespaces": ["team-a"],
        "limits": {"min": {"partitions": 12, "replicas": 3}, "max": {"replicas": 3, "retention.ms": 1}},
    }
    assert evaluator(CLUSTER_SCHEMA).check(_cluster(grant)) == []


def test_a_failure_carries_the_refused_value() -> None:
    limits = {"min": {"partitions": 12}, "max": {"partitions": 6}}
    assert FastCelRules(CLUSTER_SCHEMA).check(_cluster({"namespaces": ["a"], "limits": limits})) == [
        CelFailure(
            "spec.tenants[0].limits.min",
            {"partitions": 12},
            "!has(self.min) || !has(self.max) || self.min.all(k, !(k in self.max) || self.min[k] <= self.max[k])",
            MIN_MAX_MESSAGE,
        )
    ]


# ---- KafkaCluster spec.tenants and status: the OpenAPI schema --------------------------------------------------


def _schema_errors(document: Mapping[str, Any]) -> list[tuple[list[object], str]]:
    validator = jsonschema.Draft4Validator(CLUSTER_SCHEMA)
    return [(list(e.absolute_path), str(e.validator)) for e in validator.iter_errors(document)]


def test_good_grants_and_a_status_validate_against_the_schema() -> None:
    status = {
        "tenants": [
            {"namespace": "platform", "topics": 3, "partitions": 18},
            {
                "namespace": "team-a",
                "topics": 2,
                "partitions": 12,
                "quota": {"topics": 50, "partitions": 600},
            },
            {"namespace": "team-b", "topics": 0, "partitions": 0, "quota": {"partitions": 100}},
        ],
        "tenantErrors": [
            "spec.tenants[3].namespaceSelector.matchLabels = {'-x': 'a'}: every matchLabels key must be a label key"
        ],
    }
    assert _schema_errors(_cluster(*GOOD_GRANTS, **status)) == []


BAD_SCHEMA: dict[str, tuple[dict[str, Any], list[object], str]] = {
    "an empty prefix": (
        {"namespaces": ["a"], "topicPrefixes": [""]},
        ["topicPrefixes", 0],
        "minLength pattern",
    ),
    "a prefix Kafka cannot take": (
        {"namespaces": ["a"], "topicPrefixes": ["a b"]},
        ["topicPrefixes", 0],
        "pattern",
    ),
    "no prefix": ({"namespaces": ["a"], "topicPrefixes": []}, ["topicPrefixes"], "minItems"),
    "a negative topic quota": (
        {"namespaces": ["a"], "quota": {"topics": -1}},
        ["quota", "topics"],
        "minimum",
    ),
    "a negative partition quota": (
        {"namespaces": ["a"], "quota": {"partitions": -5}},
        ["quota", "partitions"],
        "minimum",
    ),
    "a topic quota past its bound": (
        {"namespaces": ["a"], "quota": {"topics": 1000001}},
        ["quota", "topics"],
        "maximum",
    ),
    "no namespace": ({"namespaces": []}, ["namespaces"], "minItems"),
    "a namespace that is no DNS label": ({"namespaces": ["team.a"]}, ["namespaces", 0], "pattern"),
    "a namespace of 64 characters": ({"namespaces": ["n" * 64]}, ["namespaces", 0], "maxLength"),
    "an unknown operator": (
        {"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Matches"}]}},
        ["namespaceSelector", "matchExpressions", 0, "operator"],
        "enum",
    ),
    "a requirement without a key": (
        {"namespaceSelector": {"matchExpressions": [{"operator": "Exists"}]}},
        ["namespaceSelector", "matchExpressions", 0],
        "required",
    ),
    "a bad label value": (
        {"namespaceSelector": {"matchLabels": {"team": "-a"}}},
        ["namespaceSelector", "matchLabels", "team"],
        "pattern",
    ),
    "a limit that is not an integer": (
        {"namespaces": ["a"], "limits": {"max": {"retention.ms": "7d"}}},
        ["limits", "max", "retention.ms"],
        "type",
    ),
    "an allowed config key of upper case": (
        {"namespaces": ["a"], "limits": {"allowedConfigs": ["Retention.ms"]}},
        ["limits", "allowedConfigs", 0],
        "pattern",
    ),
    "allowDelete as a string": ({"namespaces": ["a"], "allowDelete": "yes"}, ["allowDelete"], "type"),
}


@pytest.mark.parametrize(("grant", "path", "keywords"), list(BAD_SCHEMA.values()), ids=list(BAD_SCHEMA))
def test_the_schema_refuses_a_bad_grant(grant: dict[str, Any], path: list[object], keywords: str) -> None:
    """Each refusal at its field, by the keywords named (an empty prefix breaks minLength and the pattern)."""
    expected = [(["spec", "tenants", 0, *path], keyword) for keyword in keywords.split()]
    assert sorted(_schema_errors(_cluster(grant)), key=str) == sorted(expected, key=str)


def test_the_lists_and_maps_are_bounded_for_the_api_servers_cel_budget() -> None:
    tenants = CLUSTER_SCHEMA["properties"]["spec"]["properties"]["tenants"]
    grant = tenants["items"]["properties"]
    selector = grant["namespaceSelector"]["properties"]
    limits = grant["limits"]["properties"]
    assert tenants["maxItems"] == 100
    assert tenants["x-kubernetes-list-type"] == "atomic"  # order matters: the first match applies
    assert (grant["namespaces"]["maxItems"], grant["namespaces"]["items"]["maxLength"]) == (1000, 63)
    assert grant["namespaces"]["x-kubernetes-list-type"] == "set"
    assert (selector["matchLabels"]["maxProperties"], selector["matchExpressions"]["maxItems"]) == (64, 32)
    assert selector["matchExpressions"]["items"]["properties"]["values"]["maxItems"] == 256
    assert (grant["topicPrefixes"]["maxItems"], grant["topicPrefixes"]["items"]["maxLength"]) == (100, 249)
    assert (limits["min"]["maxProperties"], limits["max"]["maxProperties"]) == (64, 64)
    assert limits["max"]["additionalProperties"] == {
        "type": "integer",
        "format": "int64",
        "description": "The greatest value.",
    }
    assert (limits["allowedConfigs"]["maxItems"], limits["allowedConfigs"]["items"]["maxLength"]) == (
        200,
        249,
    )
    assert grant["allowDelete"]["default"] is False
    status = CLUSTER_SCHEMA["properties"]["status"]["properties"]
    assert status["tenants"]["maxItems"] == 10000
    assert (status["tenantErrors"]["maxItems"], status["tenantErrors"]["items"]["maxLength"]) == (100, 1024)


def test_the_descriptions_say_what_a_grant_means() -> None:
    tenants = CLUSTER_SCHEMA["properties"]["spec"]["properties"]["tenants"]
    text = " ".join(tenants["description"].split())
    for words in ("always granted, without limits", "first entry that matches", "may not use this cluster"):
        assert words in text, words
    limits = " ".join(tenants["items"]["properties"]["limits"]["description"].split())
    assert "-1 (unlimited) counts as above any max" in limits
    delete = " ".join(tenants["items"]["properties"]["allowDelete"]["description"].split())
    assert "KafkaCluster's own allowDelete must allow it too" in delete


# ---- the functions agree with cel-python -----------------------------------------------------------------------

SMALL = st.integers(min_value=-2, max_value=8)
LABEL_KEYS = st.one_of(
    st.sampled_from(
        [
            "team",
            "kto.dev/tenant",
            "-bad",
            "a/b/c",
            "Example.com/x",
            "n" * 63,
            "n" * 64,
            "p/" + "n" * 63,
            "",
            "/x",
        ]
    ),
    st.text(alphabet="aZ9-_./\n", max_size=8),
)
LIMIT_NAMES = st.one_of(
    st.sampled_from(["partitions", "replicas", "retention.ms", "Retention", "", "a" * 249, "a" * 250]),
    st.text(alphabet="az.-_\n", max_size=6),
)
OPERATORS = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"])


@st.composite
def requirements(draw: st.DrawFn) -> dict[str, Any]:
    requirement: dict[str, Any] = {"key": "env"}
    if draw(st.integers(0, 9)):
        requirement["operator"] = draw(OPERATORS)
    if draw(st.booleans()):
        requirement["values"] = draw(st.lists(st.sampled_from(["a", "b"]), max_size=2))
    return requirement


@st.composite
def grants(draw: st.DrawFn) -> dict[str, Any]:
    grant: dict[str, Any] = {}
    if draw(st.booleans()):
        grant["namespaces"] = draw(st.lists(st.sampled_from(["team-a", "team-b"]), max_size=2))
    if draw(st.booleans()):
        selector: dict[str, Any] = {}
        if draw(st.booleans()):
            selector["matchLabels"] = draw(st.dictionaries(LABEL_KEYS, st.just("v"), max_size=3))
        if draw(st.booleans()):
            selector["matchExpressions"] = draw(st.lists(requirements(), max_size=3))
        grant["namespaceSelector"] = selector
    if draw(st.booleans()):
        limits: dict[str, Any] = {}
        for bound in ("min", "max"):
            if draw(st.booleans()):
                limits[bound] = draw(st.dictionaries(LIMIT_NAMES, SMALL, max_size=3))
        grant["limits"] = limits
    return grant


def verdicts(failures: list[CelFailure]) -> list[tuple[str, object, str, bool]]:
    """Where, the value, the rule, and whether it failed or could not be evaluated."""
    return [(f.field_path, f.value, f.rule, "(rule evaluation error:" in f.message) for f in failures]


CLUSTER_FAST, CLUSTER_REFERENCE = FastCelRules(CLUSTER_SCHEMA), CelRules(CLUSTER_SCHEMA)
TOPIC_FAST, TOPIC_REFERENCE = FastCelRules(TOPIC_SCHEMA), CelRules(TOPIC_SCHEMA)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tenants=st.lists(grants(), max_size=3))
def test_on_generated_grants_the_functions_agree_with_cel_python(tenants: list[dict[str, Any]]) -> None:
    document = _cluster(*tenants)
    assert verdicts(CLUSTER_FAST.check(document)) == verdicts(CLUSTER_REFERENCE.check(document))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=st.one_of(
        st.sampled_from([*GOOD_CLUSTERS, *BAD_CLUSTERS.values()]),
        st.text(alphabet="az09-./_A\n ", max_size=12),
        st.builds(
            lambda a, b: a + b, st.sampled_from(["", "n/", "n" * 63 + "/"]), st.text("a.-", max_size=300)
        ),
    )
)
def test_on_generated_cluster_names_the_functions_agree_with_cel_python(cluster: str) -> None:
    document = _topic(cluster)
    assert verdicts(TOPIC_FAST.check(document)) == verdicts(TOPIC_REFERENCE.check(document))


@pytest.mark.parametrize("rule", sorted({r.rule for r in CLUSTER_FAST.rules if r.path[:2] == GRANT[:2]}))
def test_the_generated_grants_break_each_rule(rule: str) -> None:
    """The agreement above means something for every rule: generated grants break each of them (and the good
    grants above keep them all)."""
    failing = find(
        st.lists(grants(), min_size=1, max_size=3),
        lambda tenants: any(f.rule == rule for f in CLUSTER_FAST.check(_cluster(*tenants))),
        settings=settings(max_examples=5000, deadline=None, database=None),
    )
    assert any(f.rule == rule for f in CLUSTER_REFERENCE.check(_cluster(*failing)))
