"""``quick_init``: the records the engine builds by the million keep the ``__init__`` dataclasses gives them, only
faster. Every record it is applied to takes the same parameters, with the same defaults, and sets every field to
what the generated ``__init__`` sets it to; it stays frozen; and a class it cannot build faithfully is refused
when it is defined."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import pytest

from topic_operator.model import quick_init

MODULES = (
    "topic_operator.model",
    "topic_operator.plan",
    "topic_operator.drift.kinds",
    "topic_operator.drift.planning",
)
RECORDS = sorted(
    {
        value
        for module in map(importlib.import_module, MODULES)
        for value in vars(module).values()
        if isinstance(value, type) and "__dataclass_init__" in vars(value)
    },
    key=lambda record: record.__qualname__,
)


def test_the_records_the_engine_builds_most_are_quick() -> None:
    assert {r.__name__ for r in RECORDS} >= {"TopicSpec", "TopicState", "TopicPlan", "Change", "Finding"}


def _parameters(function: Any) -> list[tuple[str, Any, str]]:
    """Each parameter's name, kind and default as ``repr`` shows it (a factory's default is ``<factory>``)."""
    return [
        (p.name, p.kind, repr(p.default))
        for p in inspect.signature(function).parameters.values()
        if p.name != "self"
    ]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__qualname__)
def test_the_same_parameters_with_the_same_defaults(record: type) -> None:
    assert _parameters(vars(record)["__init__"]) == _parameters(vars(record)["__dataclass_init__"])


def _built(record: type, init: str, **values: Any) -> Any:
    """An instance of ``record`` set up by its ``__init__`` or by the one dataclasses generated for it."""
    instance: Any = object.__new__(record)
    vars(record)[init](instance, **values)
    return instance


def _field_values(instance: Any) -> dict[str, Any]:
    return {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance)}


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__qualname__)
def test_every_field_set_as_the_generated_init_sets_it(record: type) -> None:
    fields = dataclasses.fields(record)  # type: ignore[arg-type]
    required = {
        f.name: object()
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    given = {f.name: object() for f in fields}
    for values in (required, given):
        quick = _built(record, "__init__", **values)
        generated = _built(record, "__dataclass_init__", **values)
        assert _field_values(quick).keys() == _field_values(generated).keys()
        for name, value in _field_values(generated).items():
            assert type(getattr(quick, name)) is type(value), name
            assert getattr(quick, name) == value, name
    # A factory's default is made afresh for each instance, never shared.
    first, second = (_built(record, "__init__", **required) for _ in range(2))
    for f in fields:
        if f.default_factory is not dataclasses.MISSING:
            assert getattr(first, f.name) is not getattr(second, f.name), f.name


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__qualname__)
def test_still_frozen(record: type) -> None:
    fields = dataclasses.fields(record)  # type: ignore[arg-type]
    instance = _built(record, "__init__", **{f.name: 0 for f in fields})
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(instance, fields[0].name, 1)


def test_a_class_it_cannot_build_faithfully_is_refused() -> None:
    @dataclasses.dataclass(slots=True)
    class Mutable:
        value: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class KeywordOnly:
        value: int = dataclasses.field(kw_only=True)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived:
        value: int
        double: int = dataclasses.field(init=False, default=0)

    for record in (Mutable, Checked, KeywordOnly, Derived):
        with pytest.raises(TypeError, match="quick_init supports frozen dataclasses of plain fields"):
            quick_init(record)
