"""KRaft speed: creating topics and planning through Kafka's Admin protocol, on one real KRaft cluster.

One cluster of Kafka 3.9 (a controller and three brokers in racks a/b/c on 127.0.0.1: ``tests/harness``'s
``KRaftCluster``, whose brokers here delete a deleted topic's files at once, ``log.segment.delete.delay.ms=0``),
reached by one kafka-python 3.0 Admin client. Two targets (the KRaft issue):

(1) Creation speed. ``--create-topics`` (300) topics of 6 partitions, RF 3, created by the product -- a manifest
    of the KafkaTopics and a KafkaCluster with ``bootstrapServers``, ``load_manifests`` then
    ``Reconciler(AdminStore(...), cluster).apply(topics)`` -- must be *online* (every partition with a leader
    and an ISR of 3, as Metadata shows) no later than the same topics created by kafka-python's own batched
    CreateTopics (one ``create_topics`` call of ``{"num_partitions": 6, "replication_factor": 3}`` each), then
    the same wait. Both on the same brokers and the same Admin client, connected before the clock starts, with
    names of their own, deleted after each measurement (and waited for until no broker holds their files).
    ``--rounds`` (5) rounds alternate which path goes first, after an unmeasured warm-up batch; each round, the
    medians and the per-round ratios (the noise) are printed, and the product's time split into parse, read (each
    Admin request), plan, CreateTopics and the wait for online, with this process's CPU time. Target: the
    product's median <= kafka-python's median.
(2) Planning speed. ``--topics`` topics (1 partition, RF 1, created with kafka-python in CreateTopics of
    ``--chunk`` topics) on the cluster; then (a) "describe once": ``AdminStore.read_cluster()`` (DescribeCluster,
    Metadata, DescribeConfigs, ListPartitionReassignments, and whatever else the product's read asks), each
    request's share, the DescribeConfigs split into the brokers' answer and kafka-python's processing of it, and
    the bare kafka-python ``describe_topics()`` for reference; (b) ``load_manifests`` of the same topics declared
    (timed apart) and ``plan(desired, state, cluster)`` alone, for declarations that match (a no-op plan) and for
    ones that add a config override to every topic (one AlterConfig each); (c) "kto plan": ``Reconciler.plan``
    with a fresh read, end to end, each run in turn with the brokers' own answer to the requests it needs (the
    same Metadata and DescribeConfigs, answers left as bytes, to the last byte: both meet the same load of the
    shared machine). Each is the median of ``--repeats`` (7) runs. Targets: (read + plan) / read <= 2 for both
    declarations, computed from the parts and measured whole; kto plan <= 1.3x the brokers' answer (medians).

The issue asks for 10,000 topics in (2); on this 2-core machine three local brokers create 10,000 topics of one
partition in under 10 s (1,000-1,300 topics/s, then ~10 s until all are online) and the whole bench takes 4 to 6
minutes, so 10,000 is the default (``--topics 2000`` for a quick run). The load average is printed first and
last: the machine is shared, and the creation figures are a few hundred milliseconds each. Peak RSS of this
process and of the servers' JVMs is printed at the end. Every server is stopped at the end, on failure, Ctrl-C or
SIGTERM too; all traffic stays on 127.0.0.1. Exit status 1 when a target is missed.

Run: ``.venv/bin/python bench/kraft.py [--topics N] [--create-topics 300] [--rounds 5] [--only create|plan]
[--profile FILE]`` (``--profile`` runs one more, unmeasured, product creation under cProfile and prints its top
functions). Needs a Kafka 3.9 distribution (``KTO_KAFKA_HOME`` or ``../shared/servers/kafka_*``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar, Unpack, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

from harness.kraft_cluster import KRaftCluster  # the harness lives with the tests
from harness.real_kafka import Broker
from harness.server_binaries import KafkaDistribution, kafka_distributions
from topic_operator.access.interface import Patience, ReadRequest, WriteResult
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.config_answers import describe_configs_request
from topic_operator.admin.connection import connected
from topic_operator.admin.metadata_answers import metadata_request
from topic_operator.admin.raw_answers import answers_as_bytes
from topic_operator.admin.reader import _parts as configs_parts  # the read's own split of DescribeConfigs
from topic_operator.admin.store import AdminStore
from topic_operator.manifests.loader import Manifests, load_manifests
from topic_operator.model import ClusterState, TopicSpec
from topic_operator.plan import Action, plan
from topic_operator.reconcile import Reconciler, TopicOutcome

T = TypeVar("T")

CLUSTER = "kraft-bench"
KAFKA_LINE = "3.9"
ADMIN_DEADLINE = 120.0
"""The Admin client's request time-out (and CreateTopics' ``timeout_ms``): a 10,000-topic DescribeConfigs on a
loaded 2-core machine must not be cut short."""
POLL_SECONDS = 0.05
"""How often both creation paths look at Metadata while they wait for their topics to be online."""
TARGET_CREATE_RATIO = 1.0
"""The product's median time to online over kafka-python's batched median: no later."""
TARGET_PLAN_RATIO = 2.0
"""(describe once + plan) over describe once."""
TARGET_PLAN_OVER_ANSWER = 1.3
"""``kto plan`` (a fresh read and the plan) over the brokers' own answer time to the requests the read sends."""
TARGET_APPLY_RATIO = 1.2
"""``kto apply`` of ``--apply-topics`` new topics over kafka-python's CreateTopics of them in requests under the
controller's record limit."""
BATCH_RECORDS = 10_000
"""What a user's own batching has to stay under: ``QuorumController.MAX_RECORDS_PER_USER_OP``."""


