"""ZooKeeper outages in the middle of an apply, as an outside check made them, and the checks that follow.

A server of the test's own (it gets killed) holds a Kafka-looking chroot whose brokers are persistent, standing
for brokers that register again after an outage longer than their session. The fault fires from inside the
batch, not after a guessed delay: for ``kto apply`` (a real subprocess) once the cluster shows the batch has
started writing, for the engine (``Reconciler.apply``) while it builds its ``at``-th transaction, which is held
until the fault has happened. Faults are ``kill`` (SIGKILL, then a restart on the same data directory and port)
and ``stop`` (SIGSTOP, then SIGCONT).

Afterwards every topic must be whole, either as before or as declared (for a config change: with exactly one
notification), and each reported outcome must be true: ``applied`` only if it landed, ``not_written`` only if it
did not; ``unknown`` may be either.

``bench/outage.py`` drives the same scenario to print their timings.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kazoo.client import KazooClient

from harness.kafka_cluster import make_kafka_cluster
from harness.write_faults import fresh_read
from harness.zookeeper import close_client, connected, new_client
from topic_operator.model import ClusterState
from topic_operator.testing.local_server import LocalZooKeeper

CHROOT = "/kafka"
CLUSTER = "outage"

Fault = Literal["kill", "stop"]
Change = Literal["create", "grow", "config"]

PARTITIONS_BEFORE, PARTITIONS_AFTER = 3, 6
RETENTION_BEFORE, RETENTION_AFTER = "1000", "2000"


# -- the cluster and its declarations ---------------------------------------------------------------------------


@contextlib.contextmanager
def kafka_server() -> Iterator[LocalZooKeeper]:
    """A server of its own with a Kafka-looking ``/kafka`` chroot (persistent brokers in three racks)."""
    with LocalZooKeeper() as server:
        with connected(server.connect_string) as admin:
            admin.create(CHROOT)
        with connected(server.connect_string + CHROOT) as setup:
            make_kafka_cluster(setup, ephemeral=False)
        yield server


def topic_names(count: int) -> list[str]:
    return [f"events-{i:05d}" for i in range(count)]


def write_manifests(path: Path, count: int, *, partitions: int, retention: str) -> Path:
    """One file: the KafkaCluster and ``count`` KafkaTopics (RF 3, one config key)."""
    documents = [
        f"apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {{name: {CLUSTER}}}\n"
        "spec: {zookeeper: {connect: '127.0.0.1:1/unused'}}\n"
    ]
    documents += [
        f"apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {{name: {name}}}\n"
        f"spec: {{cluster: {CLUSTER}, partitions: {partitions}, replicas: 3, config: {{retention.ms: {retention}}}}}\n"
        for name in topic_names(count)
    ]
    path.write_text("---\n".join(documents))
    return path


def declarations(directory: Path, change: Change, count: int) -> tuple[Path | None, Path]:
    """The manifests applied before the fault (None for ``create``) and the ones applied through it."""
    before = None
    if change != "create":
        before = write_manifests(
            directory / "before.yaml", count, partitions=PARTITIONS_BEFORE, retention=RETENTION_BEFORE
        )
    partitions = PARTITIONS_AFTER if change == "grow" else PARTITIONS_BEFORE
    retention = RETENTION_AFTER if change == "config" else RETENTION_BEFORE
    return before, write_manifests(
        directory / "after.yaml", count, partitions=partitions, retention=retention
    )


# -- faults ------------------------------------------------------------------------------------------------------


def begin_fault(server: LocalZooKeeper, fault: Fault) -> None:
    if fault == "kill":
        server.kill()
    else:
        server.pause()


def end_fault(server: LocalZooKeeper, fault: Fault) -> None:
    if fault == "kill":
        server.restart()
    else:
        server.resume()


def started_writing(change: Change, count: int) -> Callable[[KazooClient], bool]:
    """True once a tenth of the batch has landed: the fault then hits a batch in full flight."""
    enough = max(count // 10, 1)
    if change == "config":
        return lambda client: len(client.get_children("/config/changes")) >= enough
    if change == "create":
        return lambda client: len(client.get_children("/brokers/topics")) >= enough
    marker = f"/brokers/topics/{topic_names(count)[enough - 1]}"
    return lambda client: client.get(marker)[1].version >= 1


# -- one run of kto apply through an outage ----------------------------------------------------------------------


@dataclass
class OutageRun:
    """What one ``kto apply`` did through one outage."""

    fault: Fault
    outage: float
    exit_code: int
    seconds_after_fault: float
    """From the fault to the command's exit."""
    seconds_total: float
    outcomes: dict[str, str]
    """Topic -> outcome as ``kto apply -o json`` reported it."""
    stderr: str
    interrupted: str | None = None

    @property
    def counts(self) -> Counter[str]:
        return Counter(self.outcomes.values())

    def summary(self) -> str:
        counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(self.counts.items()))
        return (
            f"{self.fault} for {self.outage:g} s: kto apply returned {self.seconds_after_fault:.1f} s after the "
            f"fault ({self.seconds_total:.1f} s in all), exit {self.exit_code}; {counts}"
        )


