"""The built documentation site served on 127.0.0.1 and opened in Debian's chromium, headless, through Playwright.

Playwright's wheel carries its driver; the browser is the machine's ``/usr/bin/chromium``, launched by path with a
fresh profile and everything that would reach the network switched off, so nothing is ever downloaded. Every
request the pages make is seen before it leaves: one to anything but the local server is refused and reported,
as are console errors, uncaught script errors, failed requests and answers of 400 or more.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import (
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Response,
    Route,
    sync_playwright,
)

__all__ = ["CHROMIUM", "PageProblems", "open_browser", "page_problems", "search_results", "serve"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
PAGE_TIMEOUT_MS = 20_000
SETTLE_STEP_MS = 50
SETTLE_ROUNDS = 100
"""After ``load``, a page is settled once two 50 ms steps in a row saw no request in flight (at most 5 s)."""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """The requests are checked in the browser; the server's own log would only fill the test output."""


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """``directory`` over HTTP on 127.0.0.1 and a free port, in a thread; yields the base URL (ending in ``/``)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="docs-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@dataclass
class PageProblems:
    """What went wrong while one page loaded."""

    url: str
    problems: list[str] = field(default_factory=list)


def _local(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url)
    return parsed.scheme in ("data", "blob", "about", "file") or parsed.hostname == "127.0.0.1"


def _refuse_the_network(route: Route) -> None:
    if _local(route.request.url):
        route.continue_()
    else:
        route.abort("blockedbyclient")


@contextlib.contextmanager
def open_browser(profile: Path) -> Iterator[BrowserContext]:
    """chromium with the profile directory ``profile`` (fresh: the caller's temporary directory)."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=list(CHROMIUM_FLAGS),
            service_workers="block",
        )
        try:
            context.route("**/*", _refuse_the_network)
            context.set_default_timeout(PAGE_TIMEOUT_MS)
            yield context
        finally:
            context.close()


def page_problems(context: BrowserContext, url: str) -> PageProblems:
    """Load ``url``, then wait until no request of the page is in flight for a moment (Playwright's
    ``networkidle`` waits half a second on every page, which across the site costs more than the rest of the
    check), collecting every console error, script error, failed or refused request and error answer."""
    found = PageProblems(url)
    page = context.new_page()
    in_flight: set[Request] = set()

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            found.problems.append(f"console error: {message.text}")

    def failed(request: Request) -> None:
        in_flight.discard(request)
        reason = request.failure or "failed"
        kind = "request to the network" if not _local(request.url) else "failed request"
        found.problems.append(f"{kind}: {request.url} ({reason})")

    def answered(response: Response) -> None:
        if response.status >= 400:
            found.problems.append(f"HTTP {response.status}: {response.url}")

    page.on("console", console)
    page.on("pageerror", lambda error: found.problems.append(f"script error: {error}"))
    page.on("request", lambda request: in_flight.add(request))
    page.on("requestfinished", lambda request: in_flight.discard(request))
    page.on("requestfailed", failed)
    page.on("response", answered)
    try:
        page.goto(url, wait_until="load")
        quiet_rounds = 0
        for _ in range(SETTLE_ROUNDS):
            page.wait_for_timeout(SETTLE_STEP_MS)
            quiet_rounds = quiet_rounds + 1 if not in_flight else 0
            if quiet_rounds == 2:
                break
        else:
            found.problems.append(f"requests still in flight: {sorted(r.url for r in in_flight)}")
    finally:
        page.close()
    return found


def search_results(page: Page, base_url: str, query: str) -> tuple[str, list[str]]:
    """Material's search, as a reader uses it: type ``query`` and wait for its answer. Returns the line over the
    results ("24 matching documents", "No matching documents") and the results' titles."""
    page.goto(base_url, wait_until="load")
    search = page.locator("input[data-md-component='search-query']")
    search.click()
    search.press_sequentially(query)
    meta = page.locator(".md-search-result__meta")
    page.wait_for_function(
        "element => /matching document/i.test(element.textContent)", arg=meta.element_handle()
    )
    titles = [text.strip() for text in page.locator(".md-search-result__item").all_inner_texts()]
    return meta.inner_text().strip(), titles
