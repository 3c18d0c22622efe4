"""When the operator starts, kopf resumes every KafkaTopic. One already settled at its spec costs nothing (no
validation, no plan, no write): the KafkaCluster's drift check, which runs at start too, finds and reverts what
changed in Kafka meanwhile. Any other KafkaTopic is reconciled. Against a real ZooKeeper."""

from __future__ import annotations

from typing import Any

import pytest
from k8s_world import World, kafka_topic, ready
from kazoo.client import KazooClient

from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.znodes import TopicConfigZNode

pytestmark = pytest.mark.zookeeper


def test_a_settled_topic_resumes_for_free_and_the_drift_check_reverts_what_changed_meanwhile(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=2, replicas=1, config={"retention.ms": 1000})
    paused = kafka_topic("paused", partitions=1, replicas=1, annotations={"kto.dev/paused": "true"})

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        await world.topic_changed(paused)
        assert ready(orders)["reason"] == "Created"
        assert ready(paused)["reason"] == "Paused"

        # The operator is away; someone alters the config by hand, and the pause is lifted.
        kafka_zk.set(TopicConfigZNode.path("orders"), TopicConfigZNode.encode({"retention.ms": "5"}))
        del paused["metadata"]["annotations"]["kto.dev/paused"]

        uid = orders["metadata"]["uid"]
        validated = world.ctx.validations.get(uid)
        assert validated is not None
        settled = await world.topic_resumed(orders)
        assert dict(settled) == {}  # nothing to write
        assert world.ctx.validations.get(uid) is validated  # nor validated again
        unsettled = await world.topic_resumed(paused)
        assert dict(unsettled) != {}
        assert ready(paused)["reason"] == "Created"

        await world.tick(cluster)  # the drift check at start

    world.run(scenario)
    assert read_cluster(kafka_zk).topics["orders"].config == {"retention.ms": "1000"}
    assert world.kube.events_of("orders") == [
        ("Normal", "Created"),
        ("Warning", "DriftDetected"),
        ("Normal", "Updated"),
    ]