# -- measuring ----------------------------------------------------------------------------------------------------


def timed(work: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


class TimedAdmin:
    """The Admin client with each method's wall time added up by name (``seconds``) and its calls counted; it
    stands in for the client wherever the product takes one."""

    def __init__(self, admin: KafkaAdminClient) -> None:
        self._admin = admin
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: defaultdict[str, int] = defaultdict(int)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._admin, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return attribute(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - started
                self.calls[name] += 1

        return call


class TimedStore(AdminStore):
    """``AdminStore`` whose whole reads and writes are timed (``read_s``, ``write_s``), for the split of
    ``Reconciler.apply`` into read, plan and write."""

    def __init__(
        self, admin: TimedAdmin, settings: AdminSettings, *, deadline: float, confirm_writes: bool = True
    ) -> None:
        super().__init__(
            cast(KafkaAdminClient, admin), settings, deadline=deadline, confirm_writes=confirm_writes
        )
        self.read_s = 0.0
        self.write_s = 0.0

    def read_cluster(self, **request: Unpack[ReadRequest]) -> ClusterState:
        state, seconds = timed(lambda: super(TimedStore, self).read_cluster(**request))
        self.read_s += seconds
        return state

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        results, seconds = timed(lambda: super(TimedStore, self).apply_all(actions, deadline=deadline))
        self.write_s += seconds
        return results


def online(topic: Mapping[str, Any], partitions: int, replicas: int) -> bool:
    """Every partition has a leader and a full ISR (and no error), as one Metadata answer shows."""
    parts = topic.get("partitions") or []
    return (
        int(topic.get("error_code", 0)) == 0
        and len(parts) == partitions
        and all(
            int(p.get("error_code", 0)) == 0
            and int(p["leader_id"]) >= 0
            and len(set(p["isr_nodes"])) == replicas
            for p in parts
        )
    )


def wait_online(
    admin: KafkaAdminClient,
    names: Iterable[str],
    partitions: int,
    replicas: int,
    *,
    timeout: float,
    poll: float = POLL_SECONDS,
) -> int:
    """Until every topic of ``names`` is online (Metadata of the topics not yet online, every ``poll`` s); the
    number of Metadata requests it took. ``TimeoutError`` after ``timeout`` s."""
    pending = set(names)
    deadline = time.monotonic() + timeout
    requests = 0
    while pending:
        requests += 1
        described: list[Mapping[str, Any]] = admin.describe_topics(sorted(pending))
        pending -= {t["name"] for t in described if online(t, partitions, replicas)}
        if not pending:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(pending)} topics not online within {timeout:g} s, e.g. {min(pending)}")
        time.sleep(poll)
    return requests


def wait_logs_on_disk(cluster: KRaftCluster, prefix: str, expected: int, *, timeout: float) -> int:
    """Until the brokers hold ``expected`` partition directories named ``prefix-*`` in all: a broker creates a
    partition's log while it applies the metadata records that made it, so once they are all on disk every broker
    has caught up with the creates (one broker answering Metadata with them all says nothing of the others). The
    number of directory scans it took. ``TimeoutError`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    scans = 0
    while True:
        scans += 1
        held = sum(
            1
            for broker in cluster.brokers
            if broker.log_dir.is_dir()
            for entry in broker.log_dir.iterdir()
            if entry.name.startswith(f"{prefix}-")
        )
        if held >= expected:
            return scans
        if time.monotonic() > deadline:
            raise TimeoutError(f"{held} of {expected} {prefix}-* partition logs on disk within {timeout:g} s")
        time.sleep(POLL_SECONDS)


DELETE_CHUNK = 2_000
"""Topics per DeleteTopics: a request stays under the controller's record limit (a topic's removal is a record,
and its partitions' with it)."""


def delete_and_wait(admin: KafkaAdminClient, cluster: KRaftCluster, prefix: str, *, timeout: float) -> None:
    """DeleteTopics of every topic named ``prefix-*`` that any broker still holds files of (a broker's metadata
    may lag the controller's, so its topic list is not the list), in requests under the record limit, again every
    few seconds while files remain; until every broker has removed the partitions' directories (``BenchCluster``
    deletes them at once): only then are the brokers done with the deletion, and the next measurement does not
    share the machine with it."""
    deadline = time.monotonic() + timeout
    asked_at = -float("inf")
    while True:
        left = [
            entry.name
            for broker in cluster.brokers
            if broker.log_dir.is_dir()
            for entry in broker.log_dir.iterdir()
            if entry.name.startswith(f"{prefix}-")
        ]
        if not left:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{len(left)} partition directories of deleted topics left after {timeout:g} s"
            )
        if time.monotonic() - asked_at > 5.0:
            # a partition's directory is <topic>-<partition>; <topic>-<partition>.<id>-delete once deleted
            topics = sorted({name.rsplit("-", 1)[0] for name in left if not name.endswith("-delete")})
            for start in range(0, len(topics), DELETE_CHUNK):
                admin.delete_topics(
                    topics[start : start + DELETE_CHUNK],
                    timeout_ms=int(ADMIN_DEADLINE * 1000),
                    raise_errors=False,
                )
            asked_at = time.monotonic()
        time.sleep(0.2)


