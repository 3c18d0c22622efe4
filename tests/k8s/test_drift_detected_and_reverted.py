"""The KafkaCluster's drift timer: out-of-band changes are found, shown in status.drift and reverted through the
engine, forward-only (a topic grown behind our back is reported, never shrunk)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from k8s_world import World, kafka_cluster, kafka_topic, ready, wait_for_view
from kazoo.client import KazooClient

from harness.kafka_cluster import make_kafka_cluster
from harness.states import cluster_spec, spec
from harness.zookeeper import ZkChroot
from topic_operator.access.interface import ClusterUnavailableError
from topic_operator.k8s import handlers
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.reconcile import Reconciler
from topic_operator.testing.simulated_brokers import register_broker
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore

pytestmark = pytest.mark.zookeeper


def out_of_band(client: KazooClient, partitions: int, config: dict[str, str]) -> None:
    """Another tool (kafka-topics.sh, a second operator) changes the topic directly in ZooKeeper."""
    Reconciler(ZooKeeperStore(client), cluster_spec()).apply([spec("orders", partitions, 3, config)])


def test_config_drift_is_detected_and_reverted(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=3, config={"retention.ms": 86400000})

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        world.kube.status_patches.clear()
        await world.tick(cluster)  # nothing drifted: nothing written, nothing posted
        assert world.kube.status_patches == []
        out_of_band(kafka_zk, 3, {"retention.ms": "1000", "cleanup.policy": "compact"})
        wait_for_view(world, lambda state: state.topics["orders"].config.get("cleanup.policy") == "compact")
        await world.tick(cluster)

    world.run(scenario)
    assert read_cluster(kafka_zk).topics["orders"].config == {"retention.ms": "86400000"}
    assert ("Warning", "DriftDetected") in world.kube.events_of("orders")
    drift_event = next(e for e in world.kube.events if e.reason == "DriftDetected")
    assert "config.retention.ms: 1000 -> 86400000" in drift_event.message
    assert (ready(orders)["reason"], orders["status"]["driftCount"]) == ("Updated", 0)
    assert world.ctx.metrics.value("kto_drift_detected_total", cluster="team-a/main") == 1
    checks = world.ctx.metrics.value("kto_drift_check_duration_seconds_count", cluster="team-a/main")
    assert checks == 2  # one per tick: the quiet check counts as much as the one that found drift


def test_growth_behind_our_back_is_reported_not_reverted(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=3, config={"retention.ms": 86400000})

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        out_of_band(kafka_zk, 5, {"retention.ms": "86400000"})
        wait_for_view(world, lambda state: state.topics["orders"].partition_count == 5)
        await world.tick(cluster)
        await world.tick(cluster)  # a second check does not report the same drift again

    world.run(scenario)
    assert read_cluster(kafka_zk).topics["orders"].partition_count == 5
    assert orders["status"]["drift"] == [{"field": "partitions", "desired": "3", "actual": "5"}]
    assert orders["status"]["driftCount"] == 1
    assert (ready(orders)["status"], ready(orders)["reason"]) == ("False", "Invalid")
    assert world.kube.events_of("orders").count(("Warning", "DriftDetected")) == 1


def test_drift_is_only_reported_when_reverting_is_off(
    settings: OperatorSettings, world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    world.ctx.settings = dataclasses.replace(settings, revert_drift=False)
    orders = kafka_topic("orders", partitions=3)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        out_of_band(kafka_zk, 3, {"retention.ms": "1000"})
        wait_for_view(world, lambda state: state.topics["orders"].config.get("retention.ms") == "1000")
        await world.tick(cluster)

    world.run(scenario)
    assert read_cluster(kafka_zk).topics["orders"].config == {"retention.ms": "1000"}
    assert orders["status"]["drift"] == [{"field": "config.retention.ms", "actual": "1000"}]
    assert ready(orders)["reason"] == "Created"


def test_a_topic_deleted_behind_our_back_is_recreated(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=2, replicas=2)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        kafka_zk.delete("/brokers/topics/orders", recursive=True)
        kafka_zk.delete("/config/topics/orders")
        wait_for_view(world, lambda state: "orders" not in state.topics)
        await world.tick(cluster)

    world.run(scenario)
    assert read_cluster(kafka_zk).topics["orders"].partition_count == 2
    assert ready(orders)["reason"] == "Created"


def test_a_topic_refused_for_too_few_brokers_is_created_once_they_are_back(
    world: World, zk_chroot: ZkChroot, zk: KazooClient
) -> None:
    """Brokers restarting: only one registered when the KafkaTopic is handled. Kafka's refusal is the cluster's
    state, not the declaration's, so the drift round creates the topic once the brokers are back."""
    make_kafka_cluster(zk, ("a",))
    cluster = kafka_cluster("main", zk_chroot.connect_string)
    orders = kafka_topic("orders", partitions=2, replicas=3)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        assert ready(orders)["reason"] == "Invalid"
        assert "Replication factor: 3 larger than available brokers: 1." in ready(orders)["message"]
        await world.tick(cluster)  # still one broker: still refused, nothing written
        assert "orders" not in read_cluster(zk).topics
        for broker, rack in ((1, "b"), (2, "c")):
            register_broker(zk, broker, rack=rack)
        wait_for_view(world, lambda state: len(state.brokers) == 3)
        await world.tick(cluster)

    world.run(scenario)
    assert ready(orders)["reason"] == "Created"
    assert read_cluster(zk).topics["orders"].replication_factor == 3


def test_a_cluster_lost_between_its_description_and_its_drift_check_is_not_served_not_a_crash(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round describes the cluster, then reads it again to check its KafkaTopics: the cluster may go away in
    between (seen with KRaft brokers killed under the operator, whose every read is a request). That is the
    cluster's Ready=False with the reason, and a retry, not an exception out of the round."""

    async def gone(*_: Any, **__: Any) -> int:
        raise ClusterUnavailableError("no broker of b:9092 answered within 10 s")

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        monkeypatch.setattr(handlers, "check_drift", gone)
        await world.tick(cluster)

    world.run(scenario)
    assert (ready(cluster)["status"], ready(cluster)["reason"]) == ("False", "ClusterUnavailable")
    assert ready(cluster)["message"] == "no broker of b:9092 answered within 10 s; retrying"
