"""Each KafkaTopic's claim keeps its body for the drift timer for as long as the KafkaTopic exists: without the
API server's managedFields and kopf's status records, which nothing reads, and the drift check still works from
it. Against a real ZooKeeper."""

from __future__ import annotations

import json
from typing import Any

import pytest
from k8s_world import World, kafka_topic, ready
from kazoo.client import KazooClient

from topic_operator.k8s import handlers
from topic_operator.zookeeper.znodes import TopicConfigZNode

pytestmark = pytest.mark.zookeeper

MANAGED_FIELDS = [
    {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "kto.dev/v1alpha1",
     "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {f"f:{k}": {} for k in ("cluster", "partitions", "replicas")}}},
]  # fmt: skip


def test_the_kept_body_has_no_managed_fields_and_no_kopf_records(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    orders = kafka_topic("orders", partitions=1, replicas=1, config={"retention.ms": 1000})
    orders["metadata"]["managedFields"] = MANAGED_FIELDS

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        await world.topic_changed(orders)
        # kopf's records, as its status storage writes them next to ours (the handlers here run without kopf)
        orders["status"]["kopf"] = {
            "last-handled-configuration": '{"spec":{"cluster":"main","partitions":1}}'
        }
        await world.indices()  # the status patch comes back as a watch event
        [claim] = list(world.ctx.claims.claims())
        assert "managedFields" not in claim.body["metadata"]
        assert "kopf" not in claim.body["status"]
        assert claim.body["status"]["conditions"] == orders["status"]["conditions"]
        assert orders["metadata"]["managedFields"] == MANAGED_FIELDS  # kopf's body is not touched

        kafka_zk.set(TopicConfigZNode.path("orders"), TopicConfigZNode.encode({"retention.ms": "5"}))
        await world.tick(cluster)  # the drift check reads the kept body: found and reverted

    world.run(scenario)
    assert world.kube.events_of("orders")[-2:] == [("Warning", "DriftDetected"), ("Normal", "Updated")]
    assert ready(orders)["reason"] == "Updated"


def test_kept_bodies_share_their_keys_and_short_values(world: World) -> None:
    """Each body comes from its own JSON decoding, with its own strings; the kept copies share them."""
    text = json.dumps(kafka_topic("orders", partitions=1, replicas=1, config={"retention.ms": 1000}))

    async def scenario() -> None:
        for name in ("one", "two"):
            body = json.loads(text)
            body["metadata"]["name"] = name
            await handlers.topic_event(body=body, memo=world.memo, type="ADDED")

    world.run(scenario)
    one, two = sorted(world.ctx.claims.claims(), key=lambda claim: claim.name)
    assert one.body["spec"] == two.body["spec"] == json.loads(text)["spec"]
    for first, second in ((one.body, two.body), (one.body["spec"], two.body["spec"])):
        assert [id(key) for key in first] == [id(key) for key in second]
    assert one.body["spec"]["cluster"] is two.body["spec"]["cluster"]