def wait_brokers(admin: KafkaAdminClient, count: int, *, timeout: float) -> None:
    """Until DescribeCluster lists ``count`` unfenced brokers."""
    deadline = time.monotonic() + timeout
    while True:
        brokers = admin.describe_cluster().get("brokers", ())
        if sum(1 for b in brokers if not b.get("is_fenced", False)) >= count:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {count} unfenced brokers after {timeout:g} s: {brokers}")
        time.sleep(0.2)


def create_in_chunks(
    admin: KafkaAdminClient, names: Sequence[str], partitions: int, replicas: int, chunk: int
) -> None:
    """kafka-python's batched CreateTopics, ``chunk`` topics a request; any refusal ends the bench."""
    for start in range(0, len(names), chunk):
        request = {
            name: {"num_partitions": partitions, "replication_factor": replicas}
            for name in names[start : start + chunk]
        }
        response = admin.create_topics(request, timeout_ms=int(ADMIN_DEADLINE * 1000), raise_errors=False)
        refused = [t for t in response["topics"] if int(t["error_code"]) != 0]
        if refused:
            raise RuntimeError(f"CreateTopics refused {len(refused)} topics, e.g. {refused[0]}")


# -- manifests ----------------------------------------------------------------------------------------------------


def write_manifest(
    path: Path,
    bootstrap_servers: str,
    names: Sequence[str],
    partitions: int,
    replicas: int,
    config: Mapping[str, str] | Callable[[int], Mapping[str, str]] | None = None,
) -> Path:
    """One multi-document file: the KafkaCluster (``bootstrapServers``, Kafka 3.9) and a KafkaTopic per name,
    each with ``config``, or ``config(index)`` for a config of its own."""
    config_of = config if callable(config) else (lambda _index: config or {})
    documents = [
        "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\n"
        f"metadata: {{name: {CLUSTER}}}\nspec: {{bootstrapServers: '{bootstrap_servers}', "
        f"kafkaVersion: '{KAFKA_LINE}'}}\n"
    ]
    for index, name in enumerate(names):
        overrides = "".join(f"    {key}: '{value}'\n" for key, value in config_of(index).items())
        documents.append(
            f"apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {{name: {name}}}\n"
            f"spec:\n  cluster: {CLUSTER}\n  partitions: {partitions}\n  replicas: {replicas}\n"
            + (f"  config:\n{overrides}" if overrides else "")
        )
    path.write_text("---\n".join(documents))
    return path


def in_turn(number: int) -> tuple[str, str]:
    """Which path goes first in round ``number``: the product in odd rounds, kafka-python in even ones."""
    return ("product", "batch") if number % 2 == 1 else ("batch", "product")


def loaded(path: Path) -> Manifests:
    manifests = load_manifests([path])
    if not manifests.ok or len(manifests.clusters) != 1:
        raise RuntimeError(f"the bench's manifest {path} is not valid: {manifests.errors[:3]}")
    return manifests


# -- (1) creation speed -------------------------------------------------------------------------------------------


@dataclass
class ProductRun:
    total_s: float = 0.0
    cpu_s: float = 0.0
    parse_s: float = 0.0
    apply_s: float = 0.0
    read_s: float = 0.0
    plan_s: float = 0.0
    write_s: float = 0.0
    """``AdminStore.apply_all``: the CreateTopics request (``create_s``) and whatever else the writer does after
    it (``after_create_s``: e.g. waiting for the metadata to show the topics)."""
    create_s: float = 0.0
    after_create_s: float = 0.0
    online_s: float = 0.0
    polls: int = 0
    requests: dict[str, float] = field(default_factory=dict)


@dataclass
class BatchRun:
    total_s: float = 0.0
    cpu_s: float = 0.0
    create_s: float = 0.0
    online_s: float = 0.0
    polls: int = 0


