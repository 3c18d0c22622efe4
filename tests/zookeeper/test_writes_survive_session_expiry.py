"""A session expired by the server in the middle of a batch leaves every write whole, and reported truthfully.

The expiry is real: a second client attaches to the writer's session id and closes it, so the server drops the
writer's connection, finishes (or refuses) what it had already received, and deletes the session. The writer
then gets ``SessionExpiredError`` for everything unanswered, reconnects with a new session and must find out,
by re-reading, which writes landed: each topic all there or absent, one notification per applied config change,
APPLIED exactly for what landed.

The brokers register through their own session (the ``zk`` fixture's), so the expiry hits only the writer and
the cluster it writes to stays intact. The expiry is started from inside the batch, when the writer builds its
``FAULT_AT``-th transaction, and the writer keeps submitting meanwhile, so the expiry lands among commits that
are queued, in flight or answered.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import ConnectionLoss, SessionExpiredError
from kazoo.protocol.states import KazooState

from harness.kafka_cluster import make_kafka_cluster
from harness.write_faults import (
    RecordedTransaction,
    assert_config_changes_whole,
    assert_creations_whole,
    config_changes,
    creations,
    fresh_read,
)
from harness.zookeeper import ZkChroot, close_client, expire_session, new_client
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import Outcome, WriteResult, ZooKeeperWriter

BATCH = 200
FAULT_AT = 50
"""The expiry starts when the writer builds this transaction (0-based) and lands while it submits the rest."""
WINDOW = 1000
"""The writer's default: the whole batch is submitted before any answer is collected."""
EXPIRY_TIMEOUT = 20.0
BATCH_TIMEOUT = 60.0

_LOST = (ConnectionLoss, SessionExpiredError)


@dataclass
class ExpiryInBatch:
    """Replaces the writer client's ``transaction()`` to record every commit it sends (first sends and resends,
    with their answers), and starts a real session expiry, in a thread of its own, just before the ``at``-th
    transaction is built. Every transaction still goes to the real server."""

    client: KazooClient
    server_hosts: str
    at: int
    commits: list[Any] = field(default_factory=list)
    unanswered_at_fault: int | None = None
    states: list[str] = field(default_factory=list)
    expired_session: int | None = None
    new_session: int | None = None
    _expiry: threading.Thread | None = None
    _failure: list[BaseException] = field(default_factory=list)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(self.client, "transaction", self._transaction)
        self.client.add_listener(self.states.append)

    def _transaction(self) -> TransactionRequest:
        if len(self.commits) == self.at and self._expiry is None:
            self.unanswered_at_fault = sum(not answer.ready() for answer in self.commits)
            self.expired_session = self.client.client_id[0]
            self._expiry = threading.Thread(target=self._expire, name="expire-session", daemon=True)
            self._expiry.start()
        return RecordedTransaction(self.client, self.commits)

    def _expire(self) -> None:
        try:
            expire_session(self.client, self.server_hosts, timeout=EXPIRY_TIMEOUT)
        except BaseException as error:  # reported by wait()
            self._failure.append(error)

    def wait(self) -> None:
        """The expiry has finished (the writer has a new session); re-raise what went wrong in its thread."""
        assert self._expiry is not None, "the expiry never started"
        self._expiry.join(EXPIRY_TIMEOUT + 5)
        assert not self._expiry.is_alive(), "the expiry did not finish"
        if self._failure:
            raise self._failure[0]
        self.new_session = self.client.client_id[0]

    @property
    def lost(self) -> int:
        """Commits whose answer never came: the session went first."""
        return sum(isinstance(answer.exception, _LOST) for answer in self.commits)

    def landed_unanswered(self, results: Sequence[WriteResult]) -> int:
        """Actions whose first commit lost its answer yet which the writer did not send again: it re-read and
        found them committed. (The first ``len(results)`` commits are the first sends: the window holds them all.)"""
        return sum(
            isinstance(answer.exception, _LOST) and result.retried == 0
            for answer, result in zip(self.commits[: len(results)], results, strict=True)
        )


# -- the cluster and the batches --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    chroot: ZkChroot
    brokers: KazooClient
    """The session the brokers are registered through; the fault must leave it alone."""


