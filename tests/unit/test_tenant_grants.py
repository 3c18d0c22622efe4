"""A KafkaCluster's grants (``spec.tenants``) read into plain data: ``grants.read_tenancy``.

What is proven, and why it matters:
- a good ``spec.tenants`` reads into exactly the grants it says, in order;
- every grant that cannot be read grants nothing, and its problem names ``spec.tenants[i].<field>``, the value
  and the rule, so the platform team can fix it from the KafkaCluster's status alone;
- a bad grant never grants everything: for arbitrary JSON-ish ``tenants``, ``read_tenancy`` never raises, and a
  namespace is granted only by an entry that lists it or by a non-empty selector that matches its labels
  (checked against a reference of Kubernetes' label-selector semantics written here from the raw value);
- the selector has Kubernetes' meaning (In, NotIn, Exists, DoesNotExist; matchLabels AND expressions), an empty
  one is refused, unknown labels match only a listed name;
- the first entry that matches applies, and the KafkaCluster's own namespace always has the unlimited grant;
- ``cluster_reference`` resolves ``<namespace>/<name>`` and a bare name as Kubernetes would.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.tenants.grants import (
    Grant,
    NamespaceSelector,
    Quota,
    Requirement,
    TopicLimits,
    cluster_reference,
    read_tenancy,
)

HOME = "kafka"

FALLBACK = {"namespaces": ["payments"], "quota": {"topics": 0}}
"""A readable grant of ``payments`` placed after a bad one: where the bad one grants nothing, this one applies."""


# -- good input --------------------------------------------------------------------------------------------------


def test_a_good_spec_tenants_reads_into_the_grants_it_says_in_order() -> None:
    tenancy = read_tenancy(
        HOME,
        [
            {
                "namespaces": ["payments", "billing"],
                "topicPrefixes": ["payments.", "billing."],
                "quota": {"topics": 50, "partitions": 600},
                "limits": {
                    "max": {"partitions": 48, "retention.ms": 1209600000},
                    "min": {"replicas": 3},
                    "allowedConfigs": ["retention.ms", "cleanup.policy"],
                },
                "allowDelete": True,
            },
            {
                "namespaceSelector": {
                    "matchLabels": {"kto.dev/tenant": "analytics"},
                    "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "staging"]}],
                },
                "quota": {"topics": 20},
            },
        ],
    )
    assert tenancy.problems == ()
    assert tenancy.grants == (
        Grant(
            0,
            frozenset({"payments", "billing"}),
            None,
            ("payments.", "billing."),
            Quota(50, 600),
            TopicLimits(
                {"replicas": 3},
                {"partitions": 48, "retention.ms": 1209600000},
                frozenset({"retention.ms", "cleanup.policy"}),
            ),
            allow_delete=True,
        ),
        Grant(
            1,
            selector=NamespaceSelector(
                (("kto.dev/tenant", "analytics"),),
                (Requirement("env", "In", frozenset({"prod", "staging"})),),
            ),
            quota=Quota(topics=20),
        ),
    )


def test_no_tenants_grant_only_the_home_namespace() -> None:
    no_tenants: tuple[object, ...] = (None, [])
    for tenants in no_tenants:
        tenancy = read_tenancy(HOME, tenants)
        assert (tenancy.grants, tenancy.problems) == ((), ())
        assert tenancy.grant_for("payments", {"kto.dev/tenant": "analytics"}) is None


def test_a_grant_with_only_names_needs_no_labels_and_limits_nothing_it_does_not_say() -> None:
    [grant] = read_tenancy(HOME, [{"namespaces": ["payments"]}]).grants
    assert grant.topic_prefixes == ()
    assert grant.allows_name("anything.at.all")
    assert grant.quota == Quota()
    assert not grant.quota.limited
    assert grant.limits == TopicLimits()
    assert not grant.allow_delete
    assert not grant.unlimited
    assert grant.path == "spec.tenants[0]"


def test_topic_prefixes_are_prefixes_not_patterns() -> None:
    [grant] = read_tenancy(
        HOME, [{"namespaces": ["payments"], "topicPrefixes": ["payments.", "pay_"]}]
    ).grants
    assert grant.allows_name("payments.orders")
    assert grant.allows_name("pay_x")
    assert not grant.allows_name("payments")  # the prefix is "payments." with its dot
    assert not grant.allows_name("xpayments.orders")
    assert not grant.allows_name("paymentsXorders")  # "." is not a wildcard


# -- bad input: each grants nothing and names field, value and rule ---------------------------------------------


BAD_GRANTS = [
    # (entry, field after spec.tenants[0], the value as shown or None when the rule alone says it, the rule)
    ("payments", "", "'payments'", "must be an object"),
    ({"namespaces": ["payments"], "namespace": "x"}, ".namespace", None, "unknown field (known: "),
    ({}, "", None, "a tenant grant names namespaces, a namespaceSelector or both"),
    ({"namespaces": []}, "", None, "a tenant grant names namespaces, a namespaceSelector or both"),
    ({"namespaces": "payments"}, ".namespaces", "'payments'", "must be a list"),
    (
        {"namespaces": ["Payments"]},
        ".namespaces[0]",
        "'Payments'",
        "must be a namespace name (DNS-1123 label, at most 63 characters)",
    ),
    ({"namespaces": ["payments", 7]}, ".namespaces[1]", "7", "must be a namespace name"),
    (
        {"namespaces": ["payments"], "topicPrefixes": []},
        ".topicPrefixes",
        "[]",
        "must list at least one prefix",
    ),
    (
        {"namespaces": ["payments"], "topicPrefixes": ["pay ments"]},
        ".topicPrefixes[0]",
        "'pay ments'",
        "must be a non-empty topic-name prefix of [a-zA-Z0-9._-]",
    ),
    ({"namespaces": ["payments"], "topicPrefixes": [""]}, ".topicPrefixes[0]", "''", "non-empty"),
    ({"namespaces": ["payments"], "allowDelete": "yes"}, ".allowDelete", "'yes'", "must be true or false"),
    (
        {"namespaceSelector": {}},
        ".namespaceSelector",
        "{}",
        "an empty namespaceSelector would grant every namespace",
    ),
    (
        {"namespaces": ["payments"], "namespaceSelector": {"matchLabels": {}, "matchExpressions": []}},
        ".namespaceSelector",
        "{}",
        "an empty namespaceSelector would grant every namespace",
    ),
    ({"namespaceSelector": "team=a"}, ".namespaceSelector", "'team=a'", "must be a label selector"),
    (
        {"namespaceSelector": {"matchLabel": {"team": "a"}}},
        ".namespaceSelector.matchLabel",
        None,
        "unknown field (known: matchExpressions, matchLabels)",
    ),
    (
        {"namespaceSelector": {"matchLabels": ["team", "a"]}},
        ".namespaceSelector.matchLabels",
        "['team', 'a']",
        "must be a map of label keys to values",
    ),
    (
        {"namespaceSelector": {"matchLabels": {"bad key!": "a"}}},
        ".namespaceSelector.matchLabels",
        "'bad key!'",
        "must be a label key",
    ),
    (
        {"namespaceSelector": {"matchLabels": {"team": "a b"}}},
        ".namespaceSelector.matchLabels.team",
        "'a b'",
        "must be a label value",
    ),
    (
        {"namespaceSelector": {"matchLabels": {"team": 7}}},
        ".namespaceSelector.matchLabels.team",
        "7",
        "must be a label value",
    ),
    (
        {"namespaceSelector": {"matchLabels": {"team": "x" * 64}}},
        ".namespaceSelector.matchLabels.team",
        "'xxxx",
        "must be a label value",
    ),
    (
        {"namespaceSelector": {"matchExpressions": "team in (a)"}},
        ".namespaceSelector.matchExpressions",
        "'team in (a)'",
        "must be a list",
    ),
    (
        {"namespaceSelector": {"matchExpressions": ["team"]}},
        ".namespaceSelector.matchExpressions[0]",
        "'team'",
        "must be an object with key, operator and values",
    ),
    (
        {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Equals", "values": ["a"]}]}},
        ".namespaceSelector.matchExpressions[0].operator",
        "'Equals'",
        "must be one of In, NotIn, Exists, DoesNotExist",
    ),
    (
        {"namespaceSelector": {"matchExpressions": [{"key": "-team", "operator": "Exists"}]}},
        ".namespaceSelector.matchExpressions[0].key",
        "'-team'",
        "must be a label key",
    ),
    (
        {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In"}]}},
        ".namespaceSelector.matchExpressions[0].values",
        "[]",
        "operator In needs at least one value",
    ),
    (
        {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": []}]}},
        ".namespaceSelector.matchExpressions[0].values",
        "[]",
        "operator NotIn needs at least one value",
    ),
    (
        {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["a"]}]}},
        ".namespaceSelector.matchExpressions[0].values",
        "['a']",
        "operator Exists takes no values",
    ),
    (
        {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In", "values": [1]}]}},
        ".namespaceSelector.matchExpressions[0].values",
        "[1]",
        "must be a list of label values",
    ),
    ({"namespaces": ["payments"], "quota": "lots"}, ".quota", "'lots'", "must be an object"),
    ({"namespaces": ["payments"], "quota": {"bytes": 1}}, ".quota.bytes", None, "unknown field"),
    (
        {"namespaces": ["payments"], "quota": {"topics": -1}},
        ".quota.topics",
        "-1",
        "must be a whole number, 0 or more",
    ),
    (
        {"namespaces": ["payments"], "quota": {"topics": True}},
        ".quota.topics",
        "True",
        "must be a whole number",
    ),
    (
        {"namespaces": ["payments"], "quota": {"partitions": 1.5}},
        ".quota.partitions",
        "1.5",
        "must be a whole number",
    ),
    ({"namespaces": ["payments"], "limits": []}, ".limits", "[]", "must be an object with min, max"),
    ({"namespaces": ["payments"], "limits": {"maximum": {}}}, ".limits.maximum", None, "unknown field"),
    (
        {"namespaces": ["payments"], "limits": {"max": {"partitions": "12"}}},
        ".limits.max.partitions",
        "'12'",
        "must be a whole number",
    ),
    (
        {"namespaces": ["payments"], "limits": {"min": {"Partitions": 1}}},
        ".limits.min",
        "'Partitions'",
        "must be partitions, replicas or a topic config key",
    ),
    (
        {"namespaces": ["payments"], "limits": {"max": {"partitions": 12}, "min": {"partitions": 13}}},
        ".limits.min.partitions",
        "13",
        "must not be above limits.max.partitions (12)",
    ),
]


def _shown_id(case: tuple[Any, ...]) -> str:
    return f"{case[1] or 'entry'}={case[2] or case[3][:20]}"


@pytest.mark.parametrize(
    ("entry", "field", "value", "rule"), BAD_GRANTS, ids=[_shown_id(c) for c in BAD_GRANTS]
)
def test_a_grant_that_cannot_be_read_grants_nothing_and_says_field_value_and_rule(
    entry: object, field: str, value: str | None, rule: str
) -> None:
    tenancy = read_tenancy(HOME, [entry, FALLBACK])
    [problem] = tenancy.problems
    where = f"spec.tenants[0]{field}"
    assert problem.startswith(f"{where}: {value or ''}")
    assert rule in problem
    assert problem.endswith("; this grant grants nothing")
    # Nothing of the bad entry survives: the readable entry after it is the one that applies to payments.
    assert [g.index for g in tenancy.grants] == [1]
    labels = {"team": "a", "kto.dev/tenant": "analytics"}
    fallback = tenancy.grant_for("payments", labels)
    assert fallback is not None
    assert (fallback.index, fallback.quota) == (1, Quota(topics=0))
    assert tenancy.grant_for("other", labels) is None


def test_spec_tenants_that_is_not_a_list_grants_nothing_and_says_so() -> None:
    for tenants, shown in (("payments", "'payments'"), ({"namespaces": ["payments"]}, "{'namespaces'")):
        tenancy = read_tenancy(HOME, tenants)
        assert tenancy.grants == ()
        [problem] = tenancy.problems
        assert problem.startswith(f"spec.tenants: {shown}")
        assert problem.endswith(": must be a list of grants")
        assert tenancy.grant_for("payments", {}) is None


def test_each_bad_grant_is_reported_with_its_own_index_and_the_good_ones_keep_theirs() -> None:
    tenancy = read_tenancy(
        HOME,
        [
            {"namespaces": ["a"]},
            {"namespaces": ["b"], "quota": {"topics": -1}},
            {"namespaces": ["c"]},
            {"namespaceSelector": {}},
        ],
    )
    assert [g.index for g in tenancy.grants] == [0, 2]
    assert [p.split(":")[0] for p in tenancy.problems] == [
        "spec.tenants[1].quota.topics",
        "spec.tenants[3].namespaceSelector",
    ]
    assert tenancy.grant_for("b", None) is None
    granted_c = tenancy.grant_for("c", None)
    assert granted_c is not None
    assert granted_c.path == "spec.tenants[2]"


def test_a_long_value_is_shown_shortened() -> None:
    [problem] = read_tenancy(HOME, [{"namespaces": ["payments"], "quota": {"topics": "x" * 200}}]).problems
    shown = problem.split(": ")[1]
    assert len(shown) == 80
    assert shown.endswith("...")


def test_a_bad_allowed_config_is_named_under_limits() -> None:
    [problem] = read_tenancy(
        HOME, [{"namespaces": ["payments"], "limits": {"allowedConfigs": ["Retention.MS"]}}]
    ).problems
    assert problem.startswith(
        "spec.tenants[0].limits.allowedConfigs[0]: 'Retention.MS': must be a topic config key"
    )


def test_a_bad_allowed_config_grants_nothing() -> None:
    for allowed, shown, rule in (
        (["Retention.MS"], "'Retention.MS'", "must be a topic config key"),
        ("retention.ms", "'retention.ms'", "must be a list"),
    ):
        tenancy = read_tenancy(HOME, [{"namespaces": ["payments"], "limits": {"allowedConfigs": allowed}}])
        assert tenancy.grants == ()
        [problem] = tenancy.problems
        assert "allowedConfigs" in problem
        assert f": {shown}: {rule}" in problem


@pytest.mark.parametrize(
    "entry",
    [
        {"namespaces": ["payments\n"]},
        {"namespaces": ["x" * 64]},
        {"namespaces": ["payments"], "topicPrefixes": ["payments.\n"]},
        {"namespaceSelector": {"matchLabels": {"team\n": "a"}}},
        {"namespaceSelector": {"matchExpressions": [{"key": "team\n", "operator": "DoesNotExist"}]}},
    ],
    ids=[
        "namespace-newline",
        "namespace-64-characters",
        "prefix-newline",
        "matchLabels-key-newline",
        "expression-key-newline",
    ],
)
def test_a_name_the_crd_refuses_is_refused_here_too(entry: Mapping[str, Any]) -> None:
    tenancy = read_tenancy(HOME, [entry])
    assert tenancy.grants == ()
    assert len(tenancy.problems) == 1


# -- selector semantics -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "values", "labels", "selected"),
    [
        ("In", {"a", "b"}, {"team": "a"}, True),
        ("In", {"a", "b"}, {"team": "c"}, False),
        ("In", {"a", "b"}, {}, False),
        ("In", {""}, {"team": ""}, True),
        ("NotIn", {"a", "b"}, {"team": "c"}, True),
        ("NotIn", {"a", "b"}, {"team": "a"}, False),
        ("NotIn", {"a", "b"}, {}, True),  # Kubernetes: NotIn selects objects without the key
        ("Exists", set(), {"team": ""}, True),
        ("Exists", set(), {"other": "a"}, False),
        ("DoesNotExist", set(), {"other": "a"}, True),
        ("DoesNotExist", set(), {"team": "a"}, False),
    ],
)
def test_each_operator_has_kubernetes_meaning(
    operator: str, values: set[str], labels: dict[str, str], selected: bool
) -> None:
    expression: dict[str, Any] = {"key": "team", "operator": operator}
    if values:
        expression["values"] = sorted(values)
    tenancy = read_tenancy(HOME, [{"namespaceSelector": {"matchExpressions": [expression]}}])
    assert tenancy.problems == ()
    assert Requirement("team", operator, frozenset(values)).matches(labels) is selected
    assert (tenancy.grant_for("ns", labels) is not None) is selected


def test_match_labels_and_expressions_must_all_hold() -> None:
    tenancy = read_tenancy(
        HOME,
        [
            {
                "namespaceSelector": {
                    "matchLabels": {"kto.dev/tenant": "analytics", "tier": "gold"},
                    "matchExpressions": [
                        {"key": "env", "operator": "In", "values": ["prod", "staging"]},
                        {"key": "frozen", "operator": "DoesNotExist"},
                    ],
                }
            }
        ],
    )
    everything = {"kto.dev/tenant": "analytics", "tier": "gold", "env": "prod"}
    assert tenancy.grant_for("clickstream", everything) is not None
    assert tenancy.grant_for("clickstream", {**everything, "unrelated": "x"}) is not None
    for missing in everything:
        assert tenancy.grant_for("clickstream", {k: v for k, v in everything.items() if k != missing}) is None
    assert tenancy.grant_for("clickstream", {**everything, "tier": "silver"}) is None
    assert tenancy.grant_for("clickstream", {**everything, "env": "dev"}) is None
    assert tenancy.grant_for("clickstream", {**everything, "frozen": "yes"}) is None


def test_match_labels_compare_values_exactly() -> None:
    selector = NamespaceSelector((("team", ""),))
    assert selector.matches({"team": ""})
    assert not selector.matches({})  # an empty value is a value: the key must be there
    assert not selector.matches({"team": "a"})


def test_unknown_labels_match_only_a_listed_name() -> None:
    tenancy = read_tenancy(
        HOME, [{"namespaces": ["payments"], "namespaceSelector": {"matchLabels": {"team": "a"}}}]
    )
    assert tenancy.grant_for("payments", None) is not None
    assert tenancy.grant_for("clickstream", None) is None
    assert tenancy.grant_for("clickstream", {"team": "a"}) is not None
    # Even a selector every labelled namespace passes does not grant a namespace whose labels are unknown.
    open_ended = read_tenancy(
        HOME, [{"namespaceSelector": {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}}]
    )
    assert open_ended.grant_for("clickstream", {}) is not None
    assert open_ended.grant_for("clickstream", None) is None


# -- which grant applies --------------------------------------------------------------------------------------------


def test_the_first_matching_grant_applies() -> None:
    tenancy = read_tenancy(
        HOME,
        [
            {"namespaceSelector": {"matchLabels": {"tier": "gold"}}, "quota": {"topics": 100}},
            {"namespaces": ["payments"], "quota": {"topics": 10}},
            {"namespaces": ["payments", "billing"], "quota": {"topics": 1}},
        ],
    )
    gold = tenancy.grant_for("payments", {"tier": "gold"})
    assert gold is not None
    assert (gold.index, gold.quota.topics) == (0, 100)
    listed = tenancy.grant_for("payments", {"tier": "silver"})
    assert listed is not None
    assert (listed.index, listed.quota.topics) == (1, 10)
    billing = tenancy.grant_for("billing", None)
    assert billing is not None
    assert (billing.index, billing.quota.topics) == (2, 1)


def test_the_home_namespace_is_always_granted_without_limits() -> None:
    tenancy = read_tenancy(
        HOME,
        [
            {
                "namespaces": [HOME],
                "topicPrefixes": ["kafka."],
                "quota": {"topics": 0, "partitions": 0},
                "limits": {"max": {"partitions": 1}},
            },
            {"namespaceSelector": {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}},
        ],
    )
    for labels in (None, {}, {"x": "y"}):
        home = tenancy.grant_for(HOME, labels)
        assert home is not None
        assert home.index == -1
        assert home.unlimited
        assert home.allow_delete
        assert home.allows_name("anything")
        assert home.quota == Quota()
        assert home.limits == TopicLimits()
    assert read_tenancy(HOME, "garbage").grant_for(HOME, None) is not None


# -- cluster references -----------------------------------------------------------------------------------------------


def test_cluster_reference_resolves_as_kubernetes_would() -> None:
    assert cluster_reference("payments", "kafka/main") == ("kafka", "main")
    assert cluster_reference("payments", "main") == ("payments", "main")
    assert cluster_reference("kafka", "kafka/main") == ("kafka", "main")


# -- property: never raises, never grants what the raw value does not ------------------------------------------------

NAMESPACE_NAMES = ("payments", "analytics", "other")
LABEL_KEYS = ("team", "env", "kto.dev/tenant")
LABEL_VALUES = ("a", "")

_scalars = st.none() | st.booleans() | st.integers(-2, 3) | st.floats(allow_nan=False) | st.text(max_size=4)
JSONISH = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
"""Any JSON value: what a KafkaCluster stored under an older CRD, or a manifest, may hold."""


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A well-formed value seven times in eight, else ``bad`` or any JSON value in its place."""
    return st.integers(1, 8).flatmap(lambda roll: st.one_of(bad, JSONISH) if roll == 1 else good)


