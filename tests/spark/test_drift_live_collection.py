"""Live collection: Spark tasks read two real ZooKeeper servers, each made to look like a Kafka cluster, one task
per cluster, and the job plans against what they read -- the same rows ``kto snapshot`` writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kazoo.client import KazooClient
from pyspark.sql import SparkSession

from harness.kafka_cluster import make_kafka_cluster
from harness.zookeeper import close_client, create_chroot, new_client
from topic_operator.drift.command import main
from topic_operator.model import ClusterSpec, TopicSpec
from topic_operator.plan import plan
from topic_operator.plan_output import cluster_problems, plan_to_dict, writes_to_dict
from topic_operator.reconcile import Reconciler
from topic_operator.snapshot_rows import rows_from_cluster
from topic_operator.testing.local_server import LocalZooKeeper, free_port
from topic_operator.testing.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore

pytestmark = pytest.mark.zookeeper


def kafka_like(server: LocalZooKeeper, name: str, topics: list[TopicSpec]) -> KazooClient:
    """``/kafka`` on ``server`` with 6 registered brokers (owned by the returned client's session) and
    ``topics`` created through the engine, partitions brought online as a controller would."""
    admin = new_client(server.connect_string)
    create_chroot(admin, "/kafka")
    close_client(admin)
    client = new_client(f"{server.connect_string}/kafka")
    make_kafka_cluster(client)
    Reconciler(ZooKeeperStore(client), ClusterSpec(name, f"{server.connect_string}/kafka")).apply(topics)
    bring_partitions_online(client, read_cluster(client))
    return client


@pytest.fixture(scope="module")
def two_clusters() -> Iterator[dict[str, tuple[LocalZooKeeper, KazooClient]]]:
    with LocalZooKeeper() as first, LocalZooKeeper() as second:
        clients = {
            "blue": (
                first,
                kafka_like(
                    first, "blue", [TopicSpec("blue", "orders", 3, 3), TopicSpec("blue", "audit", 1, 2)]
                ),
            ),
            "green": (second, kafka_like(second, "green", [TopicSpec("green", "clicks", 2, 3)])),
        }
        try:
            yield clients
        finally:
            for _, client in clients.values():
                close_client(client)


def documents(
    clusters: dict[str, tuple[LocalZooKeeper, KazooClient]], unreachable_port: int
) -> list[dict[str, object]]:
    inventory: list[dict[str, object]] = [
        {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"name": name},
         "spec": {"zookeeper": {"connect": f"{server.connect_string}/kafka"}}}
        for name, (server, _) in sorted(clusters.items())
    ]  # fmt: skip
    inventory.append(
        {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"name": "gone"},
         "spec": {"zookeeper": {"connect": f"127.0.0.1:{unreachable_port}/kafka"}}}
    )  # fmt: skip
    return inventory


def topic(cluster: str, name: str, partitions: int, replicas: int) -> dict[str, object]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "namespace": cluster},
        "spec": {"cluster": cluster, "partitions": partitions, "replicas": replicas},
    }


def live_inputs(clusters: dict[str, tuple[LocalZooKeeper, KazooClient]], work: Path) -> tuple[Path, Path]:
    """The inventory (both clusters and one nobody answers at) and the declared topics: orders grown, audit in
    sync, payments missing, clicks unmanaged."""
    inventory = work / "clusters.yaml"
    inventory.write_text(yaml.safe_dump_all(documents(clusters, free_port())))
    desired = work / "topics.yaml"
    declared = [topic("blue", "orders", 6, 3), topic("blue", "audit", 1, 2), topic("green", "payments", 3, 3)]
    desired.write_text(yaml.safe_dump_all(declared))
    return inventory, desired


def test_live_read_of_two_clusters_through_the_job(
    spark: SparkSession,
    two_clusters: dict[str, tuple[LocalZooKeeper, KazooClient]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    inventory, desired = live_inputs(two_clusters, tmp_path)
    out = tmp_path / "out"
    argv = [
        "--desired",
        str(desired),
        "--clusters",
        str(inventory),
        "--out",
        str(out),
        "--zookeeper-timeout",
        "2",
    ]
    assert main(argv) == 2
    assert "cluster gone not read" in capsys.readouterr().err

    rows = {(r.cluster, r.topic, r.kind) for r in spark.read.parquet(str(out / "drift.parquet")).collect()}
    assert ("blue", "orders", "partitions_behind") in rows
    assert ("green", "payments", "missing") in rows
    assert ("green", "clicks", "unmanaged") in rows
    assert ("gone", None, "cluster_unobserved") in rows
    assert not {r for r in rows if r[1] == "audit"}  # in sync

    # What the tasks read is what kto snapshot reads, and the plan is what kto plan computes from it.
    for name, (_, client) in two_clusters.items():
        state = read_cluster(client, partition_states=True)
        saved = [
            json.loads(line)
            for p in sorted((out / "snapshots").glob(f"cluster={name}/*"))
            if p.suffix != ".crc"
            for line in p.read_text().splitlines()
        ]
        fresh = rows_from_cluster(name, state, "t")

        def untimed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return sorted(
                ({k: v for k, v in r.items() if k != "taken_at"} for r in rows),
                key=lambda r: r["topic"] or "",
            )

        assert untimed(saved) == untimed(fresh)
        from topic_operator.manifests.loader import load_manifests

        specs = load_manifests([desired]).topics_of(name)
        cluster = ClusterSpec(name, f"{two_clusters[name][0].connect_string}/kafka")
        assert json.loads((out / "plans" / f"{name}.json").read_text()) == {
            **plan_to_dict(plan(specs, state, cluster)),
            **cluster_problems(state, cluster.kafka_version),
            "writes": writes_to_dict(state),
        }
    summary = json.loads((out / "summary.json").read_text())
    gone = next(c for c in summary["clusters"] if c["name"] == "gone")
    assert gone["observed"] is False
    assert "ZooKeeper" in (gone["unobserved_reason"] or "")