@pytest.fixture
def cluster(zk_chroot: ZkChroot, zk: KazooClient) -> Cluster:
    make_kafka_cluster(zk)
    return Cluster(zk_chroot, zk)


def run_with_expiry(
    cluster: Cluster,
    monkeypatch: pytest.MonkeyPatch,
    client: KazooClient,
    writer: ZooKeeperWriter,
    actions: Sequence[Any],
) -> tuple[ExpiryInBatch, list[WriteResult]]:
    """``client`` is the writer's own connection, the one the expiry is aimed at."""
    fault = ExpiryInBatch(client, cluster.chroot.server_hosts, FAULT_AT)
    fault.install(monkeypatch)
    outcome: dict[str, Any] = {}

    def batch() -> None:
        try:
            outcome["results"] = writer.apply_all(actions)
        except BaseException as error:  # re-raised in the test's thread
            outcome["error"] = error

    # In a daemon thread, so that a writer stuck for good fails the test instead of hanging the run.
    thread = threading.Thread(target=batch, name="writer-batch", daemon=True)
    thread.start()
    thread.join(BATCH_TIMEOUT)
    assert not thread.is_alive(), f"the batch did not finish within {BATCH_TIMEOUT} s"
    fault.wait()
    if "error" in outcome:
        raise outcome["error"]
    results: list[WriteResult] = outcome["results"]
    return fault, results


def check_fault_and_report(
    what: str, cluster: Cluster, fault: ExpiryInBatch, results: Sequence[WriteResult]
) -> None:
    retried = [r for r in results if r.retried]
    print(
        f"\n{what}: expiry started with {fault.unanswered_at_fault} of {FAULT_AT} commits unanswered; "
        f"{fault.lost} commits lost their answer; {fault.landed_unanswered(results)} of those had landed "
        f"(found by re-reading, not sent again); {len(retried)} actions sent again "
        f"({sum(r.retried for r in results)} resends); "
        f"{sum(r.outcome is Outcome.APPLIED for r in results)}/{len(results)} applied; states {fault.states}"
    )
    assert KazooState.LOST in fault.states, "the writer's session never expired"
    assert fault.new_session not in (None, fault.expired_session), "the writer did not get a new session"
    assert fault.lost > 0, "no commit lost its answer: the expiry did not land while commits were in flight"
    assert len(fault.commits) == len(results) + sum(r.retried for r in results), "an uncounted resend"
    # The brokers' session was not the one expired: the cluster the writer wrote to is intact.
    assert sorted(cluster.brokers.get_children("/brokers/ids")) == [str(b) for b in range(6)]


# -- tests ------------------------------------------------------------------------------------------------------


def test_topic_creations_are_all_or_nothing_across_a_session_expiry(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    actions = creations(BATCH)
    client = new_client(cluster.chroot.connect_string)
    try:
        writer = ZooKeeperWriter(client, window=WINDOW)
        fault, results = run_with_expiry(cluster, monkeypatch, client, writer, actions)
    finally:
        close_client(client)
    assert [r.action for r in results] == actions
    check_fault_and_report("topic creations, session expired", cluster, fault, results)

    state, notified = fresh_read(cluster.chroot.connect_string)
    assert_creations_whole(state, notified, actions, results)
    assert len(state.topics) == BATCH, "the writer gave up on writes a healthy server would have taken"


def test_config_changes_have_one_notification_each_across_a_session_expiry(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = creations(BATCH)
    client = new_client(cluster.chroot.connect_string)
    try:
        writer = ZooKeeperWriter(client, window=WINDOW)
        assert {r.outcome for r in writer.apply_all(topics)} == {Outcome.APPLIED}
        before = read_cluster(client)
        changes = config_changes(topics, before)
        fault, results = run_with_expiry(cluster, monkeypatch, client, writer, changes)
    finally:
        close_client(client)
    assert [r.action for r in results] == changes
    check_fault_and_report("config changes, session expired", cluster, fault, results)

    state, notified = fresh_read(cluster.chroot.connect_string)
    applied = assert_config_changes_whole(state, notified, topics, changes, results)
    assert len(applied) == BATCH, "the writer gave up on writes a healthy server would have taken"
