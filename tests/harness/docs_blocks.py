"""The fenced blocks of the documentation's Markdown pages, with the HTML comment that marks a runnable one.

The convention (written down in ``docs/development/docs-site.md``): an HTML comment on the line before a fenced
block says what the tests do with it, and the rendered page shows nothing of it.

- ``<!-- test: kto -->`` or ``<!-- test: operator -->``: the block's commands run, in page order, against a real
  ZooKeeper (``kto``) or a real kube-apiserver and ZooKeeper (``operator``). ``, exit N`` after the kind says the
  block's last command exits ``N`` (default 0; every other command must exit 0).
- ``<!-- output -->``: the block is what the previous command block's last command prints.
- ``<!-- file: NAME -->``: the block is written to ``NAME`` in the page's working directory.

Every block keeps the line of its opening fence, so a failure names the page and the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "blocks_of", "commands_of", "markdown_pages"]

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_MARK = re.compile(r"^\s*<!--\s*(?P<what>test|output|file)\s*(?::\s*(?P<argument>.*?))?\s*-->\s*$")
_EXIT = re.compile(r"^(?P<kind>[\w-]+)\s*(?:,\s*exit\s+(?P<code>\d+))?$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, its text, where it starts, and the mark before it (if any)."""

    page: Path
    line: int
    """1-based line of the opening fence."""
    language: str
    text: str
    mark: str | None = None
    """``test``, ``output``, ``file`` or None."""
    argument: str = ""

    @property
    def where(self) -> str:
        """``page:line``, the page relative to the working directory when it is under it (as pytest runs)."""
        try:
            page = self.page.relative_to(Path.cwd())
        except ValueError:
            page = self.page
        return f"{page}:{self.line}"

    @property
    def test_kind(self) -> str:
        """``kto`` or ``operator`` for a ``test`` block."""
        return self._test_argument()[0]

    @property
    def expected_exit(self) -> int:
        return self._test_argument()[1]

    def _test_argument(self) -> tuple[str, int]:
        found = _EXIT.match(self.argument.strip())
        if self.mark != "test" or found is None:
            raise ValueError(f"{self.where}: not a test block mark: <!-- {self.mark}: {self.argument} -->")
        return found["kind"], int(found["code"] or 0)


def markdown_pages(docs: Path) -> list[Path]:
    return sorted(docs.rglob("*.md"))


def blocks_of(page: Path) -> Iterator[Block]:
    """Every fenced block of ``page``, in order; a mark counts only on the line right before the fence (blank
    lines between them are allowed)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    pending: tuple[str, str] | None = None
    while index < len(lines):
        line = lines[index]
        mark = _MARK.match(line)
        opening = _FENCE.match(line)
        if mark is not None:
            pending = (mark["what"], mark["argument"] or "")
        elif opening is not None:
            fence = opening["fence"]
            start = index
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(fence):
                body.append(lines[index][len(opening["indent"]) :] if opening["indent"] else lines[index])
                index += 1
            language = (opening["info"].split() or [""])[0].lower()
            what, argument = pending if pending is not None else (None, "")
            yield Block(page, start + 1, language, "\n".join(body) + "\n", what, argument)
            pending = None
        elif line.strip():
            pending = None
        index += 1


def commands_of(block: Block) -> list[str]:
    """The shell commands of a block: comment lines and blank lines dropped, ``\\`` continuations joined, a
    trailing comment cut (``kto plan -f x  # shows the plan``)."""
    commands: list[str] = []
    current = ""
    for raw in block.text.splitlines():
        line = raw.rstrip()
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        commands.append(re.sub(r"\s+#\s.*$", "", current).strip())
        current = ""
    return commands
