"""``kto demo``: the whole engine against a real local ZooKeeper and a simulated 6-broker, 3-rack cluster.

It starts ZooKeeper from Debian's package (installing nothing: if Java or the package is missing it says what to
install and stops), registers six brokers exactly as brokers register, applies ``manifests/examples``, and
shows the plan, the apply, a describe, a rejected partition decrease, a config change, a second apply that
changes nothing, and a replication factor change carried out by a throttled partition reassignment (the simulated
controller plays Kafka's part), then stops everything it started. Every line printed is computed by the engine.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import takewhile
from pathlib import Path
from typing import Any, TextIO

import yaml
from kazoo.client import KazooClient

from topic_operator.cli.describe_lines import describe_lines
from topic_operator.cli.export_documents import cluster_document, export_cluster
from topic_operator.manifests.loader import load_manifests, load_objects
from topic_operator.model import ApplyMode, ClusterSpec, ReassignmentPolicy, TopicSpec
from topic_operator.plan_output import render_plan_text
from topic_operator.reconcile import Reconciler, ReconcileReport, TopicOutcome
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.testing.simulated_brokers import (
    bootstrap_cluster,
    bring_partitions_online,
    carry_out_reassignments,
    register_brokers,
)
from topic_operator.zookeeper.connection import close_client, open_client
from topic_operator.zookeeper.settings import ZooKeeperSettings
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore
from topic_operator.zookeeper.znodes import BrokerConfigZNode, ConfigChangeZNode, ReassignPartitionsZNode

RACKS = ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c")
CHROOT = "/kafka"
DEFAULT_EXAMPLES = (Path(__file__).parents[1] / "examples").resolve()
"""``manifests/examples``, which the package carries (``topic_operator/examples`` links to it), so an installed
``kto`` has it as a clone does."""
REASSIGNED_TOPIC = "orders.replay"
"""The topic the reassignment step creates with one replica and then takes to three (``orders`` prefix: one the
example cluster allows)."""
THROTTLE = 10485760
"""The reassignment step's ``spec.reassignment.throttleBytesPerSecond`` (10 MiB/s)."""
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


def _describe(out: TextIO, client: KazooClient, topic: str) -> None:
    for line in describe_lines(read_cluster(client, partition_states=True), [topic]):
        out.write(line.replace("\t", "  ") + "\n")


def _broker_throttles(out: TextIO, client: KazooClient) -> None:
    """The brokers' dynamic configs (``/config/brokers/<id>``, where the throttle rates live), one line per
    distinct set."""
    ids = client.get_children("/config/brokers") if client.exists("/config/brokers") else []
    by_config: dict[str, list[int]] = {}
    for broker in sorted(int(b) for b in ids):
        config = BrokerConfigZNode.decode(broker, client.get(BrokerConfigZNode.path(broker))[0])
        shown = ", ".join(f"{k}={v}" for k, v in sorted(config.items())) or "no dynamic configs"
        by_config.setdefault(shown, []).append(broker)
    for shown, brokers in by_config.items():
        out.write(f"  brokers {', '.join(map(str, brokers))} (/config/brokers/<id>): {shown}\n")


