"""``kto demo``: the whole engine against a real local ZooKeeper and a simulated 6-broker, 3-rack cluster.

It starts ZooKeeper from Debian's package (installing nothing: if Java or the package is missing it says what to
install and stops), registers six brokers exactly as brokers register, applies ``manifests/examples``, and
shows the plan, the apply, a describe, a rejected partition decrease, a config change and a second apply that
changes nothing, then stops everything it started. Every line printed is computed by the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import yaml
from kazoo.client import KazooClient

from topic_operator.describe import describe_lines
from topic_operator.export import cluster_document, export_cluster
from topic_operator.manifests import load_manifests, load_objects
from topic_operator.model import ApplyMode, ClusterSpec, TopicSpec
from topic_operator.plan_output import render_plan_text
from topic_operator.reconcile import Reconciler, ReconcileReport, TopicOutcome
from topic_operator.zookeeper.connection import ZooKeeperSettings, close_client, open_client
from topic_operator.zookeeper.local_server import LocalZooKeeper
from topic_operator.zookeeper.simulated_brokers import (
    bootstrap_cluster,
    bring_partitions_online,
    register_brokers,
)
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.znodes import ConfigChangeZNode

RACKS = ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c")
CHROOT = "/kafka"
DEFAULT_EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "examples"
MISSING_SOFTWARE = (
    "kto demo needs Java and Debian's zookeeper package; nothing was started. "
    "Install them with `make demo` (or: apt-get install zookeeper)."
)


@contextmanager
def _local_kafka_cluster() -> Iterator[tuple[LocalZooKeeper, KazooClient]]:
    """A local ZooKeeper with a /kafka chroot that looks like a running cluster; the brokers' session is
    ``brokers``, kept open until the end, as a real broker keeps its registration alive."""
    with LocalZooKeeper() as server:
        setup = KazooClient(hosts=server.connect_string)
        setup.start(timeout=10)
        setup.ensure_path(CHROOT)
        close_client(setup)
        brokers = open_client(ZooKeeperSettings(connect=server.connect_string + CHROOT))
        try:
            bootstrap_cluster(brokers, "kto-demo-cluster-000001")
            register_brokers(brokers, RACKS)
            yield server, brokers
        finally:
            close_client(brokers)


def _shortest(path: Path) -> Path:
    """The path as the user would type it: relative to the working directory when under it."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _heading(out: TextIO, text: str) -> None:
    out.write(f"\n== {text}\n")


def _report(out: TextIO, report: ReconcileReport) -> None:
    for result in report.results:
        if result.outcome is TopicOutcome.UNCHANGED:
            continue
        out.write(f"  {result.topic}: {result.outcome.value}\n")
        for error in result.errors:
            out.write(f"      {error}\n")


def _with(topics: list[TopicSpec], name: str, **changes: Any) -> list[TopicSpec]:
    return [replace(t, **changes) if t.name == name else t for t in topics]


def run_demo(out: TextIO, examples: Path | None = None) -> int:
    """Run the demo, printing to ``out``; returns the exit code (1 when something it needs is missing)."""
    source = examples or _shortest(DEFAULT_EXAMPLES)
    manifests = load_manifests([source]) if source.exists() else None
    if manifests is None or not manifests.ok or not manifests.clusters:
        out.write(f"kto demo: no valid example manifests at {source} (pass --examples DIR)\n")
        return 1
    try:
        cluster_context = _local_kafka_cluster()
        server, brokers = cluster_context.__enter__()
    except (RuntimeError, FileNotFoundError, OSError) as error:
        out.write(f"{MISSING_SOFTWARE}\n  ({error})\n")
        return 1
    try:
        _run(
            out, server, brokers, manifests.clusters[0], list(manifests.topics_of(manifests.clusters[0].name))
        )
    finally:
        cluster_context.__exit__(None, None, None)
        out.write("\nstopped ZooKeeper and removed its data; demo finished\n")
    return 0


