"""The documentation site's tests: one strict build per session, one real ZooKeeper (the suite's own), one real
kube-apiserver with the CRDs installed, and one headless chromium, each started once and stopped by the fixture
that started it. Tests that need a server the machine lacks skip with one line naming it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext

from harness.docs_site import BuiltSite, build_site
from harness.kraft_cluster import KRaftCluster, secured_kraft_cluster_or_skip
from harness.real_apiserver import Credentials, RealApiServer, installed_apiserver
from harness.site_browser import CHROMIUM, open_browser

REPOSITORY = Path(__file__).resolve().parents[2]
DOCS = REPOSITORY / "docs"


@pytest.fixture(scope="session")
def docs_dir() -> Path:
    return DOCS


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """``mkdocs build --strict`` of the repository's docs, once per session, into a temporary directory."""
    return build_site(REPOSITORY, tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def docs_apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealApiServer]:
    """etcd and kube-apiserver with ``manifests/install/`` applied (the CRDs among it), for the whole session."""
    with installed_apiserver(tmp_path_factory.mktemp("docs-apiserver")) as server:
        yield server


@pytest.fixture(scope="session")
def docs_kraft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KRaftCluster, Credentials]]:
    """A Kafka 3.9 KRaft cluster whose client listener speaks SASL_SSL with SCRAM-SHA-512, as the KRaft pages'
    reader's does, and the credentials whose CA signed its brokers' certificate."""
    with secured_kraft_cluster_or_skip(tmp_path_factory.mktemp("docs-kraft")) as secured:
        yield secured


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Debian's chromium, headless, with a fresh profile, for the module that uses it (one module does): closed
    before other modules run, so Playwright's own event loop never meets pytest-asyncio's."""
    if not CHROMIUM.is_file():
        pytest.skip(f"a headless browser: {CHROMIUM} not found (Debian's chromium package)")
    with open_browser(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the site that use the real API server carry ``real_servers``, as those of ``tests/real`` do, so
    ``-m "not real_servers"`` leaves them out too."""
    for item in items:
        if {"docs_apiserver", "docs_kraft"} & set(
            getattr(item, "fixturenames", ())
        ) and item.get_closest_marker("real_servers") is None:
            item.add_marker("real_servers")
