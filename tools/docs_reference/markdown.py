"""Plain Markdown, written so that MkDocs (Python-Markdown) renders text from the code exactly as written.

Text taken from the code (docstrings, CRD descriptions, help texts) is prose with code spans in it. Outside the
code spans, the characters Markdown would read as markup (a table's ``|``, HTML's ``<``, emphasis, links) are
escaped; inside them nothing is, since Python-Markdown keeps a code span whole, pipes included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

GENERATED_BY = "make docs-reference"
"""The command that regenerates every page; the stale-page test names it."""

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_MARKUP = re.compile(r"([\\|*\[\]<>_])")


def generated_header(source: str) -> str:
    """The first line of every page: it is generated, from what, and by which command."""
    return (
        f"<!-- Generated from {source} by `{GENERATED_BY}` (python -m tools.docs_reference): "
        "do not edit by hand. -->"
    )


def one_line(text: str) -> str:
    """Whitespace of any kind (a docstring's line breaks and indentation) as single spaces."""
    return " ".join(text.split())


def prose(text: str) -> str:
    """``text`` on one line, Markdown's markup characters escaped outside its code spans."""
    flat = one_line(text)
    pieces: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(flat):
        pieces.append(_escape(flat[position : span.start()]))
        pieces.append(code(span.group(2).strip()))
        position = span.end()
    pieces.append(_escape(flat[position:]))
    return "".join(pieces)


def _escape(text: str) -> str:
    escaped = _MARKUP.sub(lambda found: "&lt;" if found.group(1) == "<" else "\\" + found.group(1), text)
    return escaped.replace("\\>", "&gt;")


def code(text: str) -> str:
    """``text`` as one code span, whatever backticks it holds."""
    flat = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{padding}{flat}{padding}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table; cells are given already formatted (``prose`` or ``code``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(cell or " " for cell in row) + " |" for row in rows)
    return lines


def page(lines: Iterable[str]) -> str:
    """The page's text: its lines, one blank line at most between blocks, one newline at the end."""
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"