@dataclass
class Creation:
    """Everything a creation measurement needs."""

    admin: KafkaAdminClient
    settings: AdminSettings
    cluster: KRaftCluster
    scratch: Path
    count: int
    partitions: int
    replicas: int
    timeout: float

    def names(self, prefix: str) -> list[str]:
        return [f"{prefix}-{i:05d}" for i in range(self.count)]

    def product(self, prefix: str) -> ProductRun:
        """Parse, ``Reconciler.apply`` through ``AdminStore``, wait for online; the manifest is written before."""
        names = self.names(prefix)
        manifest = write_manifest(
            self.scratch / f"{prefix}.yaml",
            ",".join(self.settings.bootstrap_servers),
            names,
            self.partitions,
            self.replicas,
        )
        admin = TimedAdmin(self.admin)
        store = TimedStore(
            admin, self.settings, deadline=ADMIN_DEADLINE, confirm_writes=False
        )  # as kto apply
        run = ProductRun()
        cpu = time.process_time()
        started = time.perf_counter()
        manifests, run.parse_s = timed(lambda: loaded(manifest))
        report, run.apply_s = timed(
            lambda: Reconciler(store, manifests.clusters[0], deadline=ADMIN_DEADLINE).apply(manifests.topics)
        )
        run.polls, run.online_s = timed(
            lambda: wait_online(self.admin, names, self.partitions, self.replicas, timeout=self.timeout)
        )
        run.total_s = time.perf_counter() - started
        run.cpu_s = time.process_time() - cpu
        applied = len(report.by_outcome(TopicOutcome.APPLIED))
        if applied != self.count:
            raise RuntimeError(f"the product applied {applied} of {self.count} topics: {report.counts()}")
        run.read_s, run.write_s = store.read_s, store.write_s
        run.plan_s = run.apply_s - run.read_s - run.write_s
        run.create_s = admin.seconds["create_topics"]
        run.after_create_s = run.write_s - run.create_s
        run.requests = dict(admin.seconds)
        return run

    def batch(self, prefix: str) -> BatchRun:
        """kafka-python's one CreateTopics of every topic, then the same wait for online."""
        names = self.names(prefix)
        request = {
            name: {"num_partitions": self.partitions, "replication_factor": self.replicas} for name in names
        }
        run = BatchRun()
        cpu = time.process_time()
        started = time.perf_counter()
        response, run.create_s = timed(
            lambda: self.admin.create_topics(
                request, timeout_ms=int(ADMIN_DEADLINE * 1000), raise_errors=False
            )
        )
        run.polls, run.online_s = timed(
            lambda: wait_online(self.admin, names, self.partitions, self.replicas, timeout=self.timeout)
        )
        run.total_s = time.perf_counter() - started
        run.cpu_s = time.process_time() - cpu
        refused = [t for t in response["topics"] if int(t["error_code"]) != 0]
        if refused:
            raise RuntimeError(
                f"kafka-python's CreateTopics refused {len(refused)} topics, e.g. {refused[0]}"
            )
        return run

    def clean(self, prefix: str) -> None:
        delete_and_wait(self.admin, self.cluster, prefix, timeout=self.timeout)


def spread(values: Sequence[float]) -> str:
    return f"min {min(values):.2f}, max {max(values):.2f}"


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def measure_creation(creation: Creation, rounds: int, settle: float) -> bool:
    print(
        f"(1) creation: {creation.count} topics x {creation.partitions} partitions, RF {creation.replicas}, "
        f"until online (leader and ISR of {creation.replicas} for every partition; Metadata every "
        f"{POLL_SECONDS * 1000:g} ms); {rounds} rounds"
    )
    warm = "warmup"
    creation.batch(warm)  # fresh brokers: the first topics of a JVM cost more, for either path
    creation.clean(warm)
    time.sleep(settle)
    products: list[ProductRun] = []
    batches: list[BatchRun] = []
    for number in range(1, rounds + 1):
        order = in_turn(number)
        for path in order:
            prefix = f"r{number}-{path}"
            if path == "product":
                products.append(creation.product(prefix))
            else:
                batches.append(creation.batch(prefix))
            creation.clean(prefix)
            time.sleep(settle)
        p, b = products[-1], batches[-1]
        print(
            f"  round {number} ({'kto' if order[0] == 'product' else 'kafka-python'} first): kto {p.total_s:.3f} s, "
            f"kafka-python batch {b.total_s:.3f} s, ratio {p.total_s / b.total_s:.2f}"
        )
        print(
            f"    kto: parse {p.parse_s:.3f} + read {p.read_s:.3f} + plan {p.plan_s:.3f} + write {p.write_s:.3f} "
            f"(CreateTopics {p.create_s:.3f}, then in the writer {p.after_create_s:.3f}) + wait online {p.online_s:.3f} ({p.polls} Metadata); CPU {p.cpu_s:.3f} s; requests: "
            + ", ".join(f"{name} {seconds:.3f}" for name, seconds in sorted(p.requests.items()))
        )
        print(
            f"    kafka-python: CreateTopics {b.create_s:.3f} + wait online {b.online_s:.3f} ({b.polls} Metadata); "
            f"CPU {b.cpu_s:.3f} s"
        )
    product_median = median(p.total_s for p in products)
    batch_median = median(b.total_s for b in batches)
    ratio = product_median / batch_median
    met = ratio <= TARGET_CREATE_RATIO
    print(
        f"  median: kto {product_median:.3f} s ({spread([p.total_s for p in products])}), kafka-python batch "
        f"{batch_median:.3f} s ({spread([b.total_s for b in batches])}); per-round ratios "
        + ", ".join(f"{p.total_s / b.total_s:.2f}" for p, b in zip(products, batches, strict=True))
    )
    print(
        "  median split, kto: "
        + ", ".join(
            f"{name} {median(getattr(p, attr) for p in products):.3f} s"
            for name, attr in (
                ("parse", "parse_s"),
                ("read", "read_s"),
                ("plan", "plan_s"),
                ("write", "write_s"),
                ("of which CreateTopics", "create_s"),
                ("of which the writer after CreateTopics", "after_create_s"),
                ("wait online", "online_s"),
                ("CPU of this process", "cpu_s"),
            )
        )
    )
    print(
        f"  median split, kafka-python: CreateTopics {median(b.create_s for b in batches):.3f} s, "
        f"wait online {median(b.online_s for b in batches):.3f} s, "
        f"CPU of this process {median(b.cpu_s for b in batches):.3f} s"
    )
    best = min(p.total_s for p in products) / min(b.total_s for b in batches)
    print(f"  best of each (the least disturbed by the machine's other load): ratio {best:.2f}")
    print(
        f"  kto / kafka-python batch (medians): {ratio:.2f}   target <= {TARGET_CREATE_RATIO:g}   "
        f"{'met' if met else 'not met'}"
    )
    return met


