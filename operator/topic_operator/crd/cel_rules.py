"""The CRDs' ``x-kubernetes-validations`` rules, evaluated offline with cel-python as the API server would.

``kto validate`` runs them so that a manifest the API server would refuse at ``kubectl apply`` time fails in CI
first, with the CRD's own message; tests run the transition rules (``oldSelf``) to prove that a partition decrease
or a rename is refused before it ever reaches the operator.

Only what our CRDs use is modelled: rules on object properties and on list items, ``message`` and ``fieldPath``.
As in Kubernetes, a rule runs only where its field is present, and a transition rule (one that mentions
``oldSelf``) only on an update where the old object has the field too, never on list items (Kubernetes correlates
old and new items only for map lists, which our rules do not need). ``messageExpression`` is not evaluated: the
static ``message`` is reported.

Two evaluators share the walk: ``CelRules`` runs each rule's text through cel-python (the reference, a dev
dependency, about a millisecond a rule), ``cel_equivalents.FastCelRules`` runs a Python function written for each
rule of our CRDs (microseconds), which a test holds to cel-python's verdict on generated documents. cel-python is
imported only when a rule is evaluated with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["CelFailure", "CelRule", "CelRules", "RuleOutcome", "check_rules", "rules_of"]

_ITEMS = "[*]"
"""A path step meaning "every item of this list" (the schema's ``items``)."""

_OLD_SELF = re.compile(r"\boldSelf\b")


@dataclass(frozen=True, slots=True)
class CelRule:
    """One ``x-kubernetes-validations`` entry and the schema node it sits on (property names and ``[*]``)."""

    path: tuple[str, ...]
    rule: str
    message: str
    field_path: str = ""
    """The rule's ``fieldPath`` (``.replicaAssignment``), relative to the node; where a failure is reported."""
    is_transition: bool = False
    """Whether the rule mentions ``oldSelf``: it runs only on an update (set from the text by ``rules_of``)."""


@dataclass(frozen=True, slots=True)
class CelFailure:
    """A rule that did not hold: where (``spec.partitions``), the value there, the rule and its message."""

    field_path: str
    value: object
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.field_path or '<root>'}: {self.message}"


def rules_of(schema: Mapping[str, Any]) -> tuple[CelRule, ...]:
    """Every rule of an ``openAPIV3Schema``, parents before children."""
    return tuple(_walk(schema, ()))


def _walk(node: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[CelRule]:
    for entry in node.get("x-kubernetes-validations", ()):
        rule = str(entry["rule"])
        message = str(entry.get("message") or f"failed rule: {rule}")
        field_path = str(entry.get("fieldPath", ""))
        yield CelRule(path, rule, message, field_path, _OLD_SELF.search(rule) is not None)
    for name, child in sorted(node.get("properties", {}).items()):
        yield from _walk(child, (*path, name))
    items = node.get("items")
    if isinstance(items, Mapping):
        yield from _walk(items, (*path, _ITEMS))


RuleOutcome = str | None
"""What evaluating a rule gave: None when it holds, "" when it does not, else why it could not be evaluated."""

Evaluate = Callable[[CelRule, Mapping[str, Any]], RuleOutcome]


class CelRules:
    """The rules of one CRD schema, evaluated by cel-python: the reference every faster evaluator is held to.

    Compiling a rule costs a lark parse (milliseconds), so programs are cached per rule text for the process.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.rules = rules_of(schema)

    def check(self, new: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[CelFailure]:
        """The failures of ``new`` (a whole object); with ``old``, transition rules run too, as on an update."""
        return check_rules(self.rules, new, old, evaluate_with_cel_python)


def check_rules(
    rules: Sequence[CelRule], new: Mapping[str, Any], old: Mapping[str, Any] | None, evaluate: Evaluate
) -> list[CelFailure]:
    """Each rule where its field is present (every item, for a rule on list items), with ``oldSelf`` from ``old``
    for a transition rule, which runs only on an update where the old object has the field too."""
    failures: list[CelFailure] = []
    for rule in rules:
        if rule.is_transition and (old is None or _ITEMS in rule.path):
            continue
        for location, value in _values_at(new, rule.path, ()):
            activation: dict[str, Any] = {"self": value}
            if rule.is_transition:
                assert old is not None
                found = _value_at(old, location)
                if found is _ABSENT:
                    continue
                activation["oldSelf"] = found
            outcome = evaluate(rule, activation)
            if outcome is not None:
                failures.append(_failure(rule, location, activation, outcome))
    return failures


_ABSENT = object()


def _values_at(
    value: object, path: Sequence[str], location: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], object]]:
    """The values at a schema path, each with its concrete location; absent fields yield nothing."""
    if not path:
        yield location, value
        return
    step, rest = path[0], path[1:]
    if step == _ITEMS:
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield from _values_at(item, rest, (*location, index))
    elif isinstance(value, Mapping) and step in value:
        yield from _values_at(value[step], rest, (*location, step))


def _value_at(value: object, location: Sequence[str | int]) -> object:
    for step in location:
        if isinstance(step, str) and isinstance(value, Mapping) and step in value:
            value = value[step]
        else:
            return _ABSENT
    return value


def _failure(
    rule: CelRule, location: tuple[str | int, ...], activation: Mapping[str, Any], outcome: str
) -> CelFailure:
    where = _join(location, rule.field_path)
    value = _value_at(activation["self"], _relative_steps(rule.field_path))
    shown = None if value is _ABSENT else value
    message = f"{rule.message} (rule evaluation error: {outcome})" if outcome else rule.message
    return CelFailure(where, shown, rule.rule, message)


def evaluate_with_cel_python(rule: CelRule, activation: Mapping[str, Any]) -> RuleOutcome:
    """cel-python's verdict on one rule: None, "", or why it could not be evaluated."""
    from celpy.adapter import json_to_cel
    from celpy.celtypes import BoolType
    from celpy.evaluation import CELEvalError

    try:
        bound = {name: json_to_cel(v) for name, v in activation.items()}
    except ValueError as error:  # not JSON: a YAML !!binary or !!set, which Kubernetes cannot store either
        return str(error) or "the value is not JSON"
    try:
        result = _program(rule.rule).evaluate(bound)
    except CELEvalError as error:
        return _why(error)
    if isinstance(result, BoolType) and bool(result):
        return None
    return ""


def _why(error: Exception) -> str:
    """cel-python's message without its parser internals: a type mismatch is what a manifest author can fix."""
    text = str(error.args[0]) if error.args else "unknown error"
    if text.startswith("found no matching overload") or text == "no such overload":
        return "the value has the wrong type for this rule"
    return text or "unknown error"


@cache
def _program(rule: str) -> Any:
    import celpy

    environment = celpy.Environment()
    return environment.program(environment.compile(rule))


def _relative_steps(field_path: str) -> tuple[str, ...]:
    """``.replicaAssignment`` -> ("replicaAssignment",); only the dotted form our CRDs use."""
    return tuple(step for step in field_path.split(".") if step)


def _join(location: Sequence[str | int], field_path: str) -> str:
    text = ""
    for step in (*location, *_relative_steps(field_path)):
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text