def kto(*argv: str, stdout: Any = subprocess.DEVNULL, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    """``kto`` in a process of its own, as a user runs it."""
    return subprocess.Popen(
        [sys.executable, "-m", "topic_operator.cli", *argv], stdout=stdout, stderr=stderr, text=True
    )


def apply_through_outage(
    server: LocalZooKeeper,
    manifest: Path,
    *,
    change: Change,
    count: int,
    fault: Fault,
    outage: float,
    deadline: float,
    scratch: Path,
    timeout: float,
) -> OutageRun:
    """Run ``kto apply --yes -o json`` and, once it is writing, take ZooKeeper away for ``outage`` seconds."""
    connect = server.connect_string + CHROOT
    out_path, err_path = scratch / "apply.json", scratch / "apply.err"
    with out_path.open("w") as out, err_path.open("w") as err:
        started = time.monotonic()
        process = kto(
            "apply", "-f", str(manifest), "--zookeeper", connect, "--yes", "-o", "json",
            "--deadline", f"{deadline:g}", stdout=out, stderr=err,
        )  # fmt: skip
        try:
            _wait_for(process, started_writing(change, count), connect, timeout)
            fault_at = time.monotonic()
            begin_fault(server, fault)
            exited_at = _sleep_watching(process, outage)
            end_fault(server, fault)
            if exited_at is None:
                process.wait(timeout=max(timeout - (time.monotonic() - started), 1))
                exited_at = time.monotonic()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    document = json.loads(out_path.read_text() or "{}")
    return OutageRun(
        fault=fault,
        outage=outage,
        exit_code=process.returncode,
        seconds_after_fault=exited_at - fault_at,
        seconds_total=exited_at - started,
        outcomes={r["topic"]: r["outcome"] for r in document.get("results", [])},
        stderr=err_path.read_text(),
        interrupted=document.get("interrupted"),
    )


def _wait_for(
    process: subprocess.Popen[str], condition: Callable[[KazooClient], bool], connect: str, timeout: float
) -> None:
    give_up = time.monotonic() + timeout
    watcher = new_client(connect)
    try:
        while not condition(watcher):
            if process.poll() is not None:
                raise AssertionError(f"kto exited ({process.returncode}) before the fault could land")
            if time.monotonic() > give_up:
                raise AssertionError("the batch never started writing")
            time.sleep(0.01)
    finally:
        close_client(watcher)


def _sleep_watching(process: subprocess.Popen[str], seconds: float) -> float | None:
    """Sleep ``seconds``; the time ``process`` exited meanwhile, if it did."""
    end = time.monotonic() + seconds
    while (now := time.monotonic()) < end:
        if process.poll() is not None:
            return now
        time.sleep(0.02)
    return None


# -- the engine's batch path through an outage ---------------------------------------------------------------------


@dataclass
class HeldFault:
    """Replaces ``client.transaction`` so that the ``at``-th transaction (0-based) waits until the test's
    main thread has begun the fault: the batch goes on into a dead server, with commits in flight."""

    client: KazooClient
    at: int
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    built: int = 0

    def install(self, monkeypatch: Any) -> None:
        original = self.client.transaction

        def transaction() -> Any:
            if self.built == self.at:
                self.reached.set()
                self.released.wait(30)
            self.built += 1
            return original()

        monkeypatch.setattr(self.client, "transaction", transaction)


def run_in_thread(work: Callable[[], Any], timeout: float) -> tuple[threading.Thread, dict[str, Any]]:
    """Start ``work`` in a daemon thread (a hang then fails the test instead of stalling it)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # re-raised by the test
            outcome["error"] = error
        finally:
            outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=target, name="apply-under-outage", daemon=True)
    thread.start()
    return thread, outcome


# -- checking the result ---------------------------------------------------------------------------------------------


def topic_shapes(
    state: ClusterState, notified: Mapping[str, int], change: Change, count: int
) -> dict[str, str]:
    """Each topic as it is now: ``before`` (nothing of the change), ``after`` (all of it), or ``broken``."""
    shapes = {}
    for name in topic_names(count):
        topic = state.topics.get(name)
        notes = notified.get(f"topics/{name}", 0)
        if change == "create":
            whole = topic is not None and topic.partition_count == PARTITIONS_BEFORE
            whole = whole and topic is not None and topic.config == {"retention.ms": RETENTION_BEFORE}
            shape = (
                "after"
                if whole
                else "before"
                if topic is None and name not in state.orphan_configs
                else "broken"
            )
        elif topic is None:
            shape = "broken"
        elif change == "grow":
            count_now = topic.partition_count
            shape = {PARTITIONS_BEFORE: "before", PARTITIONS_AFTER: "after"}.get(count_now, "broken")
        else:
            retention = topic.config.get("retention.ms")
            shape = {
                (RETENTION_BEFORE, 0, 0): "before",
                (RETENTION_AFTER, 1, 1): "after",
            }.get((retention, topic.config_znode_version, notes), "broken")
        shapes[name] = shape
    return shapes


def assert_whole_and_truthful(
    connect: str, change: Change, count: int, outcomes: Mapping[str, str]
) -> dict[str, str]:
    """Every topic whole; ``applied`` only for what landed, ``not_written`` only for what did not."""
    state, notified = fresh_read(connect)
    shapes = topic_shapes(state, notified, change, count)
    broken = sorted(name for name, shape in shapes.items() if shape == "broken")
    assert not broken, f"half-written topics: {broken[:5]}"
    assert sum(notified.values()) == sum(shape == "after" for shape in shapes.values()) or change != "config"
    for name, outcome in outcomes.items():
        if outcome == "applied":
            assert shapes[name] == "after", f"{name}: reported applied, not there"
        elif outcome == "not_written":
            assert shapes[name] == "before", f"{name}: reported not written, but it landed"
        else:
            assert outcome == "unknown", f"{name}: unexpected outcome {outcome!r}"
    return shapes
