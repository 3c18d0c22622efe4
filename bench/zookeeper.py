"""ZooKeeper speed: the writer and the snapshot reader against the loopback limit, measured in one run.

(a) the loopback limit: 10,000 two-node create transactions sent with kazoo's async API, all in flight at once,
    carrying the same bytes the writer would write (encoded before the clock starts). This is what one kazoo
    connection to a local server can do at all.
(b) the writer: ``ZooKeeperWriter.apply_all`` of 10,000 ``CreateTopic`` (12 partitions, RF 3 over 6 brokers in
    3 racks, 3 config keys) against the same server. Target: at least half the rate of (a), that is, at most
    twice as long as the raw transactions.
(c) the snapshot: ``read_cluster`` of those 10,000 topics with their configs, by a fresh client. Target: <= 3 s
    (scaled linearly when ``--topics`` asks for fewer).
(d) the writer as (b) on a cluster whose controller ran (``/controller_epoch`` exists): every transaction also
    checks that znode's version, so that none commits after a KRaft controller takes over. Target: as (b).

Each measurement writes into a chroot of its own on one throwaway ``LocalZooKeeper`` (fsync off, as in the tests),
so none sees the others' znodes; an unmeasured warm-up batch first lets the server's JIT settle. Peak RSS of this process (and of the server's JVM) is printed at the end.
Exit status 1 when a target is missed. Run: ``make bench`` or ``.venv/bin/python bench/zookeeper.py``
(``--topics 1000`` for a quick run).
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from kazoo.client import KazooClient

from topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from topic_operator.plan import CreateTopic
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.testing.simulated_brokers import bootstrap_cluster, register_brokers
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import CONTROLLER_EPOCH, Outcome, ZooKeeperWriter
from topic_operator.zookeeper.znodes import (
    TopicConfigsZNode,
    TopicConfigZNode,
    TopicsZNode,
    TopicZNode,
    TopicZNodeData,
)

PARTITIONS = 12
REPLICATION_FACTOR = 3
RACKS = ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c")
CONFIG = {"retention.ms": "604800000", "cleanup.policy": "delete", "min.insync.replicas": "2"}

TARGET_WRITER_RATIO = 0.5
"""The writer's rate over the raw rate: it may take at most twice as long as the bare transactions."""
TARGET_READ_SECONDS_PER_10K = 3.0
CLIENT_TIMEOUT = 30.0
WARM_UP_TOPICS = 3_000


@contextmanager
def client_for(hosts: str) -> Iterator[KazooClient]:
    client = KazooClient(hosts=hosts, timeout=CLIENT_TIMEOUT)
    client.start(timeout=CLIENT_TIMEOUT)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def new_chroot(admin: KazooClient, purpose: str) -> str:
    path = f"/bench-{purpose}-{uuid.uuid4().hex[:8]}"
    admin.create(path)
    return path


def topic_actions(count: int) -> list[CreateTopic]:
    """What a plan for ``count`` new topics holds; computed before any clock starts (planning is not writing)."""
    brokers = [BrokerMetadata(i, rack) for i, rack in enumerate(RACKS)]
    rng = random.Random(1)
    return [
        CreateTopic(
            f"bench-topic-{i:05d}",
            {
                p: tuple(r)
                for p, r in assign_replicas_to_brokers(
                    brokers, PARTITIONS, REPLICATION_FACTOR, rng=rng
                ).items()
            },
            CONFIG,
        )
        for i in range(count)
    ]


@contextmanager
def settled() -> Iterator[None]:
    """Start every measurement with the previous one's garbage collected; the collector stays on, as in use."""
    gc.collect()
    yield


def raw_transactions(client: KazooClient, actions: Sequence[CreateTopic]) -> float:
    """(a) Seconds for one two-create transaction per topic, every one in flight before the first answer is read."""
    client.ensure_path(TopicConfigsZNode.path)
    client.ensure_path(TopicsZNode.path)
    payloads = [
        (
            TopicConfigZNode.path(a.topic),
            TopicConfigZNode.encode(a.config),
            TopicZNode.path(a.topic),
            TopicZNode.encode(TopicZNodeData(a.assignment)),
        )
        for a in actions
    ]
    with settled():
        started = time.perf_counter()
        pending = []
        for config_path, config, topic_path, topic in payloads:
            txn = client.transaction()
            txn.create(config_path, config)
            txn.create(topic_path, topic)
            pending.append(txn.commit_async())
        failures = [r for p in pending for r in p.get() if isinstance(r, Exception)]
        elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"raw transactions failed: {failures[:3]}")
    return elapsed


