"""No call of the engine waits on ZooKeeper without a bound: reads, the watched view, the writer's checks and
batches, opening and closing a client, against a server that is frozen (SIGSTOP: connections stay open, nothing
answers) or gone, and a client whose connection thread has given up. Each returns or raises within its deadline
plus a little, with one line naming the ensemble; and a frozen server that thaws is read again normally."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.kafka_cluster import make_kafka_cluster
from harness.outage import run_in_thread
from harness.zookeeper import connected
from topic_operator.plan import AlterConfig
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.zookeeper.bounded import client_gave_up
from topic_operator.zookeeper.connection import close_client, open_client
from topic_operator.zookeeper.errors import ZooKeeperUnavailableError
from topic_operator.zookeeper.settings import ZooKeeperSettings
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.watched import WatchedCluster
from topic_operator.zookeeper.writer import ZooKeeperWriter

DEADLINE = 2.0
SLACK = 3.0


@pytest.fixture
def server() -> Iterator[LocalZooKeeper]:
    with LocalZooKeeper() as started:
        with connected(started.connect_string) as setup:
            setup.create("/kafka")
        with connected(started.connect_string + "/kafka") as setup:
            make_kafka_cluster(setup, ephemeral=False)
        yield started


@pytest.fixture
def client(server: LocalZooKeeper) -> Iterator[KazooClient]:
    settings = ZooKeeperSettings(
        connect=server.connect_string + "/kafka", connect_max_tries=-1, connect_retry_deadline=None
    )
    opened = open_client(settings)
    yield opened
    close_client(opened)


def bounded_call(work: Callable[[], Any], limit: float) -> tuple[Any, float]:
    """Run ``work`` in a thread, fail if it takes longer than ``limit``; its result or exception, and the time."""
    started = time.monotonic()
    thread, outcome = run_in_thread(work, limit)
    thread.join(limit + 30)
    assert not thread.is_alive(), "the call is still waiting: unbounded"
    elapsed = outcome["ended"] - started
    assert elapsed <= limit, f"took {elapsed:.1f} s, bound {limit:.1f} s"
    return outcome.get("error", outcome.get("value")), elapsed


CALLS: dict[str, Callable[[KazooClient], Any]] = {
    "read_cluster": lambda c: read_cluster(c, partition_states=True, deadline=DEADLINE),
    "WatchedCluster.state": lambda c: WatchedCluster(c, deadline=DEADLINE).state(),
    "require_kafka_cluster": lambda c: ZooKeeperWriter(c, deadline=DEADLINE).require_kafka_cluster(),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("call", sorted(CALLS))
def test_reads_of_a_frozen_server_end_at_the_deadline(
    server: LocalZooKeeper, client: KazooClient, call: str
) -> None:
    server.pause()
    try:
        error, elapsed = bounded_call(lambda: CALLS[call](client), DEADLINE + SLACK)
    finally:
        server.resume()
    assert isinstance(error, ZooKeeperUnavailableError), error
    assert str(error).startswith("ZooKeeper at /kafka is unavailable while ")
    assert str(error).endswith(f"it did not answer for {DEADLINE:g} s (the deadline)")
    assert elapsed >= DEADLINE * 0.9
    # Thawed, the same client reads normally again.
    assert read_cluster(client, deadline=20).cluster_id is not None


@pytest.mark.timeout(60)
def test_a_batch_for_a_frozen_server_writes_nothing_and_says_so(
    server: LocalZooKeeper, client: KazooClient
) -> None:
    writer = ZooKeeperWriter(client, deadline=DEADLINE)
    actions = [AlterConfig(f"t{i}", {"retention.ms": "1"}, expected_version=None) for i in range(400)]
    server.pause()
    try:
        error, _ = bounded_call(lambda: writer.apply_all(actions), DEADLINE + SLACK)
    finally:
        server.resume()
    assert isinstance(error, ZooKeeperUnavailableError)
    assert "checking the cluster" in str(error)
    assert read_cluster(client, deadline=20).topics == {}
    assert client.get_children("/config/topics") == []


@pytest.mark.timeout(60)
def test_closing_a_client_of_a_frozen_server_is_bounded(server: LocalZooKeeper) -> None:
    """kazoo's ``stop`` may wait for the frozen server's answer to its close request (up to two thirds of the
    session timeout) and then joins its thread without a bound; ``close_client`` stops waiting after its own."""
    client = open_client(ZooKeeperSettings(connect=server.connect_string, session_timeout=30))
    client.get("/")
    server.pause()
    try:
        _, elapsed = bounded_call(lambda: close_client(client, timeout=1.0), 1.0 + SLACK)
    finally:
        server.resume()
    assert elapsed < 1.0 + 1.0


@pytest.mark.timeout(60)
def test_opening_a_client_on_a_frozen_server_is_bounded(server: LocalZooKeeper) -> None:
    server.pause()
    try:
        error, _ = bounded_call(
            lambda: open_client(
                ZooKeeperSettings(connect=server.connect_string, connection_timeout=DEADLINE)
            ),
            DEADLINE + SLACK,
        )
    finally:
        server.resume()
    assert isinstance(error, ZooKeeperUnavailableError)
    assert str(error).startswith(f"cannot reach ZooKeeper at {server.connect_string} within 2 s")


@pytest.mark.timeout(60)
def test_nothing_is_queued_into_a_client_that_gave_up(server: LocalZooKeeper) -> None:
    """kazoo's connection thread stops for good once its retry policy is spent; a request queued then would be
    waited on for ever (the hang an outage caused). Every engine call fails at once instead, saying so."""
    settings = ZooKeeperSettings(
        connect=server.connect_string + "/kafka", connect_max_tries=1, retry_delay=0.05, retry_max_delay=0.05
    )
    client = open_client(settings)
    try:
        server.kill()
        give_up = time.monotonic() + 20
        while not client_gave_up(client) and time.monotonic() < give_up:
            time.sleep(0.05)
        assert client_gave_up(client), "kazoo kept retrying; the test needs it to give up"
        for call in CALLS.values():
            error, _elapsed = bounded_call(lambda call=call: call(client), 1.0)
            assert isinstance(error, ZooKeeperUnavailableError)
            assert "its client gave up reconnecting" in str(error)
        writer = ZooKeeperWriter(client, deadline=30)
        error, _ = bounded_call(lambda: writer.apply_all([AlterConfig("t", {}, expected_version=0)]), 1.0)
        assert isinstance(error, ZooKeeperUnavailableError)
    finally:
        close_client(client)
