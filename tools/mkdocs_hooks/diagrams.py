"""MkDocs hook that renders the site's Graphviz pictures at build time.

The pictures' sources are ``docs/diagrams/<name>.dot``. Their SVGs are committed beside them for GitHub's
rendering of the pages (``make docs-reference`` writes them, and its check fails when one differs from its
source's rendering), but the site never takes them as they are: each build runs Graphviz's ``dot -Tsvg`` on every
source (no network: Debian's ``graphviz``) and puts the result in MkDocs' files as ``diagrams/<name>.svg``, a
generated file in place of the committed one, so that a page's
``![...](../diagrams/<name>.svg)`` is a link the strict build checks like any other. A missing ``dot`` or a source
it cannot render fails the build, naming the file and dot's own message: a site with a broken picture is not
published.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

DIAGRAMS_FOLDER = "diagrams"
"""Where the sources sit under ``docs_dir``, and where their SVGs go in the built site."""

RENDER_TIMEOUT_SECONDS = 60
"""A picture of a few dozen nodes renders in well under a second; a hung ``dot`` must not hang the build."""


def diagram_sources(docs_dir: Path) -> list[Path]:
    """Every Graphviz source of the site, in name order so the build is the same on every machine."""
    return sorted((docs_dir / DIAGRAMS_FOLDER).glob("*.dot"))


def render_svg(source: Path, dot_program: str | None = None) -> bytes:
    """``source`` rendered as SVG by Graphviz; a ``PluginError`` naming the file and dot's message otherwise."""
    program = dot_program or shutil.which("dot")
    if program is None:
        raise PluginError(
            f"cannot render {source}: Graphviz's `dot` is not on PATH (Debian: apt-get install graphviz; "
            "`make system-deps` installs it)"
        )
    try:
        finished = subprocess.run(
            [program, "-Tsvg", str(source)],
            capture_output=True,
            timeout=RENDER_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as timeout:
        raise PluginError(f"cannot render {source}: dot ran past {RENDER_TIMEOUT_SECONDS} s") from timeout
    except OSError as error:
        raise PluginError(f"cannot render {source}: cannot run {program}: {error}") from error
    if finished.returncode != 0 or not finished.stdout:
        message = finished.stderr.decode("utf-8", "replace").strip() or f"exit status {finished.returncode}"
        raise PluginError(f"cannot render {source}: {message}")
    return finished.stdout


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    """Add ``diagrams/<name>.svg`` for every ``docs/diagrams/<name>.dot``, rendered now."""
    for source in diagram_sources(Path(config.docs_dir)):
        svg_uri = f"{DIAGRAMS_FOLDER}/{source.stem}.svg"
        existing = files.get_file_from_path(svg_uri)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, svg_uri, content=render_svg(source)))
    return files


def on_serve(server: Any, *, config: MkDocsConfig, builder: Any) -> Any:
    """``mkdocs serve`` rebuilds when a picture's source changes (the sources are under ``docs_dir``, which it
    watches already; said here so that a ``diagrams`` folder excluded from the docs still triggers a rebuild)."""
    folder = Path(config.docs_dir) / DIAGRAMS_FOLDER
    if folder.is_dir():
        server.watch(str(folder))
    return server
