"""The operator keeps one validation per KafkaTopic, however many there are: a cache smaller than the KafkaTopics
misses on every read of a drift check (it walks them all in the same order), and at 50,006 KafkaTopics against
50,000 places a check validated the whole cluster again and took 11 s instead of 3. Against a real ZooKeeper."""

from __future__ import annotations

from typing import Any

import pytest
from k8s_world import World, kafka_topic

from topic_operator.k8s import handlers
from topic_operator.k8s.process.lru import Lru

pytestmark = pytest.mark.zookeeper

TOPICS = 5


def test_validations_make_room_for_every_kafkatopic_and_go_with_it(
    world: World, cluster: dict[str, Any]
) -> None:
    world.ctx.validations = Lru(2)  # fewer places than KafkaTopics, as 50,000 were against 50,006
    bodies = [kafka_topic(f"t{i}", partitions=1, replicas=1) for i in range(TOPICS)]

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        for body in bodies:
            await world.topic_changed(body)
        assert len(world.ctx.validations) == TOPICS
        await world.tick(cluster)  # a drift check reads every validation
        assert len(world.ctx.validations) == TOPICS
        gone = bodies[0]
        await handlers.topic_event(body=gone, memo=world.memo, type="DELETED")
        assert world.ctx.validations.get(gone["metadata"]["uid"]) is None
        assert len(world.ctx.validations) == TOPICS - 1

    world.run(scenario)


def test_an_lru_holds_what_it_is_given_room_for() -> None:
    cache: Lru[str, int] = Lru(1)
    cache.make_room_for(3)
    for key in "abc":
        cache.put(key, 1)
    assert [cache.get(k) for k in "abc"] == [1, 1, 1]
    cache.make_room_for(2)  # room is never taken back
    cache.put("d", 1)
    assert len(cache) == 3
    assert cache.get("a") is None
    cache.drop("d")
    cache.drop("never there")
    assert len(cache) == 2
