"""The settings reference lists every environment variable the product reads or declares: the operator's source is
read for ``os.environ``/``os.getenv`` reads and for the ``_env("KTO_...")`` names the settings dataclasses carry,
and each one found must be on the generated page."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.docs_reference import settings_page

REPOSITORY = Path(__file__).resolve().parents[2]
OPERATOR_SOURCE = REPOSITORY / "operator" / "topic_operator"
pytestmark = pytest.mark.timeout(60)


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)


def variables_read(source: str) -> Iterator[str]:
    """The environment variables a module reads or declares, by name: ``os.environ.get(X)``, ``os.environ[X]``,
    ``X in os.environ``, ``os.environ.setdefault(X, ...)``, ``os.getenv(X)`` and ``_env(X)``; ``X`` a string or a
    module-level string constant."""
    tree = ast.parse(source)
    constants = {
        target.id: statement.value.value
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }

    def name_of(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return None

    for node in ast.walk(tree):
        found: ast.AST | None = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if (
                (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("get", "setdefault")
                    and _is_environ(func.value)
                )
                or (isinstance(func, ast.Attribute) and func.attr == "getenv")
                or (isinstance(func, ast.Name) and func.id == "_env")
            ):
                found = node.args[0]
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            found = node.slice
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            found = node.left
        if found is not None and (name := name_of(found)) is not None:
            yield name


def test_every_variable_the_code_reads_is_on_the_page() -> None:
    found = {name for path in OPERATOR_SOURCE.rglob("*.py") for name in variables_read(path.read_text())}
    assert {"KTO_WATCH_NAMESPACES", "KTO_MANIFEST_MAX_DEPTH", "KTO_ZK_DEADLINE", "JAVA_HOME"} <= found
    page = settings_page.render()
    missing = sorted(name for name in found if f"`{name}`" not in page)
    assert not missing, f"the settings reference lacks {missing} (tools/docs_reference/settings_page.py)"


def test_every_other_variable_listed_is_still_read() -> None:
    """A variable the code stopped reading leaves the hand-kept list too."""
    found = {name for path in OPERATOR_SOURCE.rglob("*.py") for name in variables_read(path.read_text())}
    assert set(settings_page.OTHER_VARIABLES) <= found


@pytest.mark.parametrize(
    "source",
    [
        'import os\nos.environ.get("SOME_VARIABLE")',
        'import os\nNAME = "SOME_VARIABLE"\nos.environ.get(NAME, "x")',
        'import os\nos.environ["SOME_VARIABLE"]',
        'import os\n"SOME_VARIABLE" in os.environ',
        'import os\nos.environ.setdefault("SOME_VARIABLE", "1")',
        'import os\nos.getenv("SOME_VARIABLE")',
        'x: int = field(default=1, metadata=_env("SOME_VARIABLE"))',
    ],
)
def test_the_scan_finds_each_way_of_reading(source: str) -> None:
    assert list(variables_read(source)) == ["SOME_VARIABLE"]