def _show_export(out: TextIO, client: KazooClient, reconciler: Reconciler, cluster: ClusterSpec) -> None:
    """``kto export`` of the demo cluster, and ``kto plan`` of that export: nothing to change."""
    state = read_cluster(client)
    exported = export_cluster(state, cluster=cluster.name)
    documents = [t.document for t in exported.topics if t.document is not None]
    _heading(out, f"kto export --zookeeper {cluster.zookeeper_connect} --cluster {cluster.name} -o -")
    out.write(yaml.safe_dump_all(documents[:2], sort_keys=False, explicit_start=True))
    out.write(f"  ... {len(documents)} KafkaTopics in all\n")
    loaded = load_objects([cluster_document(cluster.name, cluster.zookeeper_connect), *documents])
    plan = reconciler.plan(list(loaded.topics))
    out.write(
        f"  kto plan -f of the export: {len(plan.topics)} topics, {len(plan.actions)} actions: it declares the "
        "cluster as it is, ready to be managed\n"
    )


def _run(
    out: TextIO, server: LocalZooKeeper, brokers: KazooClient, declared: ClusterSpec, topics: list[TopicSpec]
) -> None:
    connect = server.connect_string + CHROOT
    cluster = replace(declared, zookeeper_connect=connect)
    out.write("kto demo: the engine against a real ZooKeeper and a simulated Kafka cluster\n")
    out.write(f"ZooKeeper {connect} (Debian's zookeeper package, started for this demo)\n")
    out.write(f"brokers 0-5 registered as brokers register (ephemeral v5 JSON): racks {', '.join(RACKS)}\n")
    client = open_client(ZooKeeperSettings(connect=connect))
    try:
        reconciler = Reconciler(client, cluster)
        _heading(out, f"kto plan -f manifests/examples ({len(topics)} topics for cluster {cluster.name})")
        out.write(render_plan_text(reconciler.plan(topics)))

        _heading(out, "kto apply --yes")
        _report(out, reconciler.apply(topics))
        online = bring_partitions_online(brokers, read_cluster(client))
        out.write(f"  (the simulated controller brought {online} new partitions online)\n")

        biggest = max((t for t in topics if t.mode is ApplyMode.APPLY), key=lambda t: t.partitions)
        _heading(out, f"kto describe {biggest.name}")
        for line in describe_lines(read_cluster(client, partition_states=True), [biggest.name]):
            out.write(line.replace("\t", "  ") + "\n")

        _heading(out, f"a decrease is rejected as Kafka rejects it: {biggest.name} to 4 partitions")
        before = client.exists(f"/brokers/topics/{biggest.name}").version
        out.write(render_plan_text(reconciler.plan(_with(topics, biggest.name, partitions=4))))
        _report(out, reconciler.apply(_with(topics, biggest.name, partitions=4)))
        after = client.exists(f"/brokers/topics/{biggest.name}").version
        out.write(f"  topic znode version before {before}, after {after}: nothing was written\n")

        changed = _with(topics, biggest.name, config={**biggest.config, "retention.ms": "3600000"})
        _heading(
            out, f"a config change: {biggest.name} retention.ms=3600000, applied live through a notification"
        )
        out.write(render_plan_text(reconciler.plan(changed)))
        _report(out, reconciler.apply(changed))
        for name in sorted(client.get_children(ConfigChangeZNode.path)):
            payload = json.loads(client.get(f"{ConfigChangeZNode.path}/{name}")[0])
            out.write(f"  {ConfigChangeZNode.path}/{name}: {json.dumps(payload)}\n")

        _heading(out, "kto apply --yes again: nothing to change")
        again = reconciler.apply(changed)
        out.write(f"  {again.writes} writes; {len(again.results)} topics unchanged\n")

        _show_export(out, client, reconciler, cluster)
    finally:
        close_client(client)
