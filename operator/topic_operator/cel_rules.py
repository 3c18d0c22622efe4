"""The CRDs' ``x-kubernetes-validations`` rules, evaluated offline with cel-python as the API server would.

``kto validate`` runs them so that a manifest the API server would refuse at ``kubectl apply`` time fails in CI
first, with the CRD's own message; tests run the transition rules (``oldSelf``) to prove that a partition decrease
or a rename is refused before it ever reaches the operator.

Only what our CRDs use is modelled: rules on object properties and on list items, ``message`` and ``fieldPath``.
As in Kubernetes, a rule runs only where its field is present, and a transition rule (one that mentions
``oldSelf``) only on an update where the old object has the field too, never on list items (Kubernetes correlates
old and new items only for map lists, which our rules do not need). ``messageExpression`` is not evaluated: the
static ``message`` is reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import celpy
from celpy.adapter import json_to_cel
from celpy.celtypes import BoolType
from celpy.evaluation import CELEvalError

__all__ = ["CelFailure", "CelRule", "CelRules", "rules_of"]

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

    @property
    def is_transition(self) -> bool:
        return _OLD_SELF.search(self.rule) is not None


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
        yield CelRule(path, rule, message, str(entry.get("fieldPath", "")))
    for name, child in sorted(node.get("properties", {}).items()):
        yield from _walk(child, (*path, name))
    items = node.get("items")
    if isinstance(items, Mapping):
        yield from _walk(items, (*path, _ITEMS))


class CelRules:
    """The rules of one CRD schema, compiled once and evaluated against documents.

    Compiling a rule costs a lark parse (milliseconds), so programs are cached per rule text for the process.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.rules = rules_of(schema)

    def check(self, new: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[CelFailure]:
        """The failures of ``new`` (a whole object); with ``old``, transition rules run too, as on an update."""
        failures: list[CelFailure] = []
        for rule in self.rules:
            for location, value in _values_at(new, rule.path, ()):
                activation: dict[str, Any] = {"self": value}
                if rule.is_transition:
                    if old is None or _ITEMS in rule.path:
                        continue
                    found = _value_at(old, location)
                    if found is _ABSENT:
                        continue
                    activation["oldSelf"] = found
                failure = _evaluate(rule, location, activation)
                if failure is not None:
                    failures.append(failure)
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


def _evaluate(
    rule: CelRule, location: tuple[str | int, ...], activation: dict[str, Any]
) -> CelFailure | None:
    where = _join(location, rule.field_path)
    value = _value_at(activation["self"], _relative_steps(rule.field_path))
    shown = None if value is _ABSENT else value
    try:
        bound = {name: json_to_cel(v) for name, v in activation.items()}
    except ValueError as error:  # not JSON: a YAML !!binary or !!set, which Kubernetes cannot store either
        return CelFailure(where, shown, rule.rule, f"{rule.message} (rule evaluation error: {error})")
    try:
        result = _program(rule.rule).evaluate(bound)
    except CELEvalError as error:
        return CelFailure(where, shown, rule.rule, f"{rule.message} (rule evaluation error: {_why(error)})")
    if isinstance(result, BoolType) and bool(result):
        return None
    return CelFailure(where, shown, rule.rule, rule.message)


def _why(error: CELEvalError) -> str:
    """cel-python's message without its parser internals: a type mismatch is what a manifest author can fix."""
    text = str(error.args[0]) if error.args else "unknown error"
    if text.startswith("found no matching overload"):
        return "the value has the wrong type for this rule"
    return text


@cache
def _program(rule: str) -> celpy.Runner:
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