_keys = _mostly(st.sampled_from(LABEL_KEYS), st.sampled_from(["bad key", "", "-team"]))
_values = _mostly(st.sampled_from(LABEL_VALUES), st.sampled_from(["a b", "x" * 64]))


def _expression(operator: str) -> st.SearchStrategy[Any]:
    values = st.lists(_values, min_size=1, max_size=2)
    if operator in ("Exists", "DoesNotExist"):
        fields = {"key": _keys, "operator": st.just(operator)}
        return st.fixed_dictionaries(fields, optional={"values": _mostly(st.just([]), values)})
    fields = {"key": _keys, "operator": st.just(operator), "values": _mostly(values, st.just([]))}
    return st.fixed_dictionaries(fields)


_expressions = _mostly(
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]).flatmap(_expression),
    st.fixed_dictionaries({"key": _keys, "operator": st.sampled_from(["in", "Equals", ""])}),
)
_label_keys = st.integers(1, 8).flatmap(
    lambda roll: st.sampled_from(["bad key", "", "-team", 7]) if roll == 1 else st.sampled_from(LABEL_KEYS)
)
"""Keys of matchLabels: hashable, so never any JSON value."""
_match_labels = _mostly(st.dictionaries(_label_keys, _values, min_size=1, max_size=2), st.just([]))
_match_expressions = _mostly(st.lists(_expressions, min_size=1, max_size=2), st.just("x"))
_selectors = _mostly(
    st.one_of(
        st.fixed_dictionaries(
            {"matchLabels": _match_labels}, optional={"matchExpressions": _match_expressions}
        ),
        st.fixed_dictionaries(
            {"matchExpressions": _match_expressions}, optional={"matchLabels": _match_labels}
        ),
    ),
    st.sampled_from([{}, {"matchLabels": {}, "matchExpressions": []}, {"matchLabel": {"team": "a"}}]),
)
_namespaces = _mostly(
    st.lists(st.sampled_from(NAMESPACE_NAMES), min_size=1, max_size=2),
    st.lists(st.sampled_from(["Bad", "", "payments "]), min_size=1, max_size=1),
)
_rest_of_a_grant = {
    "topicPrefixes": _mostly(st.lists(st.just("payments."), min_size=1, max_size=1), st.just([""])),
    "quota": _mostly(
        st.fixed_dictionaries({}, optional={"topics": st.integers(0, 5)}), st.just({"topics": -1})
    ),
    "limits": _mostly(
        st.fixed_dictionaries(
            {}, optional={"max": st.dictionaries(st.just("partitions"), st.integers(1, 5))}
        ),
        st.just({"max": {"P": 1}}),
    ),
    "allowDelete": _mostly(st.booleans(), st.just("yes")),
}
_entries = st.one_of(
    st.fixed_dictionaries(
        {"namespaces": _namespaces}, optional={"namespaceSelector": _selectors, **_rest_of_a_grant}
    ),
    st.fixed_dictionaries(
        {"namespaceSelector": _selectors}, optional={"namespaces": _namespaces, **_rest_of_a_grant}
    ),
)
TENANTS = _mostly(st.lists(_mostly(_entries, st.just({})), max_size=4), st.just("payments"))
LABELS = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=3)


