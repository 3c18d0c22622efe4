"""The metrics the alerts and the dashboard read that the operator sets at each drift check: KafkaTopics
by Ready condition (``kto_topics``), drift written back (``kto_drift_reverted_total``) and when the running
reassignment began (``kto_reassignment_start_time_seconds``), through the handlers against a real ZooKeeper."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from k8s_world import NOW, World, kafka_cluster, kafka_topic, ready, wait_for_view
from kazoo.client import KazooClient

from harness.states import cluster_spec, spec
from harness.zookeeper import ZkChroot
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.reconcile import Reconciler
from topic_operator.testing.simulated_brokers import bring_partitions_online, carry_out_reassignments
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore

pytestmark = pytest.mark.zookeeper

CLUSTER = "team-a/main"


def topics(world: World, ready_label: str, reason: str) -> float:
    return world.ctx.metrics.value("kto_topics", cluster=CLUSTER, ready=ready_label, reason=reason)


def reassignment_start(world: World) -> float | None:
    return world.ctx.metrics.registry.get_sample_value(
        "kto_reassignment_start_time_seconds", {"cluster": CLUSTER}
    )


def test_kafkatopics_are_counted_by_ready_condition_at_each_drift_check(
    world: World, cluster: dict[str, Any]
) -> None:
    orders = kafka_topic("orders", partitions=2, replicas=2)
    paused = kafka_topic("payments", partitions=1, replicas=1, annotations={"kto.dev/paused": "true"})
    invalid = kafka_topic("audit", partitions=1, replicas=1, config={"retention.ms": "soon"})
    unseen = kafka_topic("billing", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        for body in (orders, paused, invalid):
            await world.topic_changed(body)
        world.add(unseen)  # created, but its handler has not run yet
        await world.tick(cluster)
        assert ready(invalid)["reason"] == "Invalid"
        assert topics(world, "true", "Created") == 1
        assert topics(world, "false", "Paused") == 1
        assert topics(world, "false", "Invalid") == 1
        assert topics(world, "unknown", "NoStatus") == 1

        paused["metadata"]["annotations"].clear()
        await world.topic_changed(paused)
        await world.tick(cluster)

    world.run(scenario)
    assert topics(world, "false", "Paused") == 0  # a reason no KafkaTopic has any more drops to 0
    assert topics(world, "true", "Created") == 2


def test_drift_written_back_is_counted_and_drift_only_reported_is_not(
    settings: OperatorSettings, world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=3, config={"retention.ms": 86400000})

    async def drift_once() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        Reconciler(ZooKeeperStore(kafka_zk), cluster_spec()).apply(
            [spec("orders", 3, 3, {"retention.ms": "1000"})]
        )
        wait_for_view(world, lambda state: state.topics["orders"].config.get("retention.ms") == "1000")
        await world.tick(cluster)

    world.run(drift_once)
    assert read_cluster(kafka_zk).topics["orders"].config == {"retention.ms": "86400000"}
    assert world.ctx.metrics.value("kto_drift_detected_total", cluster=CLUSTER) == 1
    assert world.ctx.metrics.value("kto_drift_reverted_total", cluster=CLUSTER) == 1

    world.ctx.settings = dataclasses.replace(settings, revert_drift=False)
    world.run(drift_once)
    assert world.ctx.metrics.value("kto_drift_detected_total", cluster=CLUSTER) == 2
    assert world.ctx.metrics.value("kto_drift_reverted_total", cluster=CLUSTER) == 1
    assert world.ctx.metrics.value("kto_drifted_topics", cluster=CLUSTER) == 1


@pytest.mark.timeout(60)
def test_the_start_of_a_running_reassignment_is_exported_until_it_ends(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = kafka_cluster("main", zk_chroot.connect_string, reassignment={"enabled": True})
    orders = kafka_topic("orders", partitions=2, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        bring_partitions_online(kafka_zk, read_cluster(kafka_zk))
        wait_for_view(world, lambda state: state.topics["orders"].topic_id is not None)
        await world.tick(cluster)
        assert reassignment_start(world) is None

        world.edit(orders, replicas=2)
        await world.topic_changed(orders)
        assert ready(orders)["reason"] == "Reassigning"
        await world.tick(cluster)
        assert reassignment_start(world) == NOW.timestamp()
        assert topics(world, "false", "Reassigning") == 1

        carry_out_reassignments(kafka_zk)
        wait_for_view(world, lambda state: not state.topics["orders"].reassignment_in_progress)
        await world.tick(cluster)
        assert ready(orders)["status"] == "True"

    world.run(scenario)
    assert reassignment_start(world) is None
    assert topics(world, "false", "Reassigning") == 0


def test_a_deleted_kafkacluster_leaves_no_series_behind(world: World, cluster: dict[str, Any]) -> None:
    """A gone cluster's last values would alert for ever: disconnected, and its drift checks stopped."""
    other = kafka_cluster("other", cluster["spec"]["zookeeper"]["connect"])

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.cluster_changed(other)
        await world.topic_changed(kafka_topic("orders", partitions=1, replicas=1))
        await world.tick(cluster)
        await world.tick(other)
        await world.cluster_deleted(cluster)
        exposition = world.ctx.metrics.exposition().decode()
        assert 'cluster="team-a/main"' not in exposition
        assert 'kto_cluster_connected{cluster="team-a/other"} 1.0' in exposition
        assert 'kto_drift_check_duration_seconds_count{cluster="team-a/other"} 1.0' in exposition

    world.run(scenario)
