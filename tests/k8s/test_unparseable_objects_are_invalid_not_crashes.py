"""An object the operator cannot parse at all (a spec edited around the CRD's schema with server-side validation
off, or an old object from before a schema change) is Ready=False, reason Invalid, with a bounded message: never
a traceback, never a write to Kafka, and the other objects carry on."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import kopf
import pytest
from k8s_world import RetryLaterError, World, kafka_topic, ready
from kazoo.client import KazooClient

from topic_operator.k8s import handlers

pytestmark = pytest.mark.zookeeper


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "x"}
    for _ in range(depth):
        value = {"k": value}
    return value


Breaker = Callable[[dict[str, Any]], object]

MALFORMED: list[tuple[str, Breaker]] = [
    ("spec is a string", lambda b: b.update(spec="garbage")),
    ("spec is a list", lambda b: b.update(spec=[1, 2])),
    ("no spec", lambda b: b.pop("spec")),
    ("cluster is a number", lambda b: b["spec"].update(cluster=42)),
    ("partitions is a list", lambda b: b["spec"].update(partitions=[3])),
    ("partitions is a huge number", lambda b: b["spec"].update(partitions=10**30)),
    ("replicas is null", lambda b: b["spec"].update(replicas=None)),
    ("config is a string", lambda b: b["spec"].update(config="retention.ms=1")),
    ("config nested 100 deep", lambda b: b["spec"].update(config=_nested(100))),
    ("topicName is a mapping", lambda b: b["spec"].update(topicName={"a": 1})),
    ("topicName of 2 MB with a newline", lambda b: b["spec"].update(topicName="a\n" * 1_000_000)),
    ("replicaAssignment of strings", lambda b: b["spec"].update(replicaAssignment=[["a", "b"]])),
]
# Containers the operator reads before validating, out of shape around a valid spec: they read as empty.
ODD_CONTAINERS: list[tuple[str, Breaker]] = [
    ("annotations is a list", lambda b: b["metadata"].update(annotations=["kto.dev/paused"])),
    ("an annotation is a number", lambda b: b["metadata"].update(annotations={"kto.dev/paused": 1})),
    ("status is a string", lambda b: b.update(status="broken")),
    ("conditions are not a list", lambda b: b.update(status={"conditions": {"type": "Ready"}})),
    ("a condition is a string", lambda b: b.update(status={"conditions": ["Ready"]})),
]


@pytest.mark.parametrize("breaker", [b for _, b in MALFORMED], ids=[w for w, _ in MALFORMED])
def test_an_unparseable_topic_is_invalid_and_the_others_carry_on(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient, breaker: Breaker
) -> None:
    broken = kafka_topic("broken")
    breaker(broken)
    good = kafka_topic("good")

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        before = sorted(kafka_zk.get_children("/brokers/topics"))
        for event in (None, "MODIFIED", "DELETED"):  # kopf runs the watch-event handler on every event first
            await handlers.topic_event(body=copy.deepcopy(broken), memo=world.memo, type=event)
        await world.topic_changed(broken)
        assert sorted(kafka_zk.get_children("/brokers/topics")) == before
        await world.topic_changed(good)
        assert "good" in kafka_zk.get_children("/brokers/topics")
        await world.tick(cluster)  # the drift timer goes over both

    world.run(scenario)
    condition = ready(broken)
    assert (condition["status"], condition["reason"]) == ("False", "Invalid")
    assert 0 < len(condition["message"]) <= 2000
    assert "\n" not in condition["message"]
    assert world.kube.events_of("broken")[-1] == ("Warning", "Invalid")
    assert ready(good)["reason"] == "Created"


@pytest.mark.parametrize("breaker", [b for _, b in ODD_CONTAINERS], ids=[w for w, _ in ODD_CONTAINERS])
def test_odd_containers_around_a_valid_spec_read_as_empty(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient, breaker: Breaker
) -> None:
    topic = kafka_topic("odd")
    breaker(topic)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(topic)
        await world.tick(cluster)

    world.run(scenario)
    assert ready(topic)["reason"] == "Created"
    assert "odd" in kafka_zk.get_children("/brokers/topics")


CLUSTER_BREAKERS: list[tuple[str, Breaker]] = [
    ("spec is a string", lambda b: b.update(spec="garbage")),
    ("zookeeper is a string", lambda b: b["spec"].update(zookeeper="zk:2181")),
    ("connect is a number", lambda b: b["spec"]["zookeeper"].update(connect=2181)),
    (
        "connect with a space and a newline",
        lambda b: b["spec"]["zookeeper"].update(connect="zk 0:2181\n/kafka"),
    ),
    ("allowedTopicPrefixes is a string", lambda b: b["spec"].update(allowedTopicPrefixes="team-")),
]


@pytest.mark.parametrize("breaker", [b for _, b in CLUSTER_BREAKERS], ids=[w for w, _ in CLUSTER_BREAKERS])
def test_an_unparseable_cluster_is_reported_and_its_topics_wait(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient, breaker: Breaker
) -> None:
    breaker(cluster)
    topic = kafka_topic("orders")

    async def scenario() -> None:
        await handlers.kto_cluster_identities(
            body=copy.deepcopy(cluster), memo=world.memo, namespace="team-a", name="main"
        )
        with pytest.raises(kopf.TemporaryError):  # kopf retries it (a Secret it names may appear later)
            await world.cluster_changed(cluster)
        with pytest.raises(RetryLaterError, match="not connected"):
            await world.topic_changed(topic)
        await world.tick(cluster)

    world.run(scenario)
    condition = ready(cluster)
    assert condition["status"] == "False"
    assert "\n" not in condition["message"]
    assert ready(topic)["status"] == "False"
    assert "orders" not in kafka_zk.get_children("/brokers/topics")


def test_a_cluster_whose_status_is_out_of_shape_still_connects(world: World, cluster: dict[str, Any]) -> None:
    cluster["status"] = ["Ready"]

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.tick(cluster)

    world.run(scenario)
    assert ready(cluster)["status"] == "True"