def profile_product(creation: Creation, path: Path) -> None:
    """One more product creation, under cProfile (this thread only: kafka-python's network thread shows as the
    caller waiting on its future); the top functions by cumulative time, and the stats in ``path``."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        creation.product("profiled")
    finally:
        profiler.disable()
    creation.clean("profiled")
    profiler.dump_stats(path)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(25)
    print(f"  cProfile of one product creation (stats in {path}):")
    print("\n".join("    " + line for line in text.getvalue().splitlines() if line.strip()))


# -- (3) one apply at scale ---------------------------------------------------------------------------------------


def overrides_of(index: int) -> dict[str, str]:
    """The apply measurement's overrides: ``retention.ms`` on every topic, ``cleanup.policy`` on every other."""
    config = {"retention.ms": str(3_600_000 + index)}
    if index % 2 == 0:
        config["cleanup.policy"] = "compact"
    return config


def kafka_python_in_requests_under_the_limit(
    admin: KafkaAdminClient, names: Sequence[str]
) -> tuple[float, int]:
    """kafka-python's CreateTopics of ``names`` (1 partition, RF 1, ``overrides_of``), as a user batches them
    under the record limit: as many topics a request as their records allow (a topic, its partition, its
    overrides). The seconds until the last answer, and the number of requests."""
    started = time.perf_counter()
    requests = 0
    chunk: dict[str, dict[str, Any]] = {}
    records = 0

    def send() -> None:
        response = admin.create_topics(chunk, timeout_ms=int(ADMIN_DEADLINE * 1000), raise_errors=False)
        refused = [t for t in response["topics"] if int(t["error_code"]) != 0]
        if refused:
            raise RuntimeError(
                f"kafka-python's CreateTopics refused {len(refused)} topics, e.g. {refused[0]}"
            )

    for index, name in enumerate(names):
        config = overrides_of(index)
        cost = 2 + len(config)
        if records + cost > BATCH_RECORDS:
            send()
            requests += 1
            chunk, records = {}, 0
        chunk[name] = {"num_partitions": 1, "replication_factor": 1, "configs": config}
        records += cost
    if chunk:
        send()
        requests += 1
    return time.perf_counter() - started, requests


def measure_apply(creation: Creation, count: int, rounds: int, settle: float) -> bool:
    """``kto apply`` (parse, read, plan, the split CreateTopics) of ``count`` new topics against kafka-python's
    CreateTopics in requests under the limit; each until the controller's last answer, alternating which goes
    first, every topic deleted (and its files gone) between runs."""
    print(
        f"(3) one apply: {count:,} new topics of 1 partition, RF 1, retention.ms on each and cleanup.policy on "
        f"every other (about {count * 3.5:,.0f} controller records); {rounds} rounds"
    )
    servers = ",".join(creation.settings.bootstrap_servers)
    products: list[float] = []
    batches: list[float] = []
    for number in range(1, rounds + 1):
        order = in_turn(number)
        for path in order:
            prefix = f"a{number}-{path}"
            names = [f"{prefix}-{i:05d}" for i in range(count)]
            if path == "product":
                manifest = write_manifest(
                    creation.scratch / f"{prefix}.yaml", servers, names, 1, 1, overrides_of
                )
                store = TimedStore(
                    TimedAdmin(creation.admin),
                    creation.settings,
                    deadline=ADMIN_DEADLINE,
                    confirm_writes=False,
                )
                started = time.perf_counter()
                manifests = loaded(manifest)
                report = Reconciler(store, manifests.clusters[0], deadline=ADMIN_DEADLINE).apply(
                    manifests.topics
                )
                spent = time.perf_counter() - started
                applied = len(report.by_outcome(TopicOutcome.APPLIED))
                if applied != count:
                    raise RuntimeError(f"kto apply applied {applied} of {count} topics: {report.counts()}")
                products.append(spent)
                print(
                    f"  round {number}: kto apply {spent:.2f} s (read {store.read_s:.2f}, write {store.write_s:.2f}, "
                    f"parse and plan {spent - store.read_s - store.write_s:.2f})"
                )
            else:
                spent, requests = kafka_python_in_requests_under_the_limit(creation.admin, names)
                batches.append(spent)
                print(
                    f"  round {number}: kafka-python, {requests} CreateTopics under the limit: {spent:.2f} s"
                )
            wait_online(creation.admin, names, 1, 1, timeout=creation.timeout, poll=0.5)
            creation.clean(prefix)
            time.sleep(settle)
    ratio = median(products) / median(batches)
    met = ratio <= TARGET_APPLY_RATIO
    print(
        f"  median: kto apply {median(products):.2f} s ({spread(products)}), kafka-python {median(batches):.2f} s "
        f"({spread(batches)})"
    )
    print(
        f"  kto apply / kafka-python (medians): {ratio:.2f}   target <= {TARGET_APPLY_RATIO:g}   {'met' if met else 'not met'}"
    )
    return met