def _topic_lines(text: str, topic: str) -> list[str]:
    """One topic's lines of a rendered plan: its own line and the indented ones under it."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line[2:].startswith(f"topic {topic}:"))
    return [lines[first], *takewhile(lambda line: line.startswith("    "), lines[first + 1 :])]


def _show_reassignment(
    out: TextIO, client: KazooClient, brokers: KazooClient, cluster: ClusterSpec, topics: list[TopicSpec]
) -> None:
    """A replication factor change, 1 -> 3, on a cluster that enables reassignment with a throttle: the plan,
    the one transaction that starts it, ``describe`` while the controller moves the replicas, and the apply that
    removes the throttles once it is done (what ``kto apply --wait`` and the operator's timer do)."""
    single = TopicSpec(cluster.name, REASSIGNED_TOPIC, partitions=3, replicas=1, source="kto demo")
    _heading(
        out, f"a replication factor change by partition reassignment: {REASSIGNED_TOPIC}, 1 -> 3 replicas"
    )
    out.write(f"  kto apply --yes with {REASSIGNED_TOPIC} declared: 3 partitions, replicas: 1\n")
    _report(out, Reconciler(ZooKeeperStore(client), cluster).apply([*topics, single]))
    bring_partitions_online(brokers, read_cluster(client))
    _describe(out, client, REASSIGNED_TOPIC)

    tripled = [*topics, replace(single, replicas=3)]
    refused = Reconciler(ZooKeeperStore(client), cluster).plan(tripled).for_topic(REASSIGNED_TOPIC)
    out.write(
        f"  replicas: 3 on KafkaCluster {cluster.name} as manifests/examples has it (reassignment.enabled: false):\n"
    )
    for error in refused.rejections if refused is not None else ():
        out.write(f"    {error.kafka_class.rsplit('.', 1)[-1]}: {error.message}\n")

    enabled = replace(cluster, reassignment=ReassignmentPolicy(True, THROTTLE))
    reconciler = Reconciler(ZooKeeperStore(client), enabled)
    _heading(
        out,
        f"kto plan with spec.reassignment {{enabled: true, throttleBytesPerSecond: {THROTTLE}}} "
        f"on KafkaCluster {cluster.name}",
    )
    out.write(render_plan_text(reconciler.plan(tripled)))

    _heading(out, "kto apply --yes: one transaction writes the throttles and /admin/reassign_partitions")
    _report(out, reconciler.apply(tripled))
    request = json.loads(client.get(ReassignPartitionsZNode.path)[0])
    out.write(f"  {ReassignPartitionsZNode.path}: {json.dumps(request)}\n")
    _broker_throttles(out, client)

    started = carry_out_reassignments(brokers, finish=False)
    _heading(out, f"kto describe {REASSIGNED_TOPIC} while the controller moves its {started} partitions")
    _describe(out, client, REASSIGNED_TOPIC)
    out.write("  kto plan -v meanwhile:\n")
    for line in _topic_lines(
        render_plan_text(reconciler.plan(tripled), show_unchanged=True), REASSIGNED_TOPIC
    ):
        out.write(f"  {line}\n")
    again = reconciler.apply(tripled)
    out.write(f"  kto apply --yes meanwhile: {again.writes} writes; the throttles stay while it runs\n")

    carry_out_reassignments(brokers, finish=True)
    _heading(out, f"kto describe {REASSIGNED_TOPIC} once the controller has finished")
    _describe(out, client, REASSIGNED_TOPIC)

    _heading(
        out, "kto apply --yes after it (what --wait and the operator's timer do): the throttles are removed"
    )
    out.write(render_plan_text(reconciler.plan(tripled)))
    _report(out, reconciler.apply(tripled))
    _describe(out, client, REASSIGNED_TOPIC)
    _broker_throttles(out, client)


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
        reconciler = Reconciler(ZooKeeperStore(client), cluster)
        _heading(out, f"kto plan -f manifests/examples ({len(topics)} topics for cluster {cluster.name})")
        out.write(render_plan_text(reconciler.plan(topics)))

        _heading(out, "kto apply --yes")
        _report(out, reconciler.apply(topics))
        online = bring_partitions_online(brokers, read_cluster(client))
        out.write(f"  (the simulated controller brought {online} new partitions online)\n")

        biggest = max((t for t in topics if t.mode is ApplyMode.APPLY), key=lambda t: t.partitions)
        _heading(out, f"kto describe {biggest.name}")
        _describe(out, client, biggest.name)

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

        _show_reassignment(out, client, brokers, cluster, changed)
        _show_export(out, client, reconciler, cluster)
    finally:
        close_client(client)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto demo`` to ``kto``'s sub-commands."""
    demo = commands.add_parser(
        "demo", help="run the engine against a local ZooKeeper and a simulated 6-broker cluster"
    )
    demo.add_argument("--examples", metavar="DIR", help="manifests to apply (default: manifests/examples)")
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    from topic_operator.cli.demo import run_demo

    return run_demo(sys.stdout, examples=Path(args.examples) if args.examples else None)
