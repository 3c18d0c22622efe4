"""The site's pictures as SVG files beside their Graphviz sources, so that GitHub shows them in the pages it
renders (the built site renders them again from the sources: ``tools/mkdocs_hooks/diagrams.py``).

Each file is what Graphviz's ``dot -Tsvg`` makes of its source, under the generated-file line every reference page
starts with (an SVG needs neither its XML declaration nor its DOCTYPE, which would have to come first). The
reference check compares them with a fresh rendering, so a picture cannot drift from its source.
"""

from __future__ import annotations

from pathlib import Path

from tools.docs_reference.markdown import generated_header
from tools.mkdocs_hooks.diagrams import diagram_sources, render_svg

DIAGRAMS_FOLDER = Path("docs") / "diagrams"


def sources(repository: Path) -> list[Path]:
    """Every picture's source, relative to the repository, in name order."""
    return [source.relative_to(repository) for source in diagram_sources(repository / "docs")]


def render(repository: Path, source: Path) -> str:
    """``source``'s SVG text, under the generated-file line."""
    svg = render_svg(repository / source).decode("utf-8")
    start = svg.find("<!--")
    if start < 0:
        start = svg.find("<svg")
    return f"{generated_header(str(source))}\n{svg[start:]}"