# -- (2) planning speed -------------------------------------------------------------------------------------------


def median_of(repeats: int, work: Callable[[], T]) -> tuple[T, float, list[float]]:
    """``work`` ``repeats`` times: the last result, the median seconds, every run's seconds."""
    seconds: list[float] = []
    result: T | None = None
    for _ in range(repeats):
        result, spent = timed(work)
        seconds.append(spent)
    assert result is not None
    return result, statistics.median(seconds), seconds


def describe_configs_split(admin: KafkaAdminClient, names: Sequence[str]) -> tuple[float, float, int]:
    """kafka-python's DescribeConfigs of ``names`` in two parts: the request answered and decoded (the brokers,
    and kafka-python's wire decoding on its network thread), then kafka-python's turning the answer into dicts
    (``_describe_configs_process_responses``, which also filters to overrides); and how many config entries the
    answer held. Uses kafka-python's private helpers, for this breakdown only."""
    resources = [ConfigResource(ConfigResourceType.TOPIC, name) for name in names]
    client: Any = admin
    request = client._describe_configs_request(resources)
    manager = client._manager

    async def send() -> Any:
        return await manager.send(request)

    response, answer_s = timed(lambda: manager.run(send))
    _, process_s = timed(lambda: client._describe_configs_process_responses([response]))
    return answer_s, process_s, sum(len(result.configs) for result in response.results)


def brokers_answer_s(admin: KafkaAdminClient, names: Sequence[str]) -> float:
    """The brokers' own time for the requests a read of ``names`` sends, to the last byte of each answer and no
    further: DescribeCluster, then Metadata with the DescribeConfigs split as the read splits them (sent at once,
    answers left as bytes), then ListPartitionReassignments."""
    started = time.perf_counter()
    brokers = sorted(int(b["broker_id"]) for b in admin.describe_cluster()["brokers"])
    requests = [metadata_request(None)] + [
        describe_configs_request(p) for p in configs_parts(list(names), len(brokers))
    ]
    for _ in answers_as_bytes(admin, requests, brokers, deadline=ADMIN_DEADLINE):
        pass
    admin.list_partition_reassignments()
    return time.perf_counter() - started


