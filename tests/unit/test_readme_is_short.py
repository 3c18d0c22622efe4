"""The README stays a front page: at most 200 lines, with the facts on the documentation site, and every link it
makes into ``docs/`` reaches a page that exists and, where it names one, a heading of that page.

The site's strict build checks the links between the site's own pages; the README is outside the site, so nothing
else would notice a page renamed or a heading reworded under one of its links (GitHub shows such a link as a page
not found, or lands at the top of the page)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MOST_LINES = 200
"""The README's length limit: past it, the facts belong on a page of the site."""

_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.+?)\s*#*\s*$")


@dataclass(frozen=True, slots=True)
class Link:
    line: int
    target: str


def lines_outside_code(text: str) -> Iterator[tuple[int, str]]:
    """Each line with its number, but the fenced code blocks' (a ``#`` comment in a shell block is no heading,
    and a link shown in a block is no link)."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = _FENCE.match(line)
        if opening:
            marker = opening.group(1)
            if fence is None:
                fence = marker
            elif marker.startswith(fence):
                fence = None
        elif fence is None:
            yield number, line


def links_into_docs(text: str) -> list[Link]:
    """Every relative link to a ``docs/`` Markdown page, with its line, outside code blocks."""
    found: list[Link] = []
    for number, line in lines_outside_code(text):
        for match in _LINK.finditer(line):
            target = match.group("target")
            if target.startswith("docs/") and target.partition("#")[0].endswith(".md"):
                found.append(Link(number, target))
    return found


def heading_anchor(heading: str) -> str:
    """The anchor MkDocs' table of contents gives a heading: its text without markup, lower case, punctuation
    dropped, spaces as hyphens (Python-Markdown's ``toc.slugify``; GitHub's differs only for repeated spaces)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[`*]", "", text)
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def page_anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, outside code blocks (a ``#`` comment in a shell block is no heading)."""
    anchors: set[str] = set()
    for _, line in lines_outside_code(page.read_text()):
        heading = _HEADING.match(line)
        if heading:
            anchors.add(heading_anchor(heading.group("text")))
    return anchors


def broken_links(readme: Path) -> list[str]:
    """Each link of ``readme`` into ``docs/`` that reaches no page or no heading, as ``README.md:LINE: why``."""
    problems: list[str] = []
    for link in links_into_docs(readme.read_text()):
        path, _, anchor = link.target.partition("#")
        page = readme.parent / path
        where = f"{readme.name}:{link.line}: {link.target}"
        if not page.is_file():
            problems.append(f"{where}: no such page")
        elif anchor and anchor not in page_anchors(page):
            problems.append(f"{where}: {path} has no heading with the anchor #{anchor}")
    return problems


def test_the_readme_is_at_most_200_lines() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= MOST_LINES, f"README.md has {lines} lines; move what is past {MOST_LINES} into docs/"


def test_the_readme_links_into_the_site() -> None:
    assert len(links_into_docs(README.read_text())) >= 10


def test_every_link_of_the_readme_into_docs_reaches_its_page_and_heading() -> None:
    assert broken_links(README) == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("KtoClusterDisconnected", "ktoclusterdisconnected"),
        ("Speed of `kto validate`", "speed-of-kto-validate"),
        ("Speed at 50,000 KafkaTopics", "speed-at-50000-kafkatopics"),
        ("Pause, Plan mode", "pause-plan-mode"),
        ("`kto_cluster_connected`", "kto_cluster_connected"),
        ("Scraping, alerts and the dashboard: what ships", "scraping-alerts-and-the-dashboard-what-ships"),
    ],
)
def test_anchors_are_made_as_mkdocs_makes_them(heading: str, anchor: str) -> None:
    assert heading_anchor(heading) == anchor


def test_a_link_to_a_missing_page_or_heading_is_reported_with_its_line(tmp_path: Path) -> None:
    """The checks above can fail: a README whose links point past the site is refused, naming each link."""
    (tmp_path / "docs" / "how-to").mkdir(parents=True)
    (tmp_path / "docs" / "how-to" / "install.md").write_text(
        "# Install\n\n## 2b. Install with Helm\n\n```sh\n# not\n```\n"
    )
    readme = tmp_path / "README.md"
    readme.write_text(
        "# x\n\n"
        "[helm](docs/how-to/install.md#2b-install-with-helm)\n"
        "[gone](docs/how-to/uninstall.md)\n"
        "[no heading](docs/how-to/install.md#install-with-kubectl)\n"
        "[a comment is no heading](docs/how-to/install.md#not)\n"
        "```md\n[in a code block](docs/nowhere.md)\n```\n"
    )
    assert broken_links(readme) == [
        "README.md:4: docs/how-to/uninstall.md: no such page",
        "README.md:5: docs/how-to/install.md#install-with-kubectl: docs/how-to/install.md has no heading with the "
        "anchor #install-with-kubectl",
        "README.md:6: docs/how-to/install.md#not: docs/how-to/install.md has no heading with the anchor #not",
    ]
