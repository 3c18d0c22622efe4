"""The operator's side of a replica change, through the handlers against a real ZooKeeper with the
simulated controller: Ready=False, reason Reassigning, with progress; a change made mid-way queued, never a
second concurrent reassignment; Ready again, throttles removed, once Kafka is done."""

from __future__ import annotations

import json
from typing import Any

import pytest
from k8s_world import World, kafka_cluster, kafka_topic, ready, wait_for_view
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.testing.simulated_brokers import bring_partitions_online, carry_out_reassignments
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = pytest.mark.zookeeper

RATE = "leader.replication.throttled.rate"


def _rates(client: KazooClient) -> dict[int, str]:
    found = {}
    for child in client.get_children("/config/brokers"):
        config = json.loads(client.get(f"/config/brokers/{child}")[0])["config"]
        if RATE in config:
            found[int(child)] = config[RATE]
    return found


@pytest.mark.timeout(60)
def test_a_replication_factor_change_is_reported_while_kafka_moves_the_replicas(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = kafka_cluster(
        "main", zk_chroot.connect_string, reassignment={"enabled": True, "throttleBytesPerSecond": 1048576}
    )
    orders = kafka_topic("orders", partitions=3, replicas=1)
    others = kafka_topic("payments", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        await world.topic_changed(others)
        bring_partitions_online(kafka_zk, read_cluster(kafka_zk))
        wait_for_view(world, lambda state: state.topics["orders"].topic_id is not None)

        world.edit(orders, replicas=3)
        await world.topic_changed(orders)
        assert ready(orders)["status"] == "False"
        assert ready(orders)["reason"] == "Reassigning"
        assert "started moving 3 partitions, throttled at 1048576 B/s" in ready(orders)["message"]
        assert world.kube.events_of("orders")[-1] == ("Normal", "Reassigning")
        request = kafka_zk.get("/admin/reassign_partitions")
        assert set(_rates(kafka_zk).values()) == {"1048576"}

        # the controller has started: the timer reports the moves still in flight, and other topics go on
        carry_out_reassignments(kafka_zk, finish=False)
        wait_for_view(world, lambda state: any(state.topics["orders"].adding_replicas.values()))
        await world.tick(cluster)
        assert ready(orders)["reason"] == "Reassigning"
        assert "3 partitions still moving: p0: [" in ready(orders)["message"]
        world.edit(others, config={"retention.ms": 1000})
        await world.topic_changed(others)
        assert ready(others)["reason"] == "Updated"

        # a change declared mid-way waits for the running one
        world.edit(orders, replicas=2)
        await world.topic_changed(orders)
        assert ready(orders)["reason"] == "Reassigning"
        assert "then: replicas: 3 -> 2 (queued until this one is done)" in ready(orders)["message"]
        assert kafka_zk.get("/admin/reassign_partitions")[1].version == request[1].version

        # done: the queued decrease starts, then, once that is done too, the throttles go and Ready is back
        carry_out_reassignments(kafka_zk)
        wait_for_view(world, lambda state: not state.topics["orders"].reassignment_in_progress)
        await world.tick(cluster)
        assert ready(orders)["reason"] == "Reassigning"
        assert "started moving 3 partitions" in ready(orders)["message"]
        carry_out_reassignments(kafka_zk)
        wait_for_view(world, lambda state: not state.topics["orders"].reassignment_in_progress)
        await world.tick(cluster)
        assert ready(orders)["status"] == "True"
        assert ready(orders)["reason"] == "Updated"
        topic = read_cluster(kafka_zk).topics["orders"]
        assert topic.replication_factor == 2
        assert topic.config == {}
        assert _rates(kafka_zk) == {}
        assert orders["status"]["replicas"] == 2

    world.run(scenario)


@pytest.mark.timeout(60)
def test_without_the_setting_a_replica_change_stays_not_supported(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        world.edit(orders, replicas=3)
        await world.topic_changed(orders)
        assert ready(orders)["reason"] == "NotSupported"
        assert "spec.reassignment.enabled: true" in ready(orders)["message"]
        assert kafka_zk.exists("/admin/reassign_partitions") is None

    world.run(scenario)