def measure_planning(
    admin: KafkaAdminClient,
    cluster: KRaftCluster,
    settings: AdminSettings,
    scratch: Path,
    count: int,
    chunk: int,
    repeats: int,
    timeout: float,
) -> bool:
    names = [f"plan-team-{i % 50:02d}-topic-{i:05d}" for i in range(count)]
    print(f"(2) planning: {count:,} topics of 1 partition, RF 1 on the cluster")
    _, create_s = timed(lambda: create_in_chunks(admin, names, 1, 1, chunk))
    polls, online_s = timed(lambda: wait_online(admin, names, 1, 1, timeout=timeout, poll=0.5))
    _, caught_up_s = timed(lambda: wait_logs_on_disk(cluster, "plan", count, timeout=timeout))
    print(
        f"  set-up: kafka-python CreateTopics in chunks of {chunk}: {create_s:.1f} s "
        f"({count / create_s:,.0f} topics/s), online after {online_s:.1f} s more ({polls} Metadata), "
        f"every broker caught up {caught_up_s:.1f} s later"
    )

    timed_admin = TimedAdmin(admin)
    store = AdminStore(cast(KafkaAdminClient, timed_admin), settings, deadline=ADMIN_DEADLINE)
    reads: list[float] = []
    cpus: list[float] = []
    state: ClusterState | None = None
    for _ in range(repeats):
        cpu = time.process_time()
        state, seconds = timed(store.read_cluster)
        reads.append(seconds)
        cpus.append(time.process_time() - cpu)
    assert state is not None
    read_s = median(reads)
    if len([t for t in state.topics if t.startswith("plan-")]) != count:
        raise RuntimeError(f"read_cluster found {len(state.topics)} topics, not {count}")
    requests = {name: seconds / repeats for name, seconds in timed_admin.seconds.items()}
    described, describe_s, _ = median_of(repeats, admin.describe_topics)
    answer_s, process_s, entries = describe_configs_split(admin, names)
    print(
        f"  (a) describe once: AdminStore.read_cluster() median {read_s:.3f} s "
        f"({', '.join(f'{s:.3f}' for s in reads)}); CPU of this process {median(cpus):.3f} s"
    )
    print(
        "      its requests (mean s): "
        + ", ".join(
            f"{name} {seconds:.3f}" for name, seconds in sorted(requests.items(), key=lambda i: -i[1])
        )
    )
    print(
        f"      DescribeConfigs of {count:,} topics alone: answered and decoded {answer_s:.3f} s, then kafka-python's "
        f"answer-to-dicts (every config of every topic, {entries / count:.0f} a topic, {entries:,} in all, "
        f"filtered to overrides client-side) {process_s:.3f} s"
    )
    print(
        f"      bare kafka-python describe_topics() (Metadata) of all {len(described):,} topics: median "
        f"{describe_s:.3f} s"
    )

    _, answer_s, answers = median_of(repeats, partial(brokers_answer_s, admin, names))
    print(
        f"      the brokers' own answer to the same requests (to the last byte, nothing decoded): median "
        f"{answer_s:.3f} s ({spread(answers)}); measured again below, in turn with each kto plan"
    )

    met = True
    variants: tuple[tuple[str, Mapping[str, str] | None], ...] = (
        ("declarations as the cluster holds them (no-op plan)", None),
        ("a retention.ms override added to every topic (one AlterConfig each)", {"retention.ms": "3600000"}),
    )
    for number, (what, config) in enumerate(variants):
        manifest = write_manifest(
            scratch / f"plan-{number}.yaml", ",".join(settings.bootstrap_servers), names, 1, 1, config
        )
        manifests, parse_s = timed(partial(loaded, manifest))
        cluster = manifests.clusters[0]
        desired: tuple[TopicSpec, ...] = manifests.topics
        planned, plan_s, plans = median_of(repeats, partial(plan, desired, state, cluster))
        actions = len(planned.actions)
        reconciler = Reconciler(store, cluster, deadline=ADMIN_DEADLINE)
        # The brokers' answer and kto plan in turn, so that both meet the same load of this shared machine.
        wholes, answers = [], []
        for _ in range(repeats):
            answers.append(brokers_answer_s(admin, names))
            wholes.append(timed(partial(reconciler.plan, desired))[1])
        whole_s, answer_s = median(wholes), median(answers)
        ratio_parts = (read_s + plan_s) / read_s
        ratio_whole = whole_s / read_s
        ok = max(ratio_parts, ratio_whole) <= TARGET_PLAN_RATIO
        over_answer = whole_s / answer_s
        pairs = sorted(whole / answer for whole, answer in zip(wholes, answers, strict=True))
        # The target is for a plan with nothing to change; the other declarations are shown beside it.
        ok_answer = over_answer <= TARGET_PLAN_OVER_ANSWER or config is not None
        met = met and ok and ok_answer
        bare = whole_s / describe_s
        print(f"  (b) {what}: {len(desired):,} declared, {actions:,} actions")
        print(
            f"      load_manifests {parse_s:.3f} s (not in the ratio); plan() median {plan_s:.3f} s ({spread(plans)})"
        )
        print(
            f"      (c) kto plan, Reconciler.plan with a fresh read: median {whole_s:.3f} s ({spread(wholes)})"
        )
        print(
            f"      (read + plan) / read = {ratio_parts:.2f}; measured read+plan / read = {ratio_whole:.2f}   "
            f"target <= {TARGET_PLAN_RATIO:g}   {'met' if ok else 'not met'}"
        )
        print(
            f"      kto plan / the brokers' own answer (median {answer_s:.3f} s, measured in turn with it) = "
            f"{over_answer:.2f}   "
            + (
                f"target <= {TARGET_PLAN_OVER_ANSWER:g} (nothing to change)   {'met' if ok_answer else 'not met'}; "
                if config is None
                else "(no target: every topic changes) "
            )
            + f"each pair's ratio {', '.join(f'{p:.2f}' for p in pairs)}"
        )
        print(f"      (for reference: kto plan / bare describe_topics() = {bare:.1f}; not the target)")
    return met


# -- the run ------------------------------------------------------------------------------------------------------


class BenchCluster(KRaftCluster):
    """The harness's KRaft cluster, whose brokers remove a deleted topic's directories at once
    (``log.segment.delete.delay.ms=0`` instead of a minute later), so that a measurement never shares the two
    cores with the file deletions of the one before.

    ``kafkas_jvm``: the brokers and the controller run with the JVM Kafka's own start scripts choose (a 1 GB
    heap, G1, the full JIT) instead of the tests' quick-starting one. Holding 10,000 topics, each broker on the
    tests' JVM (512 MB, one GC thread, the JIT's first tier) kept a third of a core busy while idle, mostly
    collecting, and ran out of heap within about ten minutes of repeated reads."""

    def __init__(self, distribution: KafkaDistribution, directory: Path, *, kafkas_jvm: bool = False) -> None:
        super().__init__(distribution, directory)
        if kafkas_jvm:
            self.jvm_options = {}
            self.controller.jvm_options = {}

    def _properties(self, broker: Broker) -> str:
        return super()._properties(broker) + "log.segment.delete.delay.ms=0\n"


