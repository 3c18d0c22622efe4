"""Reconcile at scale: 10,000 declared topics from one manifest file against a real ZooKeeper.

Targets (issue 4, this 2-core machine): cold reconcile (parse, plan, write) <= 10 s; no-op re-plan of the same
declarations (parse, read, plan) <= 3 s with 0 writes; peak RSS <= 300 MB. Also printed: ZooKeeper requests per
created topic, from the server's own packet counter (``srvr``), so reads and writes are both counted.

Run: ``make bench`` or ``.venv/bin/python bench/reconcile.py [--topics N]``.
"""

from __future__ import annotations

import argparse
import re
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from topic_operator.manifests.loader import load_manifests
from topic_operator.reconcile import Reconciler, TopicOutcome
from topic_operator.zookeeper.connection import ZooKeeperSettings, close_client, open_client
from topic_operator.zookeeper.local_server import LocalZooKeeper
from topic_operator.zookeeper.simulated_brokers import bootstrap_cluster, register_brokers

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
    args = parser.parse_args()
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
                report = Reconciler(client, cluster).apply(manifests.topics)
                created = len(report.by_outcome(TopicOutcome.APPLIED))
                return created, packets_received(server) - before, parse_s

            (created, requests, parse_s), cold_s = timed(cold)

            def noop() -> tuple[int, bool]:
                manifests = load_manifests([manifest])
                report = Reconciler(client, manifests.clusters[0]).apply(manifests.topics)
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


if __name__ == "__main__":
    raise SystemExit(main())
