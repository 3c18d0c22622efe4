"""Build the documentation site strictly, and say each problem MkDocs found with the page and the line.

MkDocs names the page and the link of a broken link or anchor but not the line; the line is found here by
looking for the link in the page's Markdown. The build runs ``mkdocs build --strict`` as ``make docs`` does, in a
process of its own (MkDocs configures logging globally), into a directory the caller gives.

Until the repository has its ``mkdocs.yml`` a throw-away configuration with the same strictness is used; with
one, a different docs directory (a test's broken copy) is built through a configuration that inherits it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BuiltSite", "SiteProblem", "build_site"]

BUILD_TIMEOUT = 120.0

_FALLBACK_CONFIG = """\
site_name: kafka-topic-operator
docs_dir: {docs}
strict: true
theme:
  name: material
  font: false
plugins:
  - search
  - offline
validation:
  omitted_files: warn
  absolute_links: warn
  unrecognized_links: warn
  anchors: warn
exclude_docs: |
  diagrams/*.dot
"""

_LINK_WARNING = re.compile(r"Doc file '(?P<page>[^']+)' contains (?:a|an \w+) link '(?P<link>[^']+)'")


@dataclass(frozen=True)
class SiteProblem:
    page: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"docs/{self.page}:{self.line}" if self.line else f"docs/{self.page}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class BuiltSite:
    directory: Path
    docs: Path
    succeeded: bool
    problems: tuple[SiteProblem | str, ...]
    output: str
    seconds: float

    def report(self) -> str:
        return "\n".join(str(p) for p in self.problems) or self.output[-3000:]


def _line_of(page: Path, link: str) -> int | None:
    """The first line of ``page`` that holds ``link`` as a link target (Markdown or HTML)."""
    if not page.is_file():
        return None
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if f"]({link}" in line or f'="{link}"' in line or f"]: {link}" in line:
            return number
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if link in line:
            return number
    return None


def _problems(output: str, docs: Path) -> tuple[SiteProblem | str, ...]:
    """Each WARNING or ERROR of the build (with its continuation lines), as page:line where it names a link."""
    found: list[SiteProblem | str] = []
    current: list[str] = []

    def close() -> None:
        if not current:
            return
        message = " ".join(part.strip() for part in current)
        current.clear()
        message = re.sub(r"^(WARNING|ERROR)\s*-\s*", "", message)
        link = _LINK_WARNING.search(message)
        if link is None:
            found.append(message)
        else:
            found.append(SiteProblem(link["page"], _line_of(docs / link["page"], link["link"]), message))

    for line in output.splitlines():
        if line.startswith(("WARNING", "ERROR")):
            close()
            current.append(line)
        elif current and line.startswith((" ", "\t")):
            current.append(line)
        else:
            close()
    close()
    return tuple(found)


def _config(repository: Path, docs: Path, work: Path) -> Path:
    config = work / "mkdocs.yml"
    real = repository / "mkdocs.yml"
    if real.is_file():
        # Paths in the real configuration (hooks) are relative to the configuration's own directory.
        for name in ("tools", "overrides"):
            if (repository / name).exists() and not (work / name).exists():
                (work / name).symlink_to(repository / name)
        config.write_text(f"INHERIT: {real}\ndocs_dir: {docs}\n")
    else:
        config.write_text(_FALLBACK_CONFIG.format(docs=docs))
    return config


def build_site(repository: Path, work: Path, docs: Path | None = None) -> BuiltSite:
    """``mkdocs build --strict`` of ``docs`` (default: the repository's) into ``work / "site"``."""
    docs = docs or repository / "docs"
    site = work / "site"
    config = _config(repository, docs, work)
    started = time.monotonic()
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(config),
            "--site-dir",
            str(site),
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        env={**os.environ, "NO_COLOR": "1", "NO_MKDOCS_2_WARNING": "1"},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    output = finished.stdout + finished.stderr
    return BuiltSite(
        directory=site,
        docs=docs,
        succeeded=finished.returncode == 0,
        problems=_problems(output, docs),
        output=output,
        seconds=time.monotonic() - started,
    )
