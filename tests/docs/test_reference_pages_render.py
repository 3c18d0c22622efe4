"""The generated reference pages render as the site renders them (Python-Markdown, as MkDocs runs it): every
table row has as many cells as its header (text from the code holds pipes, in CEL rules and patterns), no text
from the code turns into HTML, and the anchors the other pages link to exist."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest

from tools.docs_reference.markdown import prose
from tools.docs_reference.pages import render_all

REPOSITORY = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(60)


class Tables(HTMLParser):
    """Cells per row of every table, ids of every heading, and any tag that is not Markdown's own."""

    MARKDOWN_TAGS = frozenset(
        [
            "h1",
            "h2",
            "h3",
            "h4",
            "p",
            "a",
            "code",
            "pre",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "ul",
            "ol",
            "li",
            "strong",
            "em",
            "blockquote",
            "hr",
        ]
    )

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[int, int]] = []
        self.header = 0
        self.cells = 0
        self.ids: set[str] = set()
        self.foreign: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.MARKDOWN_TAGS:
            self.foreign.add(tag)
        if tag == "thead":
            self.header = 0
        if tag == "th":
            self.header += 1
        if tag == "tr":
            self.cells = 0
        if tag == "td":
            self.cells += 1
        self.ids.update(value for name, value in attrs if name == "id" and value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr" and self.cells:
            self.rows.append((self.header, self.cells))


def rendered(text: str) -> Tables:
    html = markdown.markdown(text, extensions=["tables", "toc"])
    parsed = Tables()
    parsed.feed(html)
    return parsed


@pytest.fixture(scope="module")
def pages() -> dict[str, Tables]:
    return {
        path.name: rendered(text) for path, text in render_all(REPOSITORY).items() if path.suffix == ".md"
    }


def test_every_row_has_its_headers_cells(pages: dict[str, Tables]) -> None:
    for name, parsed in pages.items():
        assert parsed.rows, name
        broken = [row for row in parsed.rows if row[0] != row[1]]
        assert not broken, (name, broken[:3])


def test_no_text_from_the_code_becomes_html(pages: dict[str, Tables]) -> None:
    for name, parsed in pages.items():
        assert not parsed.foreign, (name, parsed.foreign)


def test_the_anchors_other_pages_link_to_exist(pages: dict[str, Tables]) -> None:
    assert {"clusterunavailable", "kraftmigration", "conflict"} <= pages["condition-reasons.md"].ids
    assert {"kto_topic_reconciles_total", "kto_cluster_connected", "kto_batch_duration_seconds"} <= pages[
        "metrics.md"
    ].ids
    assert {"kto-plan", "kto-apply", "kto-run", "kto-drift", "kto-validate"} <= pages["cli.md"].ids


def test_a_pipe_outside_code_is_escaped_and_kept_inside_it() -> None:
    parsed = rendered("| a | b |\n|---|---|\n| " + prose("x | y and `p|q` <b>") + " | z |\n")
    assert parsed.rows == [(2, 2)]
    assert not parsed.foreign
