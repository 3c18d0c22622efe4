"""The CRDs' CEL rules as Python functions: what ``kto validate`` evaluates, a thousand times faster than cel-python.

cel-python interprets a rule by walking its parse tree, about a millisecond per rule and document, and converts
the whole object it is given (config values included) to CEL values first: 100,000 topics took minutes, and an
unusual config value made a rule about ``replicaAssignment`` fail to evaluate. Each rule of our CRDs is short, so
each has a Python function here that evaluates the same expression with CEL's semantics (``has``, ``size``,
``all``, ``||`` that is true when either side is, errors where CEL has them), touching only the fields the rule
names. The CRD's rule text stays the source of truth: the function is found by the exact text, a rule without one
is evaluated by cel-python, and tests hold every function to cel-python's verdict on generated documents and
require a function for every rule the CRDs carry, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, Final

from topic_operator.crd.cel_rules import (
    CelFailure,
    CelRule,
    RuleOutcome,
    check_rules,
    evaluate_with_cel_python,
    rules_of,
)

__all__ = ["EQUIVALENTS", "FastCelRules", "normalized_rule"]

_WRONG_TYPE: Final = "the value has the wrong type for this rule"


class _RuleError(Exception):
    """A rule that cannot be evaluated on this value (CEL's error value)."""


def normalized_rule(rule: str) -> str:
    """A rule's text with its whitespace collapsed: a folded YAML scalar and a one-liner name the same rule."""
    return " ".join(rule.split())


def _cel_type(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, list):
        return "list"
    if value is None:
        return "null"
    return type(value).__name__


def _member(value: object, name: str) -> Any:
    """``value.name``: an error on anything but a map, and on a map without the key."""
    if not isinstance(value, Mapping):
        raise _RuleError(_WRONG_TYPE)
    if name not in value:
        raise _RuleError(f"no such member in mapping: {name!r}")
    return value[name]


def _has(value: object, name: str) -> bool:
    """``has(value.name)``."""
    if not isinstance(value, Mapping):
        raise _RuleError(_WRONG_TYPE)
    return name in value


def _size(value: object) -> int:
    if isinstance(value, (list, str, bytes, Mapping)):
        return len(value)
    raise _RuleError(_WRONG_TYPE)


def _equal(left: object, right: object) -> bool:
    """``==`` on values of one CEL type (both operands must have it, as cel-python requires)."""
    if _cel_type(left) != _cel_type(right):
        raise _RuleError(_WRONG_TYPE)
    return left == right


def _at_least(left: object, right: object) -> bool:
    """``>=`` on two ints, two doubles or two strings."""
    kind = _cel_type(left)
    if kind != _cel_type(right) or kind not in ("int", "double", "string"):
        raise _RuleError(_WRONG_TYPE)
    return bool(left >= right)  # type: ignore[operator]


def _greater(left: object, right: object) -> bool:
    """``>`` on two ints, two doubles or two strings."""
    return _less(right, left)


def _less(left: object, right: object) -> bool:
    """``<`` on two ints, two doubles or two strings."""
    kind = _cel_type(left)
    if kind != _cel_type(right) or kind not in ("int", "double", "string"):
        raise _RuleError(_WRONG_TYPE)
    return bool(left < right)  # type: ignore[operator]


def _in(key: object, container: object) -> bool:
    """``key in container``: a map's keys or a list's items."""
    if isinstance(container, Mapping):
        return key in container
    if isinstance(container, list):
        return any(_cel_type(item) == _cel_type(key) and item == key for item in container)
    raise _RuleError(_WRONG_TYPE)


def _index(container: object, key: object) -> Any:
    """``container[key]`` on a map: an error when the key is absent."""
    if not isinstance(container, Mapping):
        raise _RuleError(_WRONG_TYPE)
    if key not in container:
        raise _RuleError(f"no such key: {key!r}")
    return container[key]


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` as RE2 reads it in CEL's ``matches``: unanchored unless it says so, ``$`` the end of the text
    (Python's ``$`` also matches before a final line break)."""
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)


def _matches(text: object, pattern: str) -> bool:
    """``text.matches(pattern)``: RE2's search, true when the pattern matches anywhere in the text."""
    if not isinstance(text, str):
        raise _RuleError(_WRONG_TYPE)
    return _regex(pattern).search(text) is not None


def _and(*operands: Callable[[], bool]) -> bool:
    """CEL's ``&&``: false if any operand is false, even when another is an error; else the first error; else
    true."""
    error: _RuleError | None = None
    for operand in operands:
        try:
            if not _boolean(operand()):
                return False
        except _RuleError as found:
            error = error or found
    if error is not None:
        raise error
    return True


def _or(*operands: Callable[[], bool]) -> bool:
    """CEL's ``||``: true if any operand is true, even when another is an error; else the first error; else
    false."""
    error: _RuleError | None = None
    for operand in operands:
        try:
            if _boolean(operand()):
                return True
        except _RuleError as found:
            error = error or found
    if error is not None:
        raise error
    return False


def _all(items: object, predicate: Callable[[Any], bool]) -> bool:
    """CEL's ``all`` macro over a list (or a map's keys): false if any item is false, even when another is an
    error; else the first error; else true."""
    if isinstance(items, Mapping):
        items = list(items)
    if not isinstance(items, list):
        raise _RuleError(_WRONG_TYPE)
    error: _RuleError | None = None
    for item in items:
        try:
            if not _boolean(predicate(item)):
                return False
        except _RuleError as found:
            error = error or found
    if error is not None:
        raise error
    return True


def _boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise _RuleError(_WRONG_TYPE)
    return value


def _effective_topic_name(topic: object) -> Any:
    """``has(x.spec.topicName) ? x.spec.topicName : x.metadata.name``."""
    spec = _member(topic, "spec")
    return (
        _member(spec, "topicName") if _has(spec, "topicName") else _member(_member(topic, "metadata"), "name")
    )


def _topic_name_unchanged(a: Mapping[str, Any]) -> bool:
    return _equal(_effective_topic_name(a["self"]), _effective_topic_name(a["oldSelf"]))


def _assignment_has_one_entry_per_partition(a: Mapping[str, Any]) -> bool:
    spec = a["self"]
    return _or(
        lambda: not _has(spec, "replicaAssignment"),
        lambda: _equal(_size(_member(spec, "replicaAssignment")), _member(spec, "partitions")),
    )


def _assignment_entries_list_replicas(a: Mapping[str, Any]) -> bool:
    spec = a["self"]
    return _or(
        lambda: not _has(spec, "replicaAssignment"),
        lambda: _all(
            _member(spec, "replicaAssignment"), lambda entry: _equal(_size(entry), _member(spec, "replicas"))
        ),
    )


def _one_of_only_and_all_but(a: Mapping[str, Any]) -> bool:
    managed = a["self"]
    return _has(managed, "only") != _has(managed, "allBut")


_NAMESPACE_PREFIX: Final = "([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?"
_DNS_SUBDOMAIN: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
CLUSTER_REFERENCE: Final = f"^{_NAMESPACE_PREFIX}{_DNS_SUBDOMAIN}$"
"""A KafkaTopic's ``spec.cluster``: a KafkaCluster name, or ``<namespace>/<name>`` (a DNS-1123 label, ``/``)."""
CLUSTER_REFERENCE_LENGTHS: Final = "^([^/]+/)?[^/]{1,253}$"
"""The name of ``spec.cluster``, bare or after its namespace, has at most 253 characters."""
LABEL_KEY: Final = f"^({_DNS_SUBDOMAIN}/)?[A-Za-z0-9]([-A-Za-z0-9_.]{{0,61}}[A-Za-z0-9])?$"
"""A Kubernetes label key: an optional DNS subdomain prefix and ``/``, then a name of at most 63 characters."""
LIMIT_NAME: Final = "^[a-z0-9.]+$"
"""A name of a tenant grant's ``limits.min``/``limits.max``: partitions, replicas or a topic config key."""


def _cluster_reference_is_well_formed(a: Mapping[str, Any]) -> bool:
    cluster = a["self"]
    return _and(
        lambda: _matches(cluster, CLUSTER_REFERENCE), lambda: _matches(cluster, CLUSTER_REFERENCE_LENGTHS)
    )


def _grant_names_namespaces(a: Mapping[str, Any]) -> bool:
    grant = a["self"]
    return _or(lambda: _has(grant, "namespaces"), lambda: _has(grant, "namespaceSelector"))


def _selector_is_not_empty(a: Mapping[str, Any]) -> bool:
    selector = a["self"]
    return _or(
        lambda: _and(
            lambda: _has(selector, "matchLabels"),
            lambda: _greater(_size(_member(selector, "matchLabels")), 0),
        ),
        lambda: _and(
            lambda: _has(selector, "matchExpressions"),
            lambda: _greater(_size(_member(selector, "matchExpressions")), 0),
        ),
    )


def _label_keys_are_label_keys(a: Mapping[str, Any]) -> bool:
    return _all(
        a["self"], lambda key: _and(lambda: _at_least(317, _size(key)), lambda: _matches(key, LABEL_KEY))
    )


def _operator_is_not(requirement: object, *operators: str) -> bool:
    """``self.operator != 'A' && self.operator != 'B'``."""
    return _and(*(lambda o=o: not _equal(_member(requirement, "operator"), o) for o in operators))


def _set_based_operator_has_values(a: Mapping[str, Any]) -> bool:
    requirement = a["self"]
    return _or(
        lambda: _operator_is_not(requirement, "In", "NotIn"),
        lambda: _and(
            lambda: _has(requirement, "values"), lambda: _greater(_size(_member(requirement, "values")), 0)
        ),
    )


def _existence_operator_has_no_values(a: Mapping[str, Any]) -> bool:
    requirement = a["self"]
    return _or(
        lambda: _operator_is_not(requirement, "Exists", "DoesNotExist"),
        lambda: not _has(requirement, "values"),
        lambda: _equal(_size(_member(requirement, "values")), 0),
    )


def _limit_minimums_within_maximums(a: Mapping[str, Any]) -> bool:
    limits = a["self"]

    def within(name: object) -> bool:
        low, high = _member(limits, "min"), _member(limits, "max")
        return _or(lambda: not _in(name, high), lambda: _at_least(_index(high, name), _index(low, name)))

    return _or(
        lambda: not _has(limits, "min"),
        lambda: not _has(limits, "max"),
        lambda: _all(_member(limits, "min"), within),
    )


def _limit_names_are_config_keys(a: Mapping[str, Any]) -> bool:
    return _all(
        a["self"], lambda name: _and(lambda: _at_least(249, _size(name)), lambda: _matches(name, LIMIT_NAME))
    )


EQUIVALENTS: Final[Mapping[str, Callable[[Mapping[str, Any]], bool]]] = {
    normalized_rule(rule): function
    for rule, function in (
        (
            "(has(self.spec.topicName) ? self.spec.topicName : self.metadata.name) == "
            "(has(oldSelf.spec.topicName) ? oldSelf.spec.topicName : oldSelf.metadata.name)",
            _topic_name_unchanged,
        ),
        (
            "!has(self.replicaAssignment) || self.replicaAssignment.size() == self.partitions",
            _assignment_has_one_entry_per_partition,
        ),
        (
            "!has(self.replicaAssignment) || self.replicaAssignment.all(r, r.size() == self.replicas)",
            _assignment_entries_list_replicas,
        ),
        ("has(self.only) != has(self.allBut)", _one_of_only_and_all_but),
        ("self == oldSelf", lambda a: _equal(a["self"], a["oldSelf"])),
        ("self >= oldSelf", lambda a: _at_least(a["self"], a["oldSelf"])),
        ("self >= 1", lambda a: _at_least(a["self"], 1)),
        (
            f"self.matches('{CLUSTER_REFERENCE}') && self.matches('{CLUSTER_REFERENCE_LENGTHS}')",
            _cluster_reference_is_well_formed,
        ),
        ("has(self.namespaces) || has(self.namespaceSelector)", _grant_names_namespaces),
        (
            "(has(self.matchLabels) && self.matchLabels.size() > 0) || "
            "(has(self.matchExpressions) && self.matchExpressions.size() > 0)",
            _selector_is_not_empty,
        ),
        (f"self.all(k, k.size() <= 317 && k.matches('{LABEL_KEY}'))", _label_keys_are_label_keys),
        (
            "(self.operator != 'In' && self.operator != 'NotIn') || (has(self.values) && self.values.size() > 0)",
            _set_based_operator_has_values,
        ),
        (
            "(self.operator != 'Exists' && self.operator != 'DoesNotExist') || !has(self.values) || "
            "self.values.size() == 0",
            _existence_operator_has_no_values,
        ),
        (
            "!has(self.min) || !has(self.max) || "
            "self.min.all(k, !(k in self.max) || self.min[k] <= self.max[k])",
            _limit_minimums_within_maximums,
        ),
        (f"self.all(k, k.size() <= 249 && k.matches('{LIMIT_NAME}'))", _limit_names_are_config_keys),
    )
}
"""Rule text (whitespace collapsed) -> the same expression in Python."""


def evaluate_equivalent(rule: CelRule, activation: Mapping[str, Any]) -> RuleOutcome:
    """The Python function's verdict on one rule (None, "" or why it could not be evaluated); cel-python's for a
    rule that has no function."""
    function = _equivalent_of(rule.rule)
    if function is None:
        return evaluate_with_cel_python(rule, activation)
    try:
        return None if _boolean(function(activation)) else ""
    except _RuleError as error:
        return str(error)


@cache
def _equivalent_of(rule: str) -> Callable[[Mapping[str, Any]], bool] | None:
    return EQUIVALENTS.get(normalized_rule(rule))


class FastCelRules:
    """The rules of one CRD schema, evaluated by their Python functions (same interface as ``CelRules``)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.rules: Sequence[CelRule] = rules_of(schema)

    @property
    def without_equivalent(self) -> tuple[CelRule, ...]:
        """Rules that fall back to cel-python (a test requires none for the shipped CRDs)."""
        return tuple(r for r in self.rules if normalized_rule(r.rule) not in EQUIVALENTS)

    def check(self, new: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[CelFailure]:
        return check_rules(self.rules, new, old, evaluate_equivalent)
