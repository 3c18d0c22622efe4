"""Killing the ensemble's leader in the middle of a batch leaves every write whole, and reported truthfully.

The writer pipelines its transactions, so when the leader dies some are answered, some were committed but lost
their answer with the connection, and some never reached a quorum. Afterwards each topic must be all there
(config and topic znode) or not there at all, each applied config change must have exactly one notification,
and the writer must say APPLIED for exactly the writes that landed: no false failure, no second notification.

The leader is killed from inside the batch, not after a guessed delay: when the writer is about to build its
``FAULT_AT``-th transaction, it is held until half of the commits sent so far are answered (the rest are then at
the leader or on their way back), the leader gets SIGKILL, and the writer goes straight on submitting the other
half into the dying connection. Its client is connected to the leader, so every answer the leader had not sent
is lost. Each test prints what the fault caught; typical runs: 30-50 commits unanswered at the kill, 100-150
commits lost their answer, of which 0-50 had in fact committed (found by re-reading), the rest sent again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import ConnectionLoss, SessionExpiredError
from kazoo.protocol.states import KazooState

from harness.kafka_cluster import CLUSTER_ID, SIX_BROKERS_THREE_RACKS
from harness.write_faults import (
    RecordedTransaction,
    assert_config_changes_whole,
    assert_creations_whole,
    config_changes,
    creations,
    fresh_read,
)
from harness.zookeeper import Ensemble, chroot_for, close_client, connected, delete_chroot, new_client
from topic_operator.testing.simulated_brokers import bootstrap_cluster, register_brokers
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import Outcome, WriteResult, ZooKeeperWriter

BATCH = 200
FAULT_AT = 100
"""The leader dies just before the writer builds this transaction (0-based): half the batch is submitted."""
WINDOW = 1000
"""The writer's default: the whole batch is submitted before any answer is collected."""
BATCH_TIMEOUT = 60.0
"""Generous: a leader election takes a few seconds; the writer's own retry deadline is 60 s per step."""

_LOST = (ConnectionLoss, SessionExpiredError)


# -- a Kafka-looking chroot on the ensemble ------------------------------------------------------------------


@dataclass(frozen=True)
class KafkaOnEnsemble:
    ensemble: Ensemble
    chroot: str

    @property
    def connect_string(self) -> str:
        """The ensemble's servers and this test's chroot."""
        return self.ensemble.connect_string + self.chroot

    def leader_first(self) -> str:
        """The servers with the current leader first, for a client made with ``randomize_hosts=False``: a client
        on the leader loses every answer the leader had not sent when it died, so the fault catches commits in
        flight (a client on a follower often gets all its answers before the follower drops it)."""
        leader = self.ensemble.leader()
        ports = [leader.client_port] + [s.client_port for s in self.ensemble.servers if s is not leader]
        return ",".join(f"{self.ensemble.host}:{port}" for port in ports) + self.chroot


@pytest.fixture
def kafka_on_ensemble(zk_ensemble: Ensemble, request: pytest.FixtureRequest) -> Iterator[KafkaOnEnsemble]:
    """A private chroot on the session's ensemble that looks like a Kafka cluster. The brokers register through
    their own session, so only the writer's connection is what the fault hits."""
    chroot = chroot_for(request.node.name)
    with connected(zk_ensemble.connect_string) as admin:
        admin.create(chroot)
    brokers = new_client(zk_ensemble.connect_string + chroot)
    try:
        bootstrap_cluster(brokers, CLUSTER_ID)
        register_brokers(brokers, SIX_BROKERS_THREE_RACKS, controller=0)
        yield KafkaOnEnsemble(zk_ensemble, chroot)
    finally:
        close_client(brokers)
        with connected(zk_ensemble.connect_string) as admin:
            delete_chroot(admin, chroot)


# -- the fault, fired from inside the batch -------------------------------------------------------------------


@dataclass
class FaultInBatch:
    """Replaces the client's ``transaction()`` to record every commit the writer sends (first sends and resends,
    with their answers) and to run ``fault`` once, just before the ``at``-th transaction is built.

    This is instrumentation of the real client, not a fake: every transaction still goes to the real servers.
    """

    client: KazooClient
    at: int
    fault: Callable[[], None]
    commits: list[Any] = field(default_factory=list)
    """The async answer of every commit, in the order sent."""
    unanswered_at_fault: int | None = None
    fired_at: float | None = None
    """``time.monotonic()`` when the fault fired."""
    timeline: list[tuple[float, str]] = field(default_factory=list)
    """The client's state changes, with the time each was seen."""
    _built: int = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(self.client, "transaction", self._transaction)
        self.client.add_listener(lambda state: self.timeline.append((time.monotonic(), state)))

    def _transaction(self) -> TransactionRequest:
        index, self._built = self._built, self._built + 1  # only the writer's thread builds transactions
        if index == self.at:
            self._wait_until_flowing()
            self.unanswered_at_fault = sum(not answer.ready() for answer in self.commits)
            self.fired_at = time.monotonic()
            self.fault()
        return RecordedTransaction(self.client, self.commits)

    def _wait_until_flowing(self, timeout: float = 10.0) -> None:
        """Hold the writer until half of what it sent is answered: the rest are then somewhere between the
        leader's queue and the client's socket, so the fault catches commits at every stage."""
        deadline = time.monotonic() + timeout
        while sum(answer.ready() for answer in self.commits) < self.at // 2:
            assert time.monotonic() < deadline, "the first commits were not answered in time"
            time.sleep(0.0005)

    def landed_unanswered(self, results: Sequence[WriteResult]) -> int:
        """Actions whose first commit lost its answer yet which the writer did not send again: it re-read and
        found them committed. (The first ``len(results)`` commits are the first sends: the window holds them all.)"""
        first_sends = self.commits[: len(results)]
        return sum(
            isinstance(answer.exception, _LOST) and result.retried == 0
            for answer, result in zip(first_sends, results, strict=True)
        )

    @property
    def states(self) -> list[str]:
        return [state for _, state in self.timeline]

    def since_fault(self, moment: float) -> str:
        assert self.fired_at is not None
        return f"+{moment - self.fired_at:.2f} s"

    @property
    def fired(self) -> bool:
        return self.unanswered_at_fault is not None

    @property
    def lost(self) -> int:
        """Commits whose answer never came: the connection (or session) went first."""
        return sum(isinstance(answer.exception, _LOST) for answer in self.commits)


