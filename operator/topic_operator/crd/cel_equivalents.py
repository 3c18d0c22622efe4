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
        ("self == oldSelf", lambda a: _equal(a["self"], a["oldSelf"])),
        ("self >= oldSelf", lambda a: _at_least(a["self"], a["oldSelf"])),
        ("self >= 1", lambda a: _at_least(a["self"], 1)),
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
