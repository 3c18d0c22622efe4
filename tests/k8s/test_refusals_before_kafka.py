"""Refusals the operator reports without writing to Kafka: a decrease, an invalid declaration, a paused topic,
Plan mode, and a cluster that is not there. Each leaves ZooKeeper untouched and says why in status and Events."""

from __future__ import annotations

from typing import Any

import pytest
from k8s_world import World, kafka_cluster, kafka_topic, ready
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = pytest.mark.zookeeper


def znode_versions(client: KazooClient) -> dict[str, int]:
    """Every topic and config znode's version: proof that nothing was written."""
    seen = {}
    for parent in ("/brokers/topics", "/config/topics"):
        for child in client.get_children(parent):
            seen[f"{parent}/{child}"] = client.exists(f"{parent}/{child}").version
    return seen


def test_partition_decrease_is_rejected_with_kafkas_words(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=6)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        before = znode_versions(kafka_zk)
        world.edit(orders, partitions=3)
        await world.topic_changed(orders)
        assert znode_versions(kafka_zk) == before

    world.run(scenario)
    condition = ready(orders)
    assert (condition["status"], condition["reason"]) == ("False", "Invalid")
    assert condition["message"] == (
        "The number of partitions for a topic can only be increased. "
        "Topic orders currently has 6 partitions, 3 would not be an increase."
    )
    assert orders["status"]["drift"] == [{"field": "partitions", "desired": "3", "actual": "6"}]
    assert orders["status"]["driftCount"] == 1
    assert (
        orders["status"]["plan"][0]["kafka_class"]
        == "org.apache.kafka.common.errors.InvalidPartitionsException"
    )
    assert world.kube.events_of("orders")[-1] == ("Warning", "Invalid")


def test_replication_factor_change_is_not_supported(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=3, replicas=2)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        world.edit(orders, replicas=3)
        await world.topic_changed(orders)

    world.run(scenario)
    assert ready(orders)["reason"] == "NotSupported"
    assert read_cluster(kafka_zk).topics["orders"].replication_factor == 2


def test_an_invalid_declaration_names_the_field(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    bad = kafka_topic("orders", config={"retention.ms": "soon"})

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(bad)

    world.run(scenario)
    condition = ready(bad)
    assert (condition["status"], condition["reason"]) == ("False", "Invalid")
    assert condition["message"].startswith("spec.config.retention.ms: ")
    assert "orders" not in read_cluster(kafka_zk).topics
    assert world.kube.events_of("orders") == [("Warning", "Invalid")]


def test_a_paused_topic_is_not_touched_until_resumed(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=3, annotations={"kto.dev/paused": "true"})

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        assert "orders" not in read_cluster(kafka_zk).topics
        assert (ready(orders)["status"], ready(orders)["reason"]) == ("False", "Paused")
        orders["metadata"]["annotations"]["kto.dev/paused"] = "false"
        await world.topic_changed(orders)

    world.run(scenario)
    assert read_cluster(kafka_zk).topics["orders"].partition_count == 3
    assert ready(orders)["reason"] == "Created"


def test_plan_mode_reports_the_plan_and_changes_nothing(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic(
        "orders", partitions=4, replicas=2, config={"cleanup.policy": "compact"}, mode="Plan"
    )

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)

    world.run(scenario)
    assert "orders" not in read_cluster(kafka_zk).topics
    condition = ready(orders)
    assert (condition["status"], condition["reason"]) == ("False", "Planned")
    (action,) = orders["status"]["plan"]
    assert action["type"] == "create"
    assert action["config"] == {"cleanup.policy": "compact"}
    assert sorted(action["assignment"]) == ["0", "1", "2", "3"]
    assert {row["field"] for row in orders["status"]["drift"]} == {
        "partitions",
        "replicas",
        "config.cleanup.policy",
    }
    assert world.kube.events_of("orders") == [("Normal", "Planned")]


def test_a_topic_of_a_cluster_that_does_not_exist_waits_for_it(
    world: World, kafka_zk: KazooClient, zk_chroot: ZkChroot
) -> None:
    """ClusterNotFound, naming the namespace looked in; nothing written, no retry: the KafkaCluster's arrival
    reconciles it."""
    orphan = kafka_topic("orders", cluster="nowhere")
    elsewhere = kafka_topic("payments", cluster="platform/main")

    async def scenario() -> None:
        await world.topic_changed(orphan)
        await world.topic_changed(elsewhere)

    world.run(scenario)
    assert (ready(orphan)["status"], ready(orphan)["reason"]) == ("False", "ClusterNotFound")
    assert "No KafkaCluster nowhere in namespace team-a" in ready(orphan)["message"]
    assert (
        "No KafkaCluster main in namespace platform (spec.cluster: platform/main)"
        in ready(elsewhere)["message"]
    )
    assert "orders" not in read_cluster(kafka_zk).topics

    cluster = kafka_cluster("nowhere", zk_chroot.connect_string)
    world.run(lambda: world.cluster_changed(cluster))
    world.run(lambda: world.tick(cluster))
    assert ready(orphan)["reason"] == "Created"
    assert "orders" in read_cluster(kafka_zk).topics
