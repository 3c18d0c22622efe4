"""Reconcile at scale: 10,000 declared topics from one manifest file against a real ZooKeeper; and, with
``--against-floor``, ``kto plan``/``kto apply`` of 50,000 topics next to the floor of reading the cluster once.

Targets (this 2-core machine): cold reconcile (parse, plan, write) <= 10 s; no-op re-plan of the same
declarations (parse, read, plan) <= 3 s with 0 writes; peak RSS <= 300 MB. Also printed: ZooKeeper requests per
created topic, from the server's own packet counter (``srvr``), so reads and writes are both counted.

Against the floor (``--against-floor --topics 50000 --partitions 4 --brokers 12``): a cluster of that many
topics (each with a config znode, written in Kafka's format) and 12 brokers in 3 racks; the same topics declared
in one manifest file per team. Each round reads the cluster's znodes once (the floor: listings, then every broker,
topic and config znode in pipelined multiRead batches, undecoded), then runs ``kto plan``, ``kto apply`` (no-op)
and ``kto apply`` of a variant where 1 % of the topics change ``retention.ms``, each as a user runs it (a new
process). Target: each command <= 2x the floor; for the 1 % apply, the floor plus the same writes sent alone,
pipelined. ``--phases`` runs each command once more with its phases timed.

Run: ``make bench`` or ``.venv/bin/python bench/reconcile.py [--topics N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from kazoo.client import KazooClient

from topic_operator.manifests.loader import load_manifests
from topic_operator.reconcile import Reconciler, TopicOutcome
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.testing.simulated_brokers import bootstrap_cluster, new_topic_id, register_brokers
from topic_operator.zookeeper.bounded import BoundedClient, Patience
from topic_operator.zookeeper.connection import close_client, open_client
from topic_operator.zookeeper.pipelined import read_many
from topic_operator.zookeeper.settings import ZooKeeperSettings
from topic_operator.zookeeper.store import ZooKeeperStore
from topic_operator.zookeeper.znodes import TopicConfigZNode, TopicZNode, TopicZNodeData

T = TypeVar("T")
RACKS = ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c")
TARGETS = {"cold reconcile s": 10.0, "no-op re-plan s": 3.0, "peak RSS MB": 300.0}


def write_manifests(directory: Path, topics: int) -> Path:
    """One multi-document file: a KafkaCluster and ``topics`` KafkaTopics (12 partitions, RF 3, 3 configs)."""
    documents = [
        "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {name: bench}\n"
        "spec: {zookeeper: {connect: '127.0.0.1:1/kafka'}}\n"
    ]
    for i in range(topics):
        documents.append(
            f"apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {{name: team-{i % 50}-topic-{i}}}\n"
            "spec:\n  cluster: bench\n  partitions: 12\n  replicas: 3\n  config:\n"
            "    retention.ms: 604800000\n    cleanup.policy: delete\n    min.insync.replicas: 2\n"
        )
    path = directory / "topics.yaml"
    path.write_text("---\n".join(documents))
    return path


def timed(work: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def packets_received(server: LocalZooKeeper) -> int:
    match = re.search(r"Received: (\d+)", server.four_letter_word("srvr"))
    if match is None:
        raise RuntimeError("ZooKeeper's srvr reply has no 'Received:' line")
    return int(match.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument(
        "--against-floor",
        action="store_true",
        help="time kto plan and kto apply in new processes against the floor of reading the cluster once",
    )
    parser.add_argument("--partitions", type=int, default=4, help="with --against-floor")
    parser.add_argument("--brokers", type=int, default=12, help="with --against-floor (in 3 racks)")
    parser.add_argument("--rounds", type=int, default=2, help="with --against-floor: best of this many")
    parser.add_argument("--phases", action="store_true", help="with --against-floor: also time each phase")
    args = parser.parse_args()
    if args.against_floor:
        return against_floor(args)
    with tempfile.TemporaryDirectory() as scratch, LocalZooKeeper() as server:
        manifest = write_manifests(Path(scratch), args.topics)
        setup = open_client(ZooKeeperSettings(connect=server.connect_string))
        setup.ensure_path("/kafka")
        close_client(setup)
        client = open_client(ZooKeeperSettings(connect=server.connect_string + "/kafka"))
        try:
            bootstrap_cluster(client, "bench-cluster-0000000001")
            register_brokers(client, RACKS)

            def cold() -> tuple[int, int, float]:
                manifests, parse_s = timed(lambda: load_manifests([manifest]))
                cluster = manifests.clusters[0]
                before = packets_received(server)
                report = Reconciler(ZooKeeperStore(client), cluster).apply(manifests.topics)
                created = len(report.by_outcome(TopicOutcome.APPLIED))
                return created, packets_received(server) - before, parse_s

            (created, requests, parse_s), cold_s = timed(cold)

            def noop() -> tuple[int, bool]:
                manifests = load_manifests([manifest])
                report = Reconciler(ZooKeeperStore(client), manifests.clusters[0]).apply(manifests.topics)
                return report.writes, report.plan.has_changes

            (writes, changes), noop_s = timed(noop)
        finally:
            close_client(client)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures = {"cold reconcile s": cold_s, "no-op re-plan s": noop_s, "peak RSS MB": peak_mb}
    print(f"{args.topics:,} declared topics, 12 partitions, RF 3, 3 config keys; 6 brokers in 3 racks")
    print(f"  parsing the manifest file (part of cold): {parse_s:.2f} s")
    for name, value in figures.items():
        target = TARGETS[name]
        print(f"  {name:<18} {value:>8.2f}   target <= {target:g}   {'met' if value <= target else 'MISSED'}")
    print(
        f"  topics created: {created:,}; ZooKeeper requests per created topic: {requests / max(created, 1):.2f}"
    )
    print(f"  no-op re-plan: {writes} writes, plan has changes: {changes}")
    missed = [name for name, value in figures.items() if value > TARGETS[name]]
    return 1 if missed or writes or changes else 0


# ---------------------------------------------------------------------------------------------------------------
# Against the floor: ``kto plan`` and ``kto apply`` as a user runs them, next to the cost of reading the cluster's
# znodes once.

FLOOR_FACTOR = 2.0
"""Target: each command takes at most this many times the floor (for the 1 % apply: the floor plus its writes)."""

CHANGED_EVERY = 100
"""One declared topic in this many changes ``retention.ms`` in the changed variant: 1 %."""

TEAMS = 50
"""Manifest files: one per team, as a repository of topics-as-code is usually laid out."""

PHASES_CHILD = r"""
import sys, time
began = time.time()
import json
phases = {}
def timed(name, owner, attribute):
    inner = getattr(owner, attribute)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - started
    setattr(owner, attribute, wrapper)
