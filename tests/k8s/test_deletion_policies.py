"""Deleting a KafkaTopic: Retain never touches Kafka and carries no finalizer; Delete deletes only where the
KafkaCluster allows it; a cluster that is gone holds the finalizer only until the deletion timeout."""

from __future__ import annotations

import datetime
from typing import Any

import kopf
import pytest
from k8s_world import NOW, Clock, World, kafka_cluster, kafka_topic
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.k8s.handlers import build_registry
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = pytest.mark.zookeeper


def test_only_delete_policy_topics_get_a_finalizer() -> None:
    """kopf adds its finalizer when a deletion handler matches the object: ours matches deletionPolicy Delete
    only (and no timer or daemon is registered for KafkaTopics, since those always add one)."""
    registry = build_registry(OperatorSettings())
    needing = [h for h in registry._changing.get_all_handlers() if h.requires_finalizer]
    assert [(h.selector.any_name if h.selector else None, h.field, h.value) for h in needing] == [
        ("kafkatopics", ("spec", "deletionPolicy"), "Delete")
    ]
    assert all(
        h.selector is not None and h.selector.any_name == "kafkaclusters"
        for h in registry._spawning.get_all_handlers()
    )


def test_delete_policy_deletes_where_the_cluster_allows_it(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    cluster = kafka_cluster("main", zk_chroot.connect_string, allow_delete=True)
    doomed = kafka_topic("doomed", deletionPolicy="Delete")

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(doomed)
        await world.topic_deleted(doomed)

    world.run(scenario)
    assert kafka_zk.exists("/admin/delete_topics/doomed") is not None
    assert world.kube.events_of("doomed")[-1] == ("Normal", "Deleted")


def test_delete_policy_keeps_the_topic_where_deletion_is_not_allowed(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    kept = kafka_topic("kept", deletionPolicy="Delete")

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(kept)
        await world.topic_deleted(kept)  # returns: the finalizer is released, the topic stays

    world.run(scenario)
    assert "kept" in read_cluster(kafka_zk).topics
    assert kafka_zk.exists("/admin/delete_topics/kept") is None
    event = world.kube.events[-1]
    assert (event.type, event.reason) == ("Warning", "DeletionRefused")
    assert "allowDelete" in event.message


def test_a_gone_cluster_holds_the_finalizer_only_until_the_timeout(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient, clock: Clock
) -> None:
    stranded = kafka_topic("stranded", deletionPolicy="Delete")

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(stranded)
        await world.cluster_deleted(cluster)
        clock.now = NOW + datetime.timedelta(seconds=30)
        with pytest.raises(kopf.TemporaryError, match="not connected"):
            await world.topic_deleted(stranded, requested=NOW)
        clock.now = NOW + datetime.timedelta(seconds=61)
        await world.topic_deleted(stranded, requested=NOW)

    world.run(scenario)
    assert "stranded" in read_cluster(kafka_zk).topics
    event = world.kube.events[-1]
    assert (event.type, event.reason) == ("Warning", "FinalizerReleased")
    assert "more than 60 s" in event.message
