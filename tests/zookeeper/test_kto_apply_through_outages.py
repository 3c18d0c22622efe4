"""``kto apply`` (a real process) through outages: ZooKeeper killed with SIGKILL for 5, 20 and 90 s and
restarted on the same data, or frozen with SIGSTOP, while the batch is writing.

An outage shorter than the deadline is ridden out: exit 0, every topic applied, and the command was still running
when ZooKeeper came back (so the fault did land in the batch). A longer one ends the command within the deadline
plus a few seconds: exit 1, one line on stderr saying why with the outcome counts, and each topic's outcome in the
JSON. Either way, once ZooKeeper is back every topic is whole and every outcome true.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.outage import (
    CHROOT,
    Change,
    Fault,
    OutageRun,
    apply_through_outage,
    assert_whole_and_truthful,
    declarations,
    kafka_server,
    kto,
)
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.zookeeper.bounded import DEFAULT_DEADLINE

TOPICS = 600
SLACK = 10.0
"""Seconds past the deadline the command may take to return: closing out and exiting, on a loaded machine."""


@pytest.fixture
def server() -> Iterator[LocalZooKeeper]:
    with kafka_server() as started:
        yield started


def run(
    server: LocalZooKeeper, tmp_path: Path, change: Change, fault: Fault, outage: float, deadline: float
) -> OutageRun:
    before, after = declarations(tmp_path, change, TOPICS)
    connect = server.connect_string + CHROOT
    if before is not None:
        setup = kto("apply", "-f", str(before), "--zookeeper", connect, "--yes")
        assert setup.wait(timeout=120) == 0
    result = apply_through_outage(
        server, after, change=change, count=TOPICS, fault=fault, outage=outage, deadline=deadline,
        scratch=tmp_path, timeout=outage + deadline + 60,
    )  # fmt: skip
    print(f"\n{change} x {TOPICS}, deadline {deadline:g} s, {result.summary()}")
    assert_whole_and_truthful(connect, change, TOPICS, result.outcomes)
    return result


def assert_ridden_out(result: OutageRun) -> None:
    assert result.exit_code == 0, result.stderr
    assert result.counts == {"applied": TOPICS}
    assert result.seconds_after_fault >= result.outage, "kto finished before the fault: it missed the batch"
    assert result.stderr == ""


def assert_ended_by_the_deadline(result: OutageRun, deadline: float) -> None:
    assert result.exit_code == 1
    assert result.seconds_after_fault <= deadline + SLACK
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"one line on stderr, not {lines}"
    assert lines[0].startswith("kto apply: stopped: ZooKeeper at /kafka is unavailable while ")
    assert f"it did not answer for {deadline:g} s (the deadline)" in lines[0]
    assert sum(result.counts.values()) == TOPICS
    assert result.counts["applied"] < TOPICS, "the fault landed after the batch"
    for outcome in ("applied", "not written", "unknown"):
        if outcome.replace(" ", "_") in result.counts:
            assert f"{result.counts[outcome.replace(' ', '_')]} {outcome}" in lines[0]
    assert result.interrupted is not None


@pytest.mark.timeout(150)
def test_a_5_s_kill_during_growth_is_ridden_out(server: LocalZooKeeper, tmp_path: Path) -> None:
    # A reconnection that reaches the restarting server before it serves may wait a whole session timeout
    # (18 s) for its answer: the deadline leaves room for that.
    assert_ridden_out(run(server, tmp_path, "grow", "kill", outage=5.0, deadline=40.0))


@pytest.mark.timeout(150)
def test_a_20_s_kill_during_creates_is_ridden_out_with_the_default_deadline(
    server: LocalZooKeeper, tmp_path: Path
) -> None:
    assert_ridden_out(run(server, tmp_path, "create", "kill", outage=20.0, deadline=DEFAULT_DEADLINE))


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_90_s_kill_during_config_changes_ends_the_command_at_the_default_deadline(
    server: LocalZooKeeper, tmp_path: Path
) -> None:
    result = run(server, tmp_path, "config", "kill", outage=90.0, deadline=DEFAULT_DEADLINE)
    assert_ended_by_the_deadline(result, DEFAULT_DEADLINE)


@pytest.mark.timeout(120)
def test_a_frozen_server_ends_the_command_within_the_deadline(server: LocalZooKeeper, tmp_path: Path) -> None:
    result = run(server, tmp_path, "config", "stop", outage=25.0, deadline=5.0)
    assert_ended_by_the_deadline(result, 5.0)
