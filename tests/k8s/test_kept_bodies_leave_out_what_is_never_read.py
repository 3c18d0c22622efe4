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


def test_a_kept_body_is_compact_json_and_gives_back_every_value_as_it_was(world: World) -> None:
    """A claim keeps its body as JSON text (a few hundred bytes instead of a few KB of dicts), and hands back
    exactly the body the handlers worked on: integers beyond 64 bits, floats, text beyond ASCII and nesting."""
    orders = kafka_topic("orders", partitions=1, replicas=1, config={"retention.ms": 10**30, "x": 0.25})
    orders["metadata"]["labels"] = {"team": "paiements-é", "deep": "1"}
    orders["metadata"]["annotations"] = {"kto.dev/note": "ü" * 100}

    async def scenario() -> None:
        await handlers.topic_event(body=json.loads(json.dumps(orders)), memo=world.memo, type="ADDED")

    world.run(scenario)
    [claim] = list(world.ctx.claims.claims())
    assert claim.body == handlers._topic_body(orders)
    assert claim.body["spec"]["config"]["retention.ms"] == 10**30
    assert isinstance(claim.kept, str)
    assert claim.kept.isascii()
    assert claim.body is not claim.body  # each call a copy of its own: the drift check may not change a claim