def _reference_selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Kubernetes' label-selector semantics over the raw selector; an empty selector selects nothing here."""
    pairs = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not pairs and not expressions:
        return False
    if any(labels.get(key) != value for key, value in pairs.items()):
        return False
    for expression in expressions:
        key, values = expression["key"], expression.get("values") or []
        present = key in labels
        holds = {
            "In": present and labels.get(key) in values,
            "NotIn": not present or labels.get(key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }[expression["operator"]]
        if not holds:
            return False
    return True


def _raw_grants(entry: object, namespace: str, labels: Mapping[str, str] | None) -> bool:
    if not isinstance(entry, Mapping):
        return False
    listed = entry.get("namespaces")
    if isinstance(listed, list) and namespace in listed:
        return True
    selector = entry.get("namespaceSelector")
    return labels is not None and isinstance(selector, Mapping) and _reference_selects(selector, labels)


@settings(max_examples=500)
@given(tenants=TENANTS, namespace=st.sampled_from(NAMESPACE_NAMES), labels=st.none() | LABELS)
def test_any_tenants_value_never_raises_and_grants_only_what_an_entry_says(
    tenants: object, namespace: str, labels: Mapping[str, str] | None
) -> None:
    tenancy = read_tenancy(HOME, tenants)
    unreadable = {int(m.group(1)) for p in tenancy.problems if (m := re.match(r"spec\.tenants\[(\d+)\]", p))}
    assert all(p.startswith("spec.tenants") for p in tenancy.problems)
    assert not unreadable & {g.index for g in tenancy.grants}
    if isinstance(tenants, list):
        assert len(tenancy.grants) + len(tenancy.problems) == len(tenants)
        assert sorted([*unreadable, *(g.index for g in tenancy.grants)]) == list(range(len(tenants)))
    else:
        assert tenancy.grants == ()
    grant = tenancy.grant_for(namespace, labels)
    if grant is None:
        readable = [tenants[g.index] for g in tenancy.grants] if isinstance(tenants, list) else []
        assert not any(_raw_grants(entry, namespace, labels) for entry in readable)
        return
    assert isinstance(tenants, list)
    assert _raw_grants(tenants[grant.index], namespace, labels)
    assert not any(g.matches(namespace, labels) for g in tenancy.grants if g.index < grant.index)
    assert not grant.unlimited