def writer_client(cluster: KafkaOnEnsemble) -> KazooClient:
    """The writer's own client, on the leader. Reconnection attempts back off to at most 0.5 s (kazoo's default
    doubles without bound, so a few seconds of election could become a 12 s wait and a slow test)."""
    return new_client(
        cluster.leader_first(),
        randomize_hosts=False,
        connection_retry={"max_tries": -1, "delay": 0.05, "max_delay": 0.5},
    )


def crash(server: Any) -> None:
    """SIGKILL the server and return at once, without reaping it (``Ensemble.kill`` waits for that): the writer
    goes on submitting while the connection dies under it, so commits are caught queued and in flight."""
    server.process.kill()


def run_bounded(work: Callable[[], list[WriteResult]], timeout: float) -> list[WriteResult]:
    """Run the batch in a daemon thread so that a writer stuck for good fails the test instead of hanging it."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["results"] = work()
        except BaseException as error:  # re-raised in the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="writer-batch", daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"the batch did not finish within {timeout} s"
    if "error" in outcome:
        raise outcome["error"]
    results: list[WriteResult] = outcome["results"]
    return results


# -- the batches ------------------------------------------------------------------------------------------------


def report(what: str, fault: FaultInBatch, results: Sequence[WriteResult], batch_ended: float) -> None:
    retried = [r for r in results if r.retried]
    print(
        f"\n{what}: fault with {fault.unanswered_at_fault} of {FAULT_AT} commits unanswered; "
        f"{fault.lost} commits lost their answer; {fault.landed_unanswered(results)} of those had landed "
        f"(found by re-reading, not sent again); {len(retried)} actions sent again "
        f"({sum(r.retried for r in results)} resends); "
        f"{sum(r.outcome is Outcome.APPLIED for r in results)}/{len(results)} applied; "
        f"client {', '.join(f'{state} {fault.since_fault(at)}' for at, state in fault.timeline)}; "
        f"batch done {fault.since_fault(batch_ended)}"
    )


def assert_fault_landed_mid_batch(fault: FaultInBatch, results: Sequence[WriteResult]) -> None:
    assert fault.fired, "the fault never fired"
    assert KazooState.SUSPENDED in fault.states, "the writer's client never lost its connection"
    assert fault.lost > 0, "no commit lost its answer: the fault did not land while commits were in flight"
    # Every resend the writer counts is a commit it sent, and nothing else was sent twice.
    assert len(fault.commits) == len(results) + sum(r.retried for r in results)


# -- tests ------------------------------------------------------------------------------------------------------


def test_topic_creations_are_all_or_nothing_across_a_leader_crash(
    kafka_on_ensemble: KafkaOnEnsemble, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensemble = kafka_on_ensemble.ensemble
    leader = ensemble.leader()
    actions = creations(BATCH)
    client = writer_client(kafka_on_ensemble)
    fault = FaultInBatch(client, FAULT_AT, lambda: crash(leader))
    try:
        fault.install(monkeypatch)
        writer = ZooKeeperWriter(client, window=WINDOW)
        results = run_bounded(lambda: writer.apply_all(actions), BATCH_TIMEOUT)
        batch_ended = time.monotonic()
    finally:
        close_client(client)
        if fault.fired:
            ensemble.kill(leader)  # reaps it and records it as down, so the next test's ensemble is healed
    report("topic creations, leader killed", fault, results, batch_ended)
    assert [r.action for r in results] == actions
    assert_fault_landed_mid_batch(fault, results)

    state, notified = fresh_read(kafka_on_ensemble.connect_string)
    assert ensemble.leader() is not leader
    assert_creations_whole(state, notified, actions, results)
    assert len(state.topics) == BATCH, "the writer gave up on writes the surviving quorum would have taken"


def test_config_changes_have_one_notification_each_across_a_leader_crash(
    kafka_on_ensemble: KafkaOnEnsemble, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensemble = kafka_on_ensemble.ensemble
    topics = creations(BATCH)
    leader = ensemble.leader()
    client = writer_client(kafka_on_ensemble)
    fault = FaultInBatch(client, FAULT_AT, lambda: crash(leader))
    try:
        writer = ZooKeeperWriter(client, window=WINDOW)
        assert {r.outcome for r in writer.apply_all(topics)} == {Outcome.APPLIED}
        before = read_cluster(client)
        changes = config_changes(topics, before)
        fault.install(monkeypatch)
        results = run_bounded(lambda: writer.apply_all(changes), BATCH_TIMEOUT)
        batch_ended = time.monotonic()
    finally:
        close_client(client)
        if fault.fired:
            ensemble.kill(leader)  # reaps it and records it as down, so the next test's ensemble is healed
    report("config changes, leader killed", fault, results, batch_ended)
    assert [r.action for r in results] == changes
    assert_fault_landed_mid_batch(fault, results)

    state, notified = fresh_read(kafka_on_ensemble.connect_string)
    applied = assert_config_changes_whole(state, notified, topics, changes, results)
    assert len(applied) == BATCH, "the writer gave up on writes the surviving quorum would have taken"