from topic_operator.cli import main as cli
import topic_operator.manifests.loader as loader, topic_operator.plan as planner
import topic_operator.plan_output as output, topic_operator.reconcile as reconcile
import topic_operator.zookeeper.store as store
import topic_operator.zookeeper.connection as connection, topic_operator.zookeeper.writer as writer
phases["start-up and imports"] = time.time() - float(sys.argv[1])
timed("YAML load and validation", loader, "load_manifests")
timed("connect and cluster check", connection, "open_client")
timed("connect and cluster check", writer.ZooKeeperWriter, "require_kafka_cluster")
timed("ZooKeeper read", store.ZooKeeperStore, "read_cluster")
timed("plan", planner, "plan")
timed("plan", reconcile, "plan")
timed("writes", store.ZooKeeperStore, "apply_all")
for name in ("render_plan_text", "plan_json", "render_plan_markdown", "plan_to_dict"):
    timed("output", output, name)
import contextlib, io
sink = io.StringIO()
started = time.perf_counter()
with contextlib.redirect_stdout(sink):
    code = cli.main(sys.argv[2:])
phases["whole command (after imports)"] = time.perf_counter() - started
print(json.dumps({"code": code, "phases": phases, "output_bytes": len(sink.getvalue())}))
"""
"""Runs ``kto`` inside a process that times its phases by wrapping the functions each phase calls (the
plan inside ``kto apply`` is counted each time it runs: the preview and the apply's own)."""


def _assignment(topic: int, partitions: int, brokers: int) -> dict[int, tuple[int, ...]]:
    """Replicas of rack-aware placement: brokers are numbered round the racks, so three consecutive ids sit in
    three racks, and each partition's leader moves one broker along."""
    return {p: tuple((topic + p + r) % brokers for r in range(3)) for p in range(partitions)}


def _config(topic: int, retention_ms: int) -> dict[str, str]:
    return {"retention.ms": str(retention_ms), "cleanup.policy": "delete", "min.insync.replicas": "2"}


BASE_RETENTION = 604_800_000


def write_cluster(client: KazooClient, topics: int, partitions: int, brokers: int) -> float:
    """The topic and config znodes of ``topics`` topics, in Kafka's format (``znodes``), created in pipelined
    transactions of 100 znodes; returns the seconds it took."""
    started = time.perf_counter()
    pending = []
    batch = client.transaction()
    for i in range(topics):
        name = f"team-{i % TEAMS}-topic-{i}"
        data = TopicZNodeData(_assignment(i, partitions, brokers), topic_id=new_topic_id())
        batch.create(TopicZNode.path(name), TopicZNode.encode(data))
        batch.create(TopicConfigZNode.path(name), TopicConfigZNode.encode(_config(i, BASE_RETENTION)))
        if len(batch.operations) >= 100:
            pending.append(batch.commit_async())
            batch = client.transaction()
        if len(pending) >= 100:
            _check(pending.pop(0).get())
    if batch.operations:
        pending.append(batch.commit_async())
    for result in pending:
        _check(result.get())
    return time.perf_counter() - started


def _check(results: list[object]) -> None:
    failed = [r for r in results if isinstance(r, Exception)]
    if failed:
        raise RuntimeError(f"setting up the cluster failed: {failed[0]!r}")


def write_manifest_files(
    directory: Path, connect: str, topics: int, partitions: int, retention: dict[int, int]
) -> Path:
    """A KafkaCluster and one file per team of KafkaTopics, as users write them; ``retention`` overrides
    ``retention.ms`` of some topics (by index)."""
    directory.mkdir(parents=True)
    (directory / "cluster.yaml").write_text(
        "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata:\n  name: bench\n"
        f"spec:\n  zookeeper:\n    connect: '{connect}'\n"
    )
    files: list[list[str]] = [[] for _ in range(TEAMS)]
    for i in range(topics):
        files[i % TEAMS].append(
            f"apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata:\n  name: team-{i % TEAMS}-topic-{i}\n"
            f"spec:\n  cluster: bench\n  partitions: {partitions}\n  replicas: 3\n  config:\n"
            f"    retention.ms: {retention.get(i, BASE_RETENTION)}\n    cleanup.policy: delete\n"
            "    min.insync.replicas: 2\n"
        )
    for team, documents in enumerate(files):
        (directory / f"team-{team}.yaml").write_text("---\n".join(documents))
    return directory


def read_floor(connect: str) -> tuple[float, int, int]:
    """The floor: every broker registration, topic znode and config znode read once over a connected client,
    listings first, then everything in multiRead batches all in flight at once (the fastest read kazoo can make
    here; pipelined single reads are slower), undecoded. Returns seconds, znodes and bytes."""
    client = open_client(ZooKeeperSettings(connect=connect))
    try:
        zk = BoundedClient(client, Patience(60.0))
        started = time.perf_counter()
        listings = [
            client.get_children_async(path) for path in ("/brokers/ids", "/brokers/topics", "/config/topics")
        ]
        broker_ids, topic_names, config_names = (listing.get() for listing in listings)
        paths = [
            *(f"/brokers/ids/{b}" for b in broker_ids),
            *(f"/brokers/topics/{t}" for t in topic_names),
            *(f"/config/topics/{t}" for t in config_names),
        ]
        answers = read_many(zk, paths)
        elapsed = time.perf_counter() - started
        return elapsed, len(paths), sum(len(a[0]) for a in answers.values() if a is not None)
    finally:
        close_client(client)


def run_command(argv: list[str], phases: bool) -> tuple[float, dict[str, Any]]:
    """``kto`` in a new process, as a user runs it: wall-clock seconds and, with ``phases``, its phases."""
    command = (
        [sys.executable, "-c", PHASES_CHILD, repr(time.time()), *argv]
        if phases
        else [str(Path(sys.executable).parent / "kto"), *argv]
    )
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if process.returncode not in (0, 2) or (phases and not stdout.strip()):
        raise RuntimeError(f"kto {' '.join(argv[:1])} failed ({process.returncode}): {stderr[-2000:]}")
    result: dict[str, Any] = {
        "code": process.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "peak_mb": usage.ru_maxrss / 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }
    if phases:
        result.update(json.loads(stdout.strip().splitlines()[-1]))
    return elapsed, result


def read_manifests_alone(directory: Path) -> tuple[float, float]:
    """Reading the manifests alone, in this process: libyaml's event stream over every file (the least a reader
    built on libyaml does, before any document is built) and the product's own reader (``load_manifests``).
    Either one above ``FLOOR_FACTOR`` times the floor tells that no plan in one CPython process can meet it."""
    files = sorted(directory.glob("*.yaml"))
    texts = [file.read_text() for file in files]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    _, events_s = timed(lambda: [sum(1 for _ in yaml.parse(text, Loader=loader)) for text in texts])
    _, reader_s = timed(lambda: load_manifests(files))
    return events_s, reader_s


def write_floor(client: KazooClient, count: int, round_number: int) -> float:
    """The writes' share of a 1 % apply: ``count`` transactions as the writer sends an alter-config (a config znode
    set at its version, and a sequential change notification), all in flight at once, on scratch znodes."""
    parent = "/bench-writes"
    client.ensure_path(f"{parent}/changes")
    if round_number == 0:
        batch = client.transaction()
        for i in range(count):
            batch.create(f"{parent}/config-{i}", b"")
        _check(batch.commit())
    payload = TopicConfigZNode.encode(_config(0, BASE_RETENTION + round_number + 1))
    started = time.perf_counter()
    pending = []
    for i in range(count):
        txn = client.transaction()
        txn.set_data(f"{parent}/config-{i}", payload, version=round_number)
        txn.create(f"{parent}/changes/config_change_", b"{}", sequence=True)
        pending.append(txn.commit_async())
    for result in pending:
        _check(result.get())
    return time.perf_counter() - started


def against_floor(args: argparse.Namespace) -> int:
    """The floor and the commands in one run, interleaved round by round; every round's figures printed."""
    racks = [("rack-a", "rack-b", "rack-c")[b % 3] for b in range(args.brokers)]
    changed = [i for i in range(args.topics) if i % CHANGED_EVERY == 0]
    with tempfile.TemporaryDirectory() as scratch, LocalZooKeeper() as server:
        setup = open_client(ZooKeeperSettings(connect=server.connect_string))
        setup.ensure_path("/kafka")
        close_client(setup)
        connect = server.connect_string + "/kafka"
        client = open_client(ZooKeeperSettings(connect=connect))
        try:
            bootstrap_cluster(client, "bench-cluster-0000000001")
            register_brokers(client, racks)
            setup_s = write_cluster(client, args.topics, args.partitions, args.brokers)
            print(
                f"{args.topics:,} topics x {args.partitions} partitions x RF 3 "
                f"({args.topics * args.partitions:,} partitions), each with a config znode; {args.brokers} brokers "
                f"in 3 racks; set up in {setup_s:.1f} s; {len(changed):,} topics change retention.ms in the "
                "1 % apply"
            )
            variant = 0
            current = write_manifest_files(Path(scratch) / "v0", connect, args.topics, args.partitions, {})
            rows: dict[str, list[float]] = {}
            phase_rows: dict[str, list[dict[str, float]]] = {}
            peaks: dict[str, float] = {}
            for round_number in range(args.rounds):
                variant += 1
                retention = dict.fromkeys(changed, BASE_RETENTION + variant)
                following = write_manifest_files(
                    Path(scratch) / f"v{variant}", connect, args.topics, args.partitions, retention
                )
                floor_s, znodes, size = read_floor(connect)
                writes_s = write_floor(client, len(changed), round_number)
                events_s, reader_s = read_manifests_alone(current)
                runs = {
                    "kto plan (no-op)": ["plan", "-f", str(current)],
                    "kto apply (no-op)": ["apply", "--yes", "-f", str(current)],
                    "kto apply (1 %)": ["apply", "--yes", "-f", str(following)],
                }
                figures = {
                    "floor": floor_s,
                    "floor + 1 % writes": floor_s + writes_s,
                    "manifests alone: libyaml's events": events_s,
                    "manifests alone: kto's reader": reader_s,
                }
                for name, argv in runs.items():
                    before = packets_received(server)
                    elapsed, result = run_command(argv, phases=False)
                    requests = packets_received(server) - before
                    figures[name] = elapsed
                    peaks[name] = max(peaks.get(name, 0.0), result["peak_mb"])
                    print(
                        f"  round {round_number + 1}: {name:<18} {elapsed:6.2f} s (CPU {result['cpu_s']:5.2f} s)  "
                        f"exit {result['code']}  "
                        f"ZooKeeper requests {requests:,}  peak RSS {result['peak_mb']:.0f} MB  "
                        f"({result['stdout'].strip().splitlines()[-1][:90] if result['stdout'].strip() else ''})"
                    )
                    if name == "kto apply (1 %)":
                        current = following
                print(
                    f"  round {round_number + 1}: floor {floor_s:.2f} s ({znodes:,} znodes, {size / 1e6:.1f} MB); "
                    f"the 1 % writes alone {writes_s:.2f} s; the manifests alone {events_s:.2f} s (libyaml's "
                    f"events), {reader_s:.2f} s (kto's reader)"
                )
                for name, value in figures.items():
                    rows.setdefault(name, []).append(value)
                if args.phases:
                    variant += 1
                    retention = dict.fromkeys(changed, BASE_RETENTION + variant)
                    following = write_manifest_files(
                        Path(scratch) / f"v{variant}", connect, args.topics, args.partitions, retention
                    )
                    runs["kto apply (1 %)"][-1] = str(following)
                    for name, argv in runs.items():
                        _, result = run_command(argv, phases=True)
                        phase_rows.setdefault(name, []).append(result["phases"])
                        if name == "kto apply (1 %)":
                            current = following
        finally:
            close_client(client)
    best = {name: min(values) for name, values in rows.items()}
    print(f"best of {args.rounds} (floor measured in the same rounds, interleaved):")
    missed = []
    for name, value in best.items():
        if name.startswith(("floor", "manifests alone")):
            print(f"  {name:<34} {value:6.2f} s")
            continue
        floor = best["floor + 1 % writes"] if "1 %" in name else best["floor"]
        met = value <= FLOOR_FACTOR * floor
        missed += [] if met else [name]
        print(
            f"  {name:<34} {value:6.2f} s = {value / floor:4.2f} x floor   target <= {FLOOR_FACTOR:g} x   "
            f"{'met' if met else 'MISSED'}   peak RSS {peaks[name]:.0f} MB"
        )
    for name, runs_phases in phase_rows.items():
        print(f"  {name} by phase (s, each run):")
        for phase in runs_phases[0]:
            print(f"    {phase:<32} " + "  ".join(f"{p.get(phase, 0.0):6.2f}" for p in runs_phases))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
