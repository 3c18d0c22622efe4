"""The generated reference pages (docs/reference/) match what the code generates now; a stale one fails, naming
the file, the first line that differs and the command that regenerates it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.docs_reference.markdown import GENERATED_BY
from tools.docs_reference.pages import first_difference, render_all, renderers, stale_pages

REPOSITORY = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return render_all(REPOSITORY)


def test_every_generated_page_is_current(generated: dict[Path, str]) -> None:
    problems = stale_pages(REPOSITORY, generated)
    assert not problems, "\n".join(problems)


def test_every_page_says_on_its_first_line_that_it_is_generated_and_by_what(
    generated: dict[Path, str],
) -> None:
    for path, text in generated.items():
        first = text.splitlines()[0]
        assert first.startswith("<!-- Generated from "), path
        assert f"`{GENERATED_BY}`" in first, path


def test_generation_is_deterministic(generated: dict[Path, str]) -> None:
    assert render_all(REPOSITORY) == generated


def _copy_of_the_sources(root: Path) -> Path:
    """What the generator reads from the repository (CRDs, chart) and the pages as committed, in ``root``."""
    shutil.copytree(REPOSITORY / "crds", root / "crds")
    shutil.copytree(REPOSITORY / "helm", root / "helm")
    for page in renderers(REPOSITORY):
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPOSITORY / page, root / page)
    return root


def test_a_stale_page_is_named_with_its_line_and_the_command(tmp_path: Path) -> None:
    root = _copy_of_the_sources(tmp_path)
    page = Path("docs/reference/metrics.md")
    lines = (root / page).read_text().splitlines(keepends=True)
    lines[7] = "| `kto_a_metric_that_is_gone_total` | counter | `cluster` |\n"
    (root / page).write_text("".join(lines))

    problems = stale_pages(root)

    assert problems == [
        f"{page}:8: {page} differs from the code at line 8; regenerate it with `make docs-reference`"
    ]


def test_a_changed_source_makes_its_page_stale(tmp_path: Path) -> None:
    """The check compares against the sources, not against itself: a new Helm value, undocumented, fails."""
    root = _copy_of_the_sources(tmp_path)
    values = root / "helm" / "kafka-topic-operator" / "values.yaml"
    values.write_text(values.read_text().replace("replicaCount: 1\n", "replicaCount: 2\n"))

    problems = stale_pages(root)

    assert len(problems) == 1
    assert problems[0].startswith("docs/reference/helm-values.md:")
    assert "make docs-reference" in problems[0]


def test_a_missing_page_is_named(tmp_path: Path) -> None:
    root = _copy_of_the_sources(tmp_path)
    (root / "docs/reference/cli.md").unlink()
    assert stale_pages(root) == [
        "docs/reference/cli.md:1: docs/reference/cli.md is missing; regenerate it with `make docs-reference`"
    ]


def test_the_check_command_fails_on_a_stale_page(tmp_path: Path) -> None:
    root = _copy_of_the_sources(tmp_path)
    page = root / "docs/reference/crds.md"
    page.write_text(page.read_text() + "A line typed by hand.\n")
    finished = subprocess.run(
        [sys.executable, "-m", "tools.docs_reference", "--check", "--root", str(root)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert finished.returncode == 1
    assert "docs/reference/crds.md:" in finished.stderr
    assert "regenerate it with `make docs-reference`" in finished.stderr


@pytest.mark.parametrize(
    ("expected", "found", "line"),
    [("a\nb\n", "a\nb\n", None), ("a\nb\n", "a\nc\n", 2), ("a\nb\n", "a\n", 2), ("a\n", "a\nb\n", 2)],
)
def test_first_difference(expected: str, found: str, line: int | None) -> None:
    assert first_difference(expected, found) == line
