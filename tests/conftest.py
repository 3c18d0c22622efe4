"""Fixtures shared by every test: real ZooKeeper (one server, per-test chroots, an ensemble) and a real Spark.

Markers follow from where a test lives and what it uses, so ``-m "not spark"`` or ``-m zookeeper`` select
correctly without every test having to remember its decorator.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings as hypothesis_settings

from harness.kafka_cluster import make_kafka_cluster
from harness.zookeeper import (
    Ensemble,
    ZkChroot,
    chroot_for,
    close_client,
    create_chroot,
    delete_chroot,
    new_client,
)
from topic_operator.testing.local_server import LocalZooKeeper

if TYPE_CHECKING:
    from kazoo.client import KazooClient
    from pyspark.sql import SparkSession

TESTS_DIR = Path(__file__).parent

_ZOOKEEPER_FIXTURES = frozenset({"zookeeper_server", "zk_chroot", "zk", "zk_ensemble"})
_MARKERS_BY_DIRECTORY = {"zookeeper": "zookeeper", "spark": "spark", "real": "real_servers"}

# Property tests check behaviour, not speed (speed lives in bench/): hypothesis's 200 ms deadline per example
# only made them flaky on a loaded machine. Each test stays bounded by pytest-timeout.
hypothesis_settings.register_profile("kto", deadline=None)
hypothesis_settings.load_profile("kto")

_timings: dict[str, float] = {}
"""Fixture start-up times, printed at the end of the run so regressions in the harness itself show."""


# -- markers ---------------------------------------------------------------------------------------------------


def _add_marker(item: pytest.Item, name: str) -> None:
    if item.get_closest_marker(name) is None:
        item.add_marker(name)


_ONE_WORKER_DIRECTORIES = frozenset({"real", "spark", "docs"})
"""Where ``make test``'s two workers (pytest-xdist, ``--dist loadgroup``) must not split the tests: each of these
directories starts heavy servers once per process (a kube-apiserver with etcd and Kafka's brokers, a Spark session
and its standalone cluster, the built site with its API server and browser), so its tests run on one worker, while
the other takes the rest, file by file. The real tier waits on servers more than it computes: the two overlap."""


def _xdist_group(item: pytest.Item, top: str) -> str:
    if top in _ONE_WORKER_DIRECTORIES:
        return f"tests/{top}"
    return str(item.path.relative_to(TESTS_DIR)) if top else item.nodeid.split("::")[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            top = item.path.relative_to(TESTS_DIR).parts[0]
        except ValueError:
            top = ""
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(_xdist_group(item, top)))
        if top in _MARKERS_BY_DIRECTORY:
            _add_marker(item, _MARKERS_BY_DIRECTORY[top])
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & _ZOOKEEPER_FIXTURES:
            _add_marker(item, "zookeeper")
        if "zk_ensemble" in fixtures:
            _add_marker(item, "slow")
        if "spark" in fixtures:
            _add_marker(item, "spark")


# -- failure reports -------------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the ZooKeeper servers' logs to a failed test's report: the client side rarely says why."""
    report: pytest.TestReport = yield
    if report.failed:
        funcargs: dict[str, Any] = getattr(item, "funcargs", {})
        ensemble = funcargs.get("zk_ensemble")
        if isinstance(ensemble, Ensemble):
            report.sections.append(("ZooKeeper ensemble logs", ensemble.logs()))
        server = funcargs.get("zookeeper_server")
        if isinstance(server, LocalZooKeeper):
            report.sections.append(("ZooKeeper server log (tail)", server.log_tail(60)))
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _timings:
        figures = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in _timings.items())
        terminalreporter.write_line(f"harness start-up: {figures}")


# -- ZooKeeper ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def zookeeper_server() -> Iterator[LocalZooKeeper]:
    """The session's standalone server; tests share it through private chroots (``zk_chroot``)."""
    with LocalZooKeeper() as server:
        assert server.startup_seconds is not None
        _timings["zookeeper"] = server.startup_seconds
        yield server


@pytest.fixture(scope="session")
def _zk_admin(zookeeper_server: LocalZooKeeper) -> Iterator[KazooClient]:
    """An unchrooted client that creates and deletes the tests' chroots."""
    client = new_client(zookeeper_server.connect_string)
    yield client
    close_client(client)


@pytest.fixture
def zk_chroot(
    request: pytest.FixtureRequest, zookeeper_server: LocalZooKeeper, _zk_admin: KazooClient
) -> Iterator[ZkChroot]:
    """A chroot only this test uses, created before and deleted (recursively) after it."""
    chroot = ZkChroot(zookeeper_server, chroot_for(request.node.name))
    create_chroot(_zk_admin, chroot.path)
    yield chroot
    delete_chroot(_zk_admin, chroot.path)


@pytest.fixture
def zk(zk_chroot: ZkChroot) -> Iterator[KazooClient]:
    """A connected kazoo client whose ``/`` is this test's chroot."""
    client = new_client(zk_chroot.connect_string)
    yield client
    close_client(client)


@pytest.fixture
def kafka_zk(zk: KazooClient) -> KazooClient:
    """The test's chroot made to look like a running Kafka cluster (6 brokers in racks a/b/c, see
    ``harness.kafka_cluster``); the chroot and the brokers' session go away with ``zk``."""
    make_kafka_cluster(zk)
    return zk


@pytest.fixture(scope="session")
def _zk_ensemble_session() -> Iterator[Ensemble]:
    ensemble = Ensemble(size=3)
    try:
        ensemble.start()
        assert ensemble.startup_seconds is not None
        _timings["zookeeper ensemble"] = ensemble.startup_seconds
        yield ensemble
    finally:
        ensemble.stop()


@pytest.fixture
def zk_ensemble(_zk_ensemble_session: Ensemble) -> Ensemble:
    """A whole 3-server ensemble (shared by the session; servers an earlier test killed are restarted first).

    Tests using it are marked ``slow`` and ``zookeeper`` automatically.
    """
    _zk_ensemble_session.heal()
    return _zk_ensemble_session


# -- Spark -------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One ``local[2]`` SparkSession for the session; tests using it are marked ``spark`` automatically."""
    from harness.spark import start_local_session  # lazy: keeps pyspark out of non-Spark runs

    started = time.monotonic()
    session = start_local_session(tmp_path_factory.mktemp("spark"))
    _timings["spark"] = time.monotonic() - started
    try:
        yield session
    finally:
        session.stop()