def writer_creations(
    client: KazooClient, actions: Sequence[CreateTopic], *, controller_ran: bool = False
) -> float:
    """(b) Seconds for the writer to apply every creation (its cluster check and parent checks included); (d)
    with ``controller_ran``: ``/controller_epoch`` there, so each transaction carries its version check too."""
    bootstrap_cluster(client, "bench-cluster-00000000A")
    register_brokers(client, RACKS)
    if controller_ran:
        client.create(CONTROLLER_EPOCH, b"1")
    writer = ZooKeeperWriter(client)
    with settled():
        started = time.perf_counter()
        results = writer.apply_all(actions)
        elapsed = time.perf_counter() - started
    failed = [r for r in results if r.outcome is not Outcome.APPLIED]
    if failed:
        raise RuntimeError(f"{len(failed)} writes not applied, e.g. {failed[0]}")
    return elapsed


def snapshot_read(hosts: str, actions: Sequence[CreateTopic]) -> float:
    """(c) Seconds for a fresh client to read the whole cluster written by (b); checks what it read."""
    with client_for(hosts) as client, settled():
        started = time.perf_counter()
        state = read_cluster(client)
        elapsed = time.perf_counter() - started
    if len(state.topics) != len(actions) or len(state.brokers) != len(RACKS):
        raise RuntimeError(f"read {len(state.topics)} topics and {len(state.brokers)} brokers")
    sample = actions[len(actions) // 2]
    topic = state.topics[sample.topic]
    if topic.partitions != dict(sample.assignment) or topic.config != CONFIG:
        raise RuntimeError(f"{sample.topic} read back differently: {topic}")
    return elapsed


def peak_rss_mb() -> float:
    """This process's peak resident set (Linux reports ``ru_maxrss`` in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def server_peak_rss_mb(pid: int) -> float | None:
    """The server JVM's peak resident set (``VmHWM``), for context: the server's memory is not ours to budget."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@dataclass(frozen=True)
class Row:
    name: str
    seconds: float
    count: int
    target: str
    met: bool | None

    def line(self) -> str:
        verdict = {None: "", True: "met", False: "MISSED"}[self.met]
        return f"{self.name:<52} {self.seconds:>8.2f} {self.count / self.seconds:>10,.0f}  {self.target:<26} {verdict}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=10_000, help="topics per measurement (default 10,000)")
    args = parser.parse_args()
    count: int = args.topics
    actions = topic_actions(count)
    read_target = TARGET_READ_SECONDS_PER_10K * count / 10_000

    with LocalZooKeeper() as server, client_for(server.connect_string) as admin:
        # A fresh JVM runs interpreted code first: without a warm-up, (a) would pay for that and flatter (b).
        with client_for(server.connect_string + new_chroot(admin, "warm-up")) as client:
            raw_transactions(client, topic_actions(min(count, WARM_UP_TOPICS)))
        raw_root = new_chroot(admin, "raw")
        with client_for(server.connect_string + raw_root) as client:
            raw = raw_transactions(client, actions)
        writer_root = new_chroot(admin, "writer")
        with client_for(server.connect_string + writer_root) as client:
            written = writer_creations(client, actions)
            read = snapshot_read(server.connect_string + writer_root, actions)
        guarded_root = new_chroot(admin, "guarded")
        with client_for(server.connect_string + guarded_root) as client:
            guarded = writer_creations(client, actions, controller_ran=True)
        server_rss = server_peak_rss_mb(server.pid)

    ratio = raw / written
    guarded_ratio = raw / guarded
    rows = [
        Row(
            f"(a) raw: {count:,} two-create transactions, pipelined", raw, count, "(the loopback limit)", None
        ),
        Row(
            f"(b) writer: {count:,} CreateTopic, {PARTITIONS} partitions RF {REPLICATION_FACTOR}",
            written,
            count,
            f"rate >= {TARGET_WRITER_RATIO:.2f} x (a): {ratio:.2f}",
            ratio >= TARGET_WRITER_RATIO,
        ),
        Row(
            "(d) writer, each transaction checking /controller_epoch",
            guarded,
            count,
            f"rate >= {TARGET_WRITER_RATIO:.2f} x (a): {guarded_ratio:.2f}",
            guarded_ratio >= TARGET_WRITER_RATIO,
        ),
        Row(
            f"(c) read_cluster: {count:,} topics x {PARTITIONS} partitions",
            read,
            count,
            f"<= {read_target:.2f} s",
            read <= read_target,
        ),
    ]
    print(f"{'measurement':<52} {'seconds':>8} {'per s':>10}  {'target':<26} verdict")
    for row in rows:
        print(row.line())
    server_note = f"; ZooKeeper server JVM {server_rss:,.0f} MB" if server_rss is not None else ""
    print(f"peak RSS: this process {peak_rss_mb():,.0f} MB{server_note}")
    missed = [row.name for row in rows if row.met is False]
    print("targets: all met" if not missed else f"targets MISSED: {'; '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
