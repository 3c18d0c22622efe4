"""The real-server tier: a real kube-apiserver with etcd, and real Kafka brokers (every distribution found).

Servers come from ``harness.server_binaries`` (``KTO_KUBE_APISERVER``, ``KTO_ETCD``, ``KTO_KAFKA_HOME``, else
``../shared/servers/``); without them every test here skips with one line naming what is missing. The servers
are session-scoped (each test works in namespaces and topics of its own), stopped by PID by the fixture that
started them, and their logs, with the operators' output, are attached to a failed test's report.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.broker_policies import with_policies
from harness.kraft_cluster import KRaftCluster, kraft_cluster_or_skip, secured_kraft_cluster_or_skip
from harness.kto_objects import remove_kto_objects
from harness.kube_client import KubeClient
from harness.operator_process import Operator, start_operator
from harness.real_apiserver import (
    AS_DEPLOYED,
    Credentials,
    RealApiServer,
    installed_apiserver,
    operator_kubeconfig_of,
)
from harness.real_kafka import KafkaBrokers
from harness.server_binaries import kafka_distributions, zookeeper_mode_distributions
from topic_operator.testing.local_server import LocalZooKeeper

DISTRIBUTIONS, NO_KAFKA = zookeeper_mode_distributions()
"""The distributions whose brokers the ``kafka`` fixture runs in ZooKeeper mode (4.0 removed that mode)."""

pytestmark = pytest.mark.real_servers


# -- the API server ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealApiServer]:
    """etcd and kube-apiserver with RBAC on, and ``manifests/install/`` applied server-side (as the install guide
    says)."""
    with installed_apiserver(tmp_path_factory.mktemp("apiserver")) as server:
        yield server


@pytest.fixture(scope="session")
def kube(apiserver: RealApiServer) -> KubeClient:
    """The admin's client (``system:masters``): what a platform engineer's kubectl does."""
    return apiserver.client()


@pytest.fixture
def namespace(kube: KubeClient) -> Iterator[str]:
    """A namespace of this test's own, emptied of kto.dev objects afterwards (the namespace itself stays: without
    a controller-manager a deleted namespace would stay Terminating)."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    remove_kto_objects(kube, name)


@pytest.fixture(scope="session")
def operator_kubeconfig(apiserver: RealApiServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kubeconfig with a token of the operator's ServiceAccount (TokenRequest), as its Pod would have."""
    return operator_kubeconfig_of(apiserver, tmp_path_factory.mktemp("operator") / "kubeconfig")


@pytest.fixture
def operators(tmp_path: Path, operator_kubeconfig: Path) -> Iterator[Callable[..., Operator]]:
    """Start ``kto run`` processes logged in as the ServiceAccount; each is killed when the test ends."""
    started: list[Operator] = []

    def start(*arguments: str, kubeconfig: Path | None = None, **environment: str) -> Operator:
        operator = start_operator(
            tmp_path,
            kubeconfig or operator_kubeconfig,
            *arguments,
            name=f"operator-{len(started) + 1}",
            **{**AS_DEPLOYED, **environment},
        )
        started.append(operator)
        return operator

    yield start
    for operator in started:  # SIGTERM: a clean exit leaves no live-looking peer for the next test's operator
        with contextlib.suppress(AssertionError):
            operator.stop()


# -- Kafka -----------------------------------------------------------------------------------------------------------


@pytest.fixture(
    scope="session",
    params=DISTRIBUTIONS or [None],
    ids=[d.version for d in DISTRIBUTIONS] or ["no-kafka"],
)
def kafka(
    request: pytest.FixtureRequest,
    zookeeper_server: LocalZooKeeper,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[KafkaBrokers]:
    """Three brokers in racks a/b/c under ``/kafka-<version>`` of the session's ZooKeeper, per distribution."""
    if request.param is None:
        pytest.skip(f"real Kafka brokers: {NO_KAFKA}")
    distribution = request.param
    chroot = f"/kafka-{distribution.version}-{uuid.uuid4().hex[:6]}"
    brokers = KafkaBrokers(
        distribution,
        zookeeper_server.connect_string,
        chroot,
        tmp_path_factory.mktemp(f"kafka-{distribution.version}"),
    )
    with brokers:
        yield brokers


@pytest.fixture(scope="session")
def kraft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    """A cluster that was always KRaft: one controller and three brokers in racks a/b/c (Kafka 3.9)."""
    with kraft_cluster_or_skip(tmp_path_factory.mktemp("kraft")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def kraft_41(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    """A cluster of Kafka 4.1, the first line with no ZooKeeper at all: one controller and three brokers in racks
    a/b/c, running the test policies of ``harness.broker_policies`` where a JDK can compile them
    (``runs_policies`` says whether it does)."""
    directory = tmp_path_factory.mktemp("kraft-4.1")
    with kraft_cluster_or_skip(
        directory / "cluster",
        line="4.1",
        prepare=lambda cluster: with_policies(cluster, directory / "policies"),
    ) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KRaftCluster, Credentials]]:
    """A Kafka 3.9 KRaft cluster whose client listener is SASL_SSL with SCRAM-SHA-512 user
    ``harness.kraft_cluster.SECURED_USER``, and the credentials whose CA signed its brokers' certificate."""
    with secured_kraft_cluster_or_skip(tmp_path_factory.mktemp("kraft-scram")) as secured_cluster:
        yield secured_cluster


# -- reports ---------------------------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test's report gets the servers' logs and the output of every operator it started."""
    report: pytest.TestReport = yield
    if report.failed:
        funcargs: dict[str, Any] = getattr(item, "funcargs", {})
        server = funcargs.get("apiserver")
        if isinstance(server, RealApiServer):
            report.sections.append(("kube-apiserver and etcd logs", server.logs(60)))
        brokers = (
            funcargs.get("kafka")
            or funcargs.get("kraft")
            or funcargs.get("kraft_cluster")
            or funcargs.get("kraft_41")
        )
        if isinstance(brokers, KafkaBrokers):
            report.sections.append(
                (f"Kafka {brokers.distribution.version} broker logs", brokers.logs(lines=40))
            )
        for path in sorted(Path(str(funcargs.get("tmp_path", "/nonexistent"))).glob("operator*.log")):
            text = path.read_text(errors="replace").splitlines()[-150:]
            report.sections.append((f"{path.name} (last {len(text)} lines)", "\n".join(text)))
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line saying whether the real-server tier ran, and against what (or why it was skipped)."""
    reports = [r for kind in ("passed", "failed", "skipped") for r in terminalreporter.stats.get(kind, [])]
    ours = [r for r in reports if "tests/real/" in r.nodeid and r.when in ("call", "setup")]
    if not ours:
        return
    skipped = [r for r in ours if r.skipped]
    if skipped and len(skipped) == len({r.nodeid for r in ours}):
        reasons = sorted(
            {str(r.longrepr[2]) if isinstance(r.longrepr, tuple) else str(r.longrepr) for r in skipped}
        )
        terminalreporter.write_line(f"real-server tier: skipped ({'; '.join(reasons)})")
        return
    kafka = ", ".join(d.version for d in kafka_distributions()[0]) or "none found"
    terminalreporter.write_line(
        f"real-server tier: {len({r.nodeid for r in ours}) - len(skipped)} tests ran against a real kube-apiserver "
        f"and Kafka {kafka}; {len(skipped)} skipped"
    )
