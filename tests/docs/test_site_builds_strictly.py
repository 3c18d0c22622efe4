"""The site builds with ``mkdocs build --strict``, and a broken link or anchor fails it naming the page and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.docs_site import BuiltSite, SiteProblem, build_site


@pytest.mark.timeout(150)
def test_the_site_builds_strictly(built_site: BuiltSite) -> None:
    assert built_site.succeeded, f"mkdocs build --strict failed:\n{built_site.report()}"
    assert (built_site.directory / "index.html").is_file()


@pytest.mark.timeout(150)
def test_a_broken_link_and_a_broken_anchor_fail_the_build_with_their_lines(
    docs_dir: Path, tmp_path: Path
) -> None:
    """A throw-away copy of the docs, one page given a link to a missing page and one to a missing anchor."""
    copy = tmp_path / "docs"
    shutil.copytree(docs_dir, copy)
    page = copy / "getting-started" / "setup.md"
    lines = page.read_text().splitlines()
    lines += [
        "",
        "See [a page that is not there](no-such-page.md).",
        "",
        "And [no such anchor](#no-such-anchor).",
    ]
    page.write_text("\n".join(lines) + "\n")

    built = build_site(docs_dir.parent, tmp_path, docs=copy)

    assert not built.succeeded
    located = {(p.page, p.line) for p in built.problems if isinstance(p, SiteProblem)}
    assert ("getting-started/setup.md", len(lines) - 2) in located, built.report()
    assert ("getting-started/setup.md", len(lines)) in located, built.report()
