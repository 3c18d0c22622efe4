"""Every generated reference page: its file under ``docs/`` and the function that writes its text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.docs_reference import (
    cli_page,
    crds,
    diagrams_page,
    helm_page,
    metrics_page,
    reasons_page,
    settings_page,
)

REFERENCE_FOLDER = Path("docs") / "reference"


def renderers(repository: Path) -> dict[Path, Callable[[], str]]:
    """Page path (relative to the repository) -> its renderer, in a fixed order: the reference pages, then the
    pictures' SVG files beside their sources."""
    pictures = {
        source.with_suffix(".svg"): (lambda source=source: diagrams_page.render(repository, source))
        for source in diagrams_page.sources(repository)
    }
    return {
        REFERENCE_FOLDER / "crds.md": lambda: crds.render(repository),
        REFERENCE_FOLDER / "cli.md": cli_page.render,
        REFERENCE_FOLDER / "metrics.md": metrics_page.render,
        REFERENCE_FOLDER / "condition-reasons.md": reasons_page.render,
        REFERENCE_FOLDER / "settings.md": settings_page.render,
        REFERENCE_FOLDER / "helm-values.md": lambda: helm_page.render(repository),
        **pictures,
    }


def render_all(repository: Path) -> dict[Path, str]:
    """Every page's text, generated now (nothing written)."""
    return {path: render() for path, render in renderers(repository).items()}


def first_difference(expected: str, found: str) -> int | None:
    """The 1-based number of the first line where ``found`` differs from ``expected``; None when they are equal."""
    if expected == found:
        return None
    expected_lines, found_lines = expected.splitlines(), found.splitlines()
    for number, (wanted, seen) in enumerate(zip(expected_lines, found_lines, strict=False), start=1):
        if wanted != seen:
            return number
    return min(len(expected_lines), len(found_lines)) + 1


def stale_pages(repository: Path, generated: dict[Path, str] | None = None) -> list[str]:
    """One line per page whose file differs from what the code generates now: the file, the first differing
    line and the command that regenerates it. Empty when every page is current."""
    from tools.docs_reference.markdown import GENERATED_BY

    problems = []
    for path, text in (generated or render_all(repository)).items():
        file = repository / path
        current = file.read_text() if file.exists() else ""
        line = first_difference(text, current)
        if line is not None:
            what = "is missing" if not file.exists() else f"differs from the code at line {line}"
            problems.append(f"{path}:{line}: {path} {what}; regenerate it with `{GENERATED_BY}`")
    return problems
