"""The built site in Debian's chromium: every page renders with no console error, no failed request and no
request to anything but the local server, and Material's search finds "KafkaTopic"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext

from harness.docs_site import BuiltSite
from harness.site_browser import PageProblems, page_problems, search_results, serve


def _pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html") if "assets" not in p.parts)


@pytest.mark.timeout(150)
def test_every_page_renders_without_errors(built_site: BuiltSite, browser: BrowserContext) -> None:
    site = built_site.directory
    assert (site / "index.html").is_file(), f"the site was not built:\n{built_site.report()}"
    pages = _pages(site)
    with serve(site) as base:
        found = [page_problems(browser, base + page) for page in pages]
    assert len(pages) > 5
    assert not any(p.problems for p in found), _by_problem(found, base)


def _by_problem(found: list[PageProblems], base: str) -> str:
    """Each problem once, with the pages that have it: a site-wide fault (a theme setting) is one line, not one a
    page."""
    pages_of: dict[str, list[str]] = {}
    for page in found:
        for problem in dict.fromkeys(page.problems):
            pages_of.setdefault(problem.replace(base, "/"), []).append(page.url.removeprefix(base))
    return "\n".join(
        f"{problem}\n    on {len(pages)} page(s): {', '.join(pages[:5])}{', ...' if len(pages) > 5 else ''}"
        for problem, pages in pages_of.items()
    )


def _search(built_site: BuiltSite, browser: BrowserContext, query: str) -> tuple[str, list[str]]:
    page = browser.new_page()
    try:
        with serve(built_site.directory) as base:
            answer: tuple[str, list[str]] = search_results(page, base, query)
            return answer
    finally:
        page.close()


@pytest.mark.timeout(60)
def test_the_search_finds_kafkatopic(built_site: BuiltSite, browser: BrowserContext) -> None:
    summary, titles = _search(built_site, browser, "KafkaTopic")
    assert titles, f"searching for KafkaTopic listed nothing ({summary})"
    assert any("KafkaTopic" in t for t in titles), titles


@pytest.mark.timeout(60)
def test_the_search_works_from_the_file_system(built_site: BuiltSite, browser: BrowserContext) -> None:
    """The site opened as files, as a reader of a downloaded copy opens it: the search index is inlined, and the
    Web Worker shim that needs is the site's own (without it, search never answers there: the browser refuses a
    worker to a page read from a file)."""
    index = (built_site.directory / "index.html").as_uri()
    assert page_problems(browser, index).problems == []
    page = browser.new_page()
    try:
        summary, titles = search_results(page, index, "KafkaTopic")
    finally:
        page.close()
    assert any("KafkaTopic" in t for t in titles), (summary, titles)


@pytest.mark.timeout(60)
def test_the_search_check_sees_a_search_that_finds_nothing(
    built_site: BuiltSite, browser: BrowserContext
) -> None:
    """The same reading of the results, for a word no page has: no result, said so (the check above can fail)."""
    assert _search(built_site, browser, "Zqxwvbnmkj") == ("No matching documents", [])


@pytest.mark.timeout(60)
def test_a_broken_script_a_missing_file_and_a_request_outside_are_each_reported(
    built_site: BuiltSite, browser: BrowserContext, tmp_path: Path
) -> None:
    """A throw-away copy of the built site, with one page that breaks each rule once."""
    site = tmp_path / "site"
    shutil.copytree(built_site.directory, site)
    page = (site / "index.html").read_text()
    page = page.replace(
        "</body>",
        "<script>undefinedFunctionOfABrokenPage();</script>"
        '<script src="assets/javascripts/no-such-script.js"></script>'
        '<img src="http://198.51.100.7/pixel.png"></body>',
    )
    (site / "broken.html").write_text(page)
    with serve(site) as base:
        found = page_problems(browser, base + "broken.html").problems
        clean = page_problems(browser, base + "index.html").problems
    added = [p for p in found if p not in clean]  # what the page it copies reports is another test's business
    report = "\n".join(added)
    assert any(p.startswith("script error:") and "undefinedFunctionOfABrokenPage" in p for p in added), report
    assert any("no-such-script.js" in p for p in added), report
    assert any(p.startswith("request to the network: http://198.51.100.7/") for p in added), report