def kafka_39() -> KafkaDistribution:
    found, missing = kafka_distributions()
    lines = [d for d in found if d.line == KAFKA_LINE]
    if not lines:
        raise SystemExit(f"bench/kraft.py needs Kafka {KAFKA_LINE}: {missing or 'no 3.9 distribution found'}")
    return lines[-1]


def peak_rss_mb(pid: int) -> float | None:
    """A process's peak resident set (``VmHWM``), from ``/proc``; None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg()) + " (1, 5, 15 min)"


def stop_on_signals() -> None:
    """SIGINT (even when the shell that started the run in the background ignores it) and SIGTERM end the run as
    Ctrl-C does: through the ``with`` that stops the servers."""

    def stop(number: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {number}")

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=("create", "apply", "plan"), help="measure only one of the targets")
    parser.add_argument(
        "--apply-topics", type=int, default=10_000, help="new topics in the one-apply measurement"
    )
    parser.add_argument("--apply-rounds", type=int, default=5, help="rounds of the one-apply measurement")
    parser.add_argument("--create-topics", type=int, default=300, help="topics per creation measurement")
    parser.add_argument("--partitions", type=int, default=6, help="partitions per created topic (RF 3)")
    parser.add_argument(
        "--rounds", type=int, default=5, help="creation rounds, alternating which path is first"
    )
    parser.add_argument("--settle", type=float, default=2.0, help="seconds of quiet after each deletion")
    parser.add_argument("--topics", type=int, default=10_000, help="topics on the cluster for planning")
    parser.add_argument(
        "--chunk", type=int, default=1000, help="topics per CreateTopics for the planning set-up"
    )
    parser.add_argument("--repeats", type=int, default=7, help="runs of each planning measurement (median)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds any wait may take")
    parser.add_argument("--profile", type=Path, help="cProfile one more product creation into this file")
    args = parser.parse_args()
    distribution = kafka_39()
    stop_on_signals()
    print(f"load average at the start: {load()} (this machine: {os.cpu_count()} CPUs, shared)")
    results: dict[str, bool] = {}
    brokers_peak: list[tuple[str, float | None]] = []
    with tempfile.TemporaryDirectory(prefix="kto-bench-kraft-") as scratch:
        started = time.monotonic()
        with BenchCluster(distribution, Path(scratch) / "kraft") as kraft:
            servers = tuple(kraft.bootstrap_servers.split(","))
            if not all(server.startswith("127.0.0.1:") for server in servers):
                raise SystemExit(f"the brokers are not on 127.0.0.1: {servers}")
            print(
                f"Kafka {distribution.version} KRaft: a controller and {len(kraft.brokers)} brokers in racks "
                f"{'/'.join(b.rack for b in kraft.brokers)} on {kraft.bootstrap_servers}, started in "
                f"{time.monotonic() - started:.1f} s"
            )
            settings = AdminSettings(bootstrap_servers=servers)
            with connected(settings, deadline=ADMIN_DEADLINE) as admin:
                wait_brokers(admin, len(kraft.brokers), timeout=args.timeout)
                if args.only in (None, "create"):
                    creation = Creation(
                        admin,
                        settings,
                        kraft,
                        Path(scratch),
                        args.create_topics,
                        args.partitions,
                        3,
                        args.timeout,
                    )
                    results["creation"] = measure_creation(creation, args.rounds, args.settle)
                    if args.profile is not None:
                        profile_product(creation, args.profile)
                if args.only in (None, "apply"):
                    creation = Creation(
                        admin, settings, kraft, Path(scratch), args.apply_topics, 1, 1, args.timeout
                    )
                    results["one apply"] = measure_apply(
                        creation, args.apply_topics, args.apply_rounds, args.settle
                    )
                if args.only in (None, "plan"):
                    results["planning"] = measure_planning(
                        admin,
                        kraft,
                        settings,
                        Path(scratch),
                        args.topics,
                        args.chunk,
                        args.repeats,
                        args.timeout,
                    )
            nodes = [(f"broker {b.id}", b) for b in kraft.brokers]
            nodes += [("controller", c) for c in kraft.controller.brokers]
            for name, node in nodes:
                pid = node.process.pid if node.process is not None else None
                brokers_peak.append((name, peak_rss_mb(pid) if pid is not None else None))
    print(f"load average at the end: {load()}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: this process {peak_mb:.0f} MB; servers' JVMs (VmHWM): ", end="")
    print(", ".join(f"{name} {mb:.0f} MB" if mb is not None else f"{name} ?" for name, mb in brokers_peak))
    print("targets: " + ", ".join(f"{name} {'met' if met else 'not met'}" for name, met in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
