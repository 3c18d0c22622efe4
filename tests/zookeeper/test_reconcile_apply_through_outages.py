"""The engine call the operator's batch uses, ``Reconciler.apply(..., deadline=...)``, through real outages in the
middle of creates, growth and config changes: an outage shorter than the deadline is ridden out (every topic
applied, unknown commits verified as soon as ZooKeeper is back), a longer one ends the call within the deadline
plus a few seconds with each topic's outcome, and either way every topic is whole and every outcome true.

Each test has a server of its own (it is killed with SIGKILL and restarted on the same data, or frozen with
SIGSTOP); the fault lands while the batch builds its ``FAULT_AT``-th transaction (``harness.outage.HeldFault``).
Short deadlines keep the suite quick: the behaviour is the same as with the default 60 s.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.outage import (
    CHROOT,
    Change,
    Fault,
    HeldFault,
    assert_whole_and_truthful,
    begin_fault,
    declarations,
    end_fault,
    kafka_server,
    run_in_thread,
)
from topic_operator.manifests.loader import load_manifests
from topic_operator.model import ClusterSpec, TopicSpec
from topic_operator.reconcile import Reconciler, ReconcileReport, TopicOutcome
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.zookeeper.connection import close_client, open_client
from topic_operator.zookeeper.settings import ZooKeeperSettings
from topic_operator.zookeeper.store import ZooKeeperStore

TOPICS = 300
FAULT_AT = 30
SESSION_TIMEOUT = 6.0
SLACK = 8.0
"""Seconds past the deadline a call may take to return: closing out, on a loaded 2-core machine."""


@dataclass
class Batch:
    server: LocalZooKeeper
    client: KazooClient
    cluster: ClusterSpec
    topics: list[TopicSpec]
    connect: str


@pytest.fixture
def server() -> Iterator[LocalZooKeeper]:
    with kafka_server() as started:
        yield started


def prepare(server: LocalZooKeeper, tmp_path: Path, change: Change) -> Batch:
    """The cluster as it is before the change, and the declarations of the change."""
    connect = server.connect_string + CHROOT
    # A connection attempt that a restarting server accepts but does not answer waits a whole session timeout:
    # a short one keeps that well inside the deadline of the tests that ride the outage out.
    settings = ZooKeeperSettings(
        connect=connect,
        session_timeout=SESSION_TIMEOUT,
        connect_max_tries=-1,
        connect_retry_deadline=None,
        retry_max_delay=0.5,
    )
    client = open_client(settings)
    before, after = declarations(tmp_path, change, TOPICS)
    if before is not None:
        loaded = load_manifests([before])
        report = Reconciler(ZooKeeperStore(client), loaded.clusters[0]).apply(loaded.topics)
        assert set(report.counts()) == {TopicOutcome.APPLIED}
    loaded = load_manifests([after])
    return Batch(server, client, loaded.clusters[0], list(loaded.topics), connect)


def apply_through(
    batch: Batch, monkeypatch: pytest.MonkeyPatch, fault: Fault, outage: float, deadline: float
) -> tuple[ReconcileReport, float]:
    """Apply with the fault landing mid-batch; the report and how long after the fault the call returned."""
    held = HeldFault(batch.client, FAULT_AT)
    held.install(monkeypatch)
    reconciler = Reconciler(ZooKeeperStore(batch.client, deadline=deadline), batch.cluster, deadline=deadline)
    thread, outcome = run_in_thread(lambda: reconciler.apply(batch.topics), timeout=outage + deadline + 60)
    try:
        assert held.reached.wait(30), "the batch never reached the fault"
        begin_fault(batch.server, fault)
        fault_at = time.monotonic()
        held.released.set()
        thread.join(outage)
        end_fault(batch.server, fault)
        thread.join(deadline + 60)
        assert not thread.is_alive(), "Reconciler.apply did not return"
    finally:
        held.released.set()
        close_client(batch.client)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"], outcome["ended"] - fault_at


def outcomes(report: ReconcileReport) -> dict[str, str]:
    return {r.topic: r.outcome.value for r in report.results}


@pytest.mark.timeout(90)
@pytest.mark.parametrize("change", ["create", "grow", "config"])
@pytest.mark.parametrize("fault", ["kill", "stop"])
def test_an_outage_shorter_than_the_deadline_is_ridden_out(
    server: LocalZooKeeper, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Change, fault: Fault
) -> None:
    batch = prepare(server, tmp_path, change)
    report, returned = apply_through(batch, monkeypatch, fault, outage=3.0, deadline=20.0)
    print(
        f"\n{change}, {fault} 3 s, deadline 20 s: returned {returned:.1f} s after the fault; {report.counts()}"
    )
    assert report.interrupted is None
    assert report.counts() == {TopicOutcome.APPLIED: TOPICS}
    assert returned >= 3.0, "the call returned before ZooKeeper came back: the fault missed the batch"
    assert_whole_and_truthful(batch.connect, change, TOPICS, outcomes(report))


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("change", "fault"), [("create", "kill"), ("grow", "stop"), ("config", "kill")])
def test_an_outage_longer_than_the_deadline_ends_the_call_with_each_topics_outcome(
    server: LocalZooKeeper, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Change, fault: Fault
) -> None:
    batch = prepare(server, tmp_path, change)
    deadline = 3.0
    report, returned = apply_through(
        batch, monkeypatch, fault, outage=deadline + SLACK + 2, deadline=deadline
    )
    counts = report.counts()
    print(f"\n{change}, {fault} {deadline + SLACK + 2:g} s, deadline {deadline:g} s: returned {returned:.1f} s "
          f"after the fault; {counts}; {report.interrupted}")  # fmt: skip
    assert returned <= deadline + SLACK, f"returned {returned:.1f} s after the fault, deadline {deadline} s"
    assert report.interrupted is not None
    assert f"did not answer for {deadline:g} s" in report.interrupted
    assert sum(counts.values()) == TOPICS
    assert set(counts) <= {TopicOutcome.APPLIED, TopicOutcome.NOT_WRITTEN, TopicOutcome.UNKNOWN}
    assert counts.get(TopicOutcome.APPLIED, 0) < TOPICS, "the fault landed after the batch"
    not_done = [r for r in report.results if r.outcome is not TopicOutcome.APPLIED]
    assert all(r.errors for r in not_done), "every topic not applied says why"
    # Once ZooKeeper is back, the cluster is consistent and the outcomes were true.
    assert_whole_and_truthful(batch.connect, change, TOPICS, outcomes(report))
    # And a second run, with ZooKeeper healthy, finishes the job.
    client = open_client(ZooKeeperSettings(connect=batch.connect))
    try:
        again = Reconciler(ZooKeeperStore(client), batch.cluster).apply(batch.topics)
    finally:
        close_client(client)
    assert again.interrupted is None
    assert set(again.counts()) <= {TopicOutcome.APPLIED, TopicOutcome.UNCHANGED}
    assert_whole_and_truthful(batch.connect, change, TOPICS, dict.fromkeys(outcomes(report), "applied"))
