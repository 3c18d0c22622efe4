"""Every condition reason the operator sets is explained in the reference: it is a member of ``Reason``, and
``condition_reasons.REASON_GUIDES`` has its meaning and what to do. A reason typed as a bare string where a
condition is built would escape the table, so the operator's source is read for those too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from topic_operator.k8s.condition_reasons import EVENT_ONLY, REASON_GUIDES, guide_of
from topic_operator.k8s.conditions import Reason

OPERATOR_SOURCE = Path(__file__).resolve().parents[2] / "operator" / "topic_operator"

pytestmark = pytest.mark.timeout(60)


def reasons_named(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``Reason.X`` attribute reads: (line, X)."""
    for node in ast.walk(tree):
        is_reason = (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Reason"
        )
        if is_reason and node.attr not in ("value", "name"):
            yield node.lineno, node.attr


def bare_string_reasons(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Reasons given as string literals where a condition is built: ``Condition(type, status, "X", ...)`` or
    ``Condition(..., reason="X")``, and a ``{"reason": "X"}`` beside a ``"type"`` key (a condition written by
    hand)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Condition":
            given = node.args[2:3] + [k.value for k in node.keywords if k.arg == "reason"]
            for argument in given:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    yield node.lineno, argument.value
        if isinstance(node, ast.Dict):
            keys = {
                k.value: v for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)
            }
            reason = keys.get("reason")
            if "type" in keys and isinstance(reason, ast.Constant) and isinstance(reason.value, str):
                yield node.lineno, reason.value


def operator_trees() -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted(OPERATOR_SOURCE.rglob("*.py")):
        yield path, ast.parse(path.read_text(), filename=str(path))


def test_the_table_has_every_reason_once() -> None:
    listed = [guide.reason for guide in REASON_GUIDES]
    assert len(listed) == len(set(listed))
    missing = [reason.value for reason in Reason if reason not in listed]
    assert not missing, f"condition_reasons.REASON_GUIDES lacks {missing}: add what each means and what to do"


def test_every_entry_says_what_it_means_and_what_to_do() -> None:
    for guide in REASON_GUIDES:
        assert guide.meaning.strip().endswith("."), guide.reason
        assert guide.what_to_do.strip().endswith("."), guide.reason
        assert guide.ready in ("True", "False", EVENT_ONLY), guide.reason
        assert guide.kinds, guide.reason


def test_every_reason_the_code_names_is_in_the_table() -> None:
    named = {
        (path.relative_to(OPERATOR_SOURCE), line, attribute)
        for path, tree in operator_trees()
        for line, attribute in reasons_named(tree)
    }
    assert named, "the scan found no Reason.X at all: it no longer reads the operator's source"
    for path, line, attribute in named:
        assert attribute in Reason.__members__, f"{path}:{line}: Reason.{attribute} is not a Reason"
        assert guide_of(Reason[attribute]), f"{path}:{line}"


def test_no_condition_is_built_with_a_reason_outside_the_enum() -> None:
    found = [
        f"{path.relative_to(OPERATOR_SOURCE)}:{line}: reason {value!r}"
        for path, tree in operator_trees()
        for line, value in bare_string_reasons(tree)
    ]
    assert not found, (
        "conditions built with a bare string, not a Reason (so not in the reference): " + "; ".join(found)
    )


@pytest.mark.parametrize(
    "source",
    [
        'Condition(READY, False, "Exploded", "message")',
        'Condition(READY, False, reason="Exploded")',
        '{"type": "Ready", "status": "False", "reason": "Exploded"}',
    ],
)
def test_the_scan_finds_a_bare_string_reason(source: str) -> None:
    assert list(bare_string_reasons(ast.parse(source))) == [(1, "Exploded")]


def test_the_scan_lets_an_enum_reason_pass() -> None:
    assert list(bare_string_reasons(ast.parse("Condition(READY, True, Reason.CREATED, 'made')"))) == []
