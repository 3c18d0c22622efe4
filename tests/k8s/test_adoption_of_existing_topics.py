"""A KafkaTopic declared for a topic that already exists adopts it: never re-created or re-placed, brought
to the declaration forward-only as any update, said once as Adopted with what changed; in mode: Plan, what adopting
would change, with nothing written. Against a real ZooKeeper."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from k8s_world import World, kafka_topic, ready
from kazoo.client import KazooClient

from harness.states import cluster_spec, spec
from topic_operator.reconcile import Reconciler
from topic_operator.zookeeper.store import ZooKeeperStore

pytestmark = pytest.mark.zookeeper


def _declared_after_it() -> str:
    """A creationTimestamp after the topic existed (whole seconds, as the API server stamps it): the KafkaTopic
    was declared for a topic that was already there."""
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=1)
    return later.strftime("%Y-%m-%dT%H:%M:%SZ")


def _assignment(kafka_zk: KazooClient, topic: str) -> dict[str, list[int]]:
    data, _ = kafka_zk.get(f"/brokers/topics/{topic}")
    return dict(json.loads(data)["partitions"])


def _versions(kafka_zk: KazooClient, topic: str) -> tuple[int, int]:
    return (
        kafka_zk.exists(f"/brokers/topics/{topic}").version,
        kafka_zk.exists(f"/config/topics/{topic}").version,
    )


def _reconcile_once(world: World, cluster: dict[str, Any], topic: dict[str, Any]) -> None:
    """The KafkaCluster seen, then one reconcile of the KafkaTopic."""

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(topic)

    world.run(scenario)


def test_an_existing_topic_is_adopted_grown_and_reconfigured_but_never_re_placed(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    Reconciler(ZooKeeperStore(kafka_zk), cluster_spec()).apply(
        [spec("legacy", 3, 2, {"retention.ms": "1000"}), spec("scripted", 1, 1)]
    )
    placed = _assignment(kafka_zk, "legacy")
    legacy = kafka_topic(
        "legacy", partitions=6, replicas=2, config={"retention.ms": 2000}, created=_declared_after_it()
    )

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(legacy)
        assert (ready(legacy)["status"], ready(legacy)["reason"]) == ("True", "Adopted")
        assert ready(legacy)["message"].startswith("Adopted existing topic legacy: ")
        assert "partitions: 3 -> 6" in ready(legacy)["message"]
        assert "config.retention.ms: 1000 -> 2000" in ready(legacy)["message"]

        # Said once: a reconcile that changes nothing keeps the story, a later change is an update.
        await world.topic_changed(legacy)
        assert ready(legacy)["reason"] == "Adopted"
        world.edit(legacy, config={"retention.ms": 3000})
        await world.topic_changed(legacy)
        assert ready(legacy)["reason"] == "Updated"
        await world.cluster_changed(cluster)

    world.run(scenario)
    grown = _assignment(kafka_zk, "legacy")
    assert {p: grown[p] for p in placed} == placed  # the existing partitions kept their replicas
    assert len(grown) == 6
    assert world.kube.events_of("legacy") == [("Normal", "Adopted"), ("Normal", "Updated")]
    assert cluster["status"]["unmanagedTopics"] == ["scripted"]  # what is still unmanaged stays listed
    assert cluster["status"]["topics"] == {"managed": 1, "unmanaged": 1}


def test_adoption_removes_the_overrides_the_kafkatopic_does_not_declare(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    """What the adoption pages warn of: by default the declarations own every key, so an override set by hand
    and left out of the KafkaTopic is gone once the topic is adopted."""
    Reconciler(ZooKeeperStore(kafka_zk), cluster_spec()).apply(
        [spec("legacy", 2, 1, {"cleanup.policy": "compact", "retention.ms": "1000"})]
    )
    legacy = kafka_topic(
        "legacy", partitions=2, replicas=1, config={"cleanup.policy": "compact"}, created=_declared_after_it()
    )

    _reconcile_once(world, cluster, legacy)
    assert (ready(legacy)["status"], ready(legacy)["reason"]) == ("True", "Adopted")
    assert "retention.ms" in ready(legacy)["message"]
    data, _ = kafka_zk.get("/config/topics/legacy")
    assert json.loads(data)["config"] == {"cleanup.policy": "compact"}


def test_a_topic_already_as_declared_is_adopted_with_nothing_written(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    Reconciler(ZooKeeperStore(kafka_zk), cluster_spec()).apply(
        [spec("legacy", 2, 1, {"cleanup.policy": "compact"})]
    )
    before = _versions(kafka_zk, "legacy")
    legacy = kafka_topic(
        "legacy", partitions=2, replicas=1, config={"cleanup.policy": "compact"}, created=_declared_after_it()
    )

    _reconcile_once(world, cluster, legacy)
    assert (ready(legacy)["status"], ready(legacy)["reason"]) == ("True", "Adopted")
    assert "already matched the declaration" in ready(legacy)["message"]
    assert _versions(kafka_zk, "legacy") == before


def test_adoption_in_plan_mode_shows_what_it_would_change_and_writes_nothing(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    Reconciler(ZooKeeperStore(kafka_zk), cluster_spec()).apply([spec("legacy", 3, 2)])
    before = _versions(kafka_zk, "legacy")
    legacy = kafka_topic("legacy", partitions=4, replicas=2, config={"retention.ms": 5000}, mode="Plan")

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(legacy)
        assert (ready(legacy)["status"], ready(legacy)["reason"]) == ("False", "Planned")
        assert ready(legacy)["message"].startswith(
            "mode: Plan: adopting existing topic legacy would apply 2 "
        )
        assert {item["type"] for item in legacy["status"]["plan"]} == {"add_partitions", "alter_config"}
        assert _versions(kafka_zk, "legacy") == before

        # Applying later is the adoption itself.
        world.edit(legacy, mode="Apply")
        await world.topic_changed(legacy)
        assert (ready(legacy)["status"], ready(legacy)["reason"]) == ("True", "Adopted")

    world.run(scenario)
    assert len(_assignment(kafka_zk, "legacy")) == 4
    assert world.kube.events_of("legacy") == [("Normal", "Planned"), ("Normal", "Adopted")]


def test_a_topic_the_operator_created_is_created_not_adopted(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    fresh = kafka_topic("fresh", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(fresh)
        await world.topic_changed(fresh)

    world.run(scenario)
    assert ready(fresh)["reason"] == "Created"
    assert world.kube.events_of("fresh") == [("Normal", "Created")]


def test_a_topic_created_by_an_attempt_whose_record_was_lost_is_said_created_with_nothing_written(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    # The KafkaTopic was declared, an attempt created its topic, and the status and Event of that attempt never
    # landed (the API server went away, the leader Lease was lost): the topic is younger than the KafkaTopic,
    # which has no status at all.
    fresh = kafka_topic("fresh", partitions=2, replicas=1, config={"retention.ms": 5000})
    Reconciler(ZooKeeperStore(kafka_zk), cluster_spec()).apply(
        [spec("fresh", 2, 1, {"retention.ms": "5000"})]
    )
    before = _versions(kafka_zk, "fresh")

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(fresh)
        assert (ready(fresh)["status"], ready(fresh)["reason"]) == ("True", "Created")
        assert "the status of the attempt that created it was lost" in ready(fresh)["message"]
        await world.topic_changed(fresh)  # kept
        assert ready(fresh)["reason"] == "Created"

    world.run(scenario)
    # No Event: the lost attempt's may have landed, and an Event is better lost than said twice.
    assert world.kube.events_of("fresh") == []
    assert _versions(kafka_zk, "fresh") == before
