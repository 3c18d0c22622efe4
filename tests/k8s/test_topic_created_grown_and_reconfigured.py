"""A KafkaTopic's life through the handlers, against a real ZooKeeper: created as declared, grown, reconfigured,
and left alone when nothing changed."""

from __future__ import annotations

from typing import Any

import pytest
from k8s_world import World, kafka_topic, ready, wait_for_view
from kazoo.client import KazooClient

from topic_operator.testing.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = pytest.mark.zookeeper


def test_create_grow_and_reconfigure(world: World, cluster: dict[str, Any], kafka_zk: KazooClient) -> None:
    orders = kafka_topic("orders", partitions=3, replicas=3, config={"retention.ms": 86400000})

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        topic = read_cluster(kafka_zk).topics["orders"]
        assert topic.partition_count == 3
        assert topic.replication_factor == 3
        assert topic.config == {"retention.ms": "86400000"}
        status = orders["status"]
        assert ready(orders)["status"] == "True"
        assert ready(orders)["reason"] == "Created"
        assert (
            status["observedGeneration"],
            status["topicName"],
            status["partitions"],
            status["replicas"],
        ) == (1, "orders", 3, 3)
        assert (status["drift"], status["driftCount"], status["plan"]) == ([], 0, [])
        assert world.kube.events_of("orders") == [("Normal", "Created")]

        world.edit(orders, partitions=6)
        await world.topic_changed(orders)
        assert read_cluster(kafka_zk).topics["orders"].partition_count == 6
        assert ready(orders)["reason"] == "Updated"
        assert "partitions: 3 -> 6" in ready(orders)["message"]
        assert orders["status"]["partitions"] == 6
        assert orders["status"]["observedGeneration"] == 2

        world.edit(orders, config={"retention.ms": 3600000, "cleanup.policy": "compact"})
        await world.topic_changed(orders)
        assert read_cluster(kafka_zk).topics["orders"].config == {
            "retention.ms": "3600000",
            "cleanup.policy": "compact",
        }
        assert ready(orders)["reason"] == "Updated"
        assert world.kube.events_of("orders") == [
            ("Normal", "Created"),
            ("Normal", "Updated"),
            ("Normal", "Updated"),
        ]
        # three spec versions, one validation kept: memory per KafkaTopic, not per edit
        assert len(world.ctx.validations) == 1

        # The controller gives the topic its id; the next drift check reports it, writes nothing to Kafka and
        # posts nothing, and keeps the Ready story of the last change (Updated), which nothing has replaced.
        bring_partitions_online(kafka_zk, read_cluster(kafka_zk))
        wait_for_view(world, lambda state: state.topics["orders"].topic_id is not None)
        versions = (
            kafka_zk.exists("/brokers/topics/orders").version,
            kafka_zk.exists("/config/topics/orders").version,
        )
        await world.tick(cluster)
        assert ready(orders)["reason"] == "Updated"
        assert orders["status"]["topicId"] == read_cluster(kafka_zk).topics["orders"].topic_id is not None
        assert (
            kafka_zk.exists("/brokers/topics/orders").version,
            kafka_zk.exists("/config/topics/orders").version,
        ) == versions
        assert len(world.kube.events_of("orders")) == 3

    world.run(scenario)
    assert world.ctx.metrics.value("kto_topic_reconciles_total", cluster="team-a/main", result="applied") == 3
    assert world.ctx.metrics.value("kto_cluster_connected", cluster="team-a/main") == 0  # closed at the end


def test_many_topics_are_planned_in_one_batch(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    """Twenty KafkaTopic events arriving together make one plan/apply, not twenty."""
    topics = [kafka_topic(f"bulk-{i}", partitions=2, replicas=2) for i in range(20)]

    async def scenario() -> None:
        import asyncio

        await world.cluster_changed(cluster)
        for body in topics:
            world.add(body)
        await asyncio.gather(*(world.topic_changed(body) for body in topics))
        handle = world.ctx.clusters.get(("team-a", "main"))
        assert handle is not None
        assert handle.batcher.batches_run == 1

    world.run(scenario)
    assert {f"bulk-{i}" for i in range(20)} <= set(read_cluster(kafka_zk).topics)
    assert all(ready(body)["reason"] == "Created" for body in topics)
