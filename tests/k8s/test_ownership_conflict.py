"""Two KafkaTopics for one topic of one Kafka cluster, in different namespaces (through two KafkaClusters that
point at the same ZooKeeper): the older owns it, the other is Conflict and writes nothing, whatever the order the
handlers run in; when the owner goes, the other takes over at the next drift check."""

from __future__ import annotations

import asyncio
import dataclasses

import kopf
import pytest
from k8s_world import Clock, FakeKubernetes, World, kafka_cluster, kafka_topic, ready
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.k8s import handlers
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = pytest.mark.zookeeper


def test_the_older_declaration_owns_the_topic_and_nothing_flip_flops(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    # Two spellings of one ensemble and chroot (a host listed twice): the same Kafka cluster.
    host, chroot = zk_chroot.connect_string.split("/", 1)
    first = kafka_cluster("main", f"{host}/{chroot}", namespace="team-a")
    second = kafka_cluster("shared", f"{host},{host}/{chroot}", namespace="team-b")
    older = kafka_topic(
        "orders", cluster="main", namespace="team-a", partitions=3, created="2025-01-01T00:00:00Z"
    )
    younger = kafka_topic(
        "orders", cluster="shared", namespace="team-b", partitions=9, created="2025-01-02T00:00:00Z"
    )

    async def scenario() -> None:
        await world.cluster_changed(first)
        await world.cluster_changed(second)
        world.add(older)
        await world.topic_changed(younger)  # the younger one is handled first, and must still lose
        await world.topic_changed(older)
        for _ in range(2):  # again, in the other order: the same verdicts
            await world.topic_changed(older)
            await world.topic_changed(younger)
        assert read_cluster(kafka_zk).topics["orders"].partition_count == 3
        assert (ready(older)["status"], ready(younger)["status"]) == ("True", "False")
        assert ready(younger)["reason"] == "Conflict"
        assert "team-a/orders" in ready(younger)["message"]
        assert (
            world.kube.events_of("orders").count(("Warning", "Conflict")) == 1
        )  # posted once, not per retry

        world.remove(older)  # the owner is deleted (Retain: the topic stays); the drift check hands over
        await world.tick(second)
        assert read_cluster(kafka_zk).topics["orders"].partition_count == 9
        assert ready(younger)["reason"] == "Adopted"  # it takes over a topic it never managed

    world.run(scenario)


def test_same_name_in_different_clusters_is_no_conflict(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    main = kafka_cluster("main", zk_chroot.connect_string)
    other = kafka_cluster("other", f"{zk_chroot.server_hosts}/another-cluster")
    a = kafka_topic("orders", cluster="main")
    b = kafka_topic("orders", cluster="other")

    async def scenario() -> None:
        await world.cluster_changed(main)
        world.add(other)  # never connected: its identity differs anyway
        world.add(b)
        await world.topic_changed(a)

    world.run(scenario)
    assert ready(a)["reason"] == "Created"


def test_at_start_no_kafkatopic_acts_before_kopfs_first_list_is_seen(
    settings: OperatorSettings, clock: Clock, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """The claims are the operator's own index, filled from the watch: until kopf's first list of KafkaTopics
    has been seen, every handler that decides ownership waits. Here the younger KafkaTopic's handler runs first,
    while the older one claiming the same topic is still to come: it must write nothing, then lose."""
    kube = FakeKubernetes()
    ctx = OperatorContext(dataclasses.replace(settings, cluster_wait=30.0), kube, kube, clock=clock)
    memo = kopf.Memo(kto=ctx)
    cluster = kafka_cluster("main", zk_chroot.connect_string)
    older = kafka_topic("orders", partitions=3, created="2025-01-01T00:00:00Z")
    younger = kafka_topic("orders-b", topicName="orders", partitions=9, created="2025-01-02T00:00:00Z")
    for body in (cluster, older, younger):
        kube.objects[("kafkatopics" if body["kind"] == "KafkaTopic" else "kafkaclusters",
                      body["metadata"]["namespace"], body["metadata"]["name"])] = body  # fmt: skip

    async def scenario() -> None:
        ctx.readiness.started()
        ctx.readiness.logged_in()
        first_lists = asyncio.create_task(ctx.readiness.run(lambda plural: kube.list_uids(plural, ())))
        identities = await handlers.kto_cluster_identities(
            body=cluster, memo=memo, namespace="team-a", name="main"
        )
        index = {key: [value] for key, value in identities.items()}
        # kopf's list: the younger one first, and its reconcile queued
        await handlers.topic_event(body=younger, memo=memo, type=None, kto_cluster_identities=index)
        cluster_patch = kopf.Patch()
        waiting = [
            asyncio.create_task(
                handlers.cluster_changed(
                    body=cluster, memo=memo, patch=cluster_patch, kto_cluster_identities=index
                )
            ),
            asyncio.create_task(handlers.topic_work(ctx).outcome("team-a", "orders-b")),
        ]
        await asyncio.sleep(0.5)
        assert not any(task.done() for task in waiting), "a handler decided before the first list was seen"
        assert "orders" not in kafka_zk.get_children("/brokers/topics")
        assert not ctx.readiness.ready
        # the rest of kopf's first list
        await handlers.topic_event(body=older, memo=memo, type=None, kto_cluster_identities=index)
        await asyncio.wait_for(asyncio.gather(*waiting), 30)
        await asyncio.wait_for(first_lists, 5)
        assert younger["status"]["conditions"][0]["reason"] == "Conflict"
        assert "orders" not in kafka_zk.get_children("/brokers/topics")
        await ctx.clusters.close()

    asyncio.run(scenario())
