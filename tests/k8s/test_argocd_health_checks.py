"""The Argo CD health checks of manifests/argocd/, run as Lua 5.1 (the dialect of Argo CD's
gopher-lua, through lupa) on KafkaTopics and KafkaClusters whose statuses the operator wrote through its
handlers, against a real ZooKeeper."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import kopf
import lupa.lua51 as lua51
import pytest
import yaml
from k8s_world import World, kafka_cluster, kafka_topic, ready, wait_for_view
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.k8s.condition_reasons import KAFKATOPIC, REASON_GUIDES
from topic_operator.testing.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = pytest.mark.zookeeper

ARGOCD_CM = Path(__file__).resolve().parents[2] / "manifests" / "argocd" / "argocd-cm-kto-health.yaml"


def health(body: Mapping[str, Any]) -> tuple[str, str]:
    """What Argo CD shows for ``body``: its health check run with ``obj`` bound to the object, as Argo CD does."""
    script = yaml.safe_load(ARGOCD_CM.read_text())["data"][
        f"resource.customizations.health.kto.dev_{body['kind']}"
    ]
    lua = lua51.LuaRuntime()
    lua.globals().obj = lua.table_from(copy.deepcopy(dict(body)), recursive=True)
    hs = lua.execute(script)
    return str(hs["status"]), str(hs["message"])


def test_kafkatopic_health_follows_the_ready_condition_the_operator_writes(
    world: World, cluster: dict[str, Any]
) -> None:
    created = kafka_topic("orders", partitions=2, replicas=2)
    paused = kafka_topic("payments", partitions=1, replicas=1, annotations={"kto.dev/paused": "true"})
    invalid = kafka_topic("audit", partitions=1, replicas=1, config={"retention.ms": "soon"})
    conflict = kafka_topic("orders-again", topicName="orders", partitions=2, replicas=2)
    planned = kafka_topic("billing", partitions=1, replicas=1, mode="Plan")
    orphan = kafka_topic("lost", cluster="nowhere", partitions=1, replicas=1)
    unseen = kafka_topic("fresh", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        for body in (created, paused, invalid, conflict, planned, orphan):
            await world.topic_changed(body)

    world.run(scenario)
    assert health(created) == ("Healthy", f"Created: {ready(created)['message']}")
    assert health(paused)[0] == "Suspended"
    assert health(planned)[0] == "Suspended"
    assert (ready(invalid)["reason"], health(invalid)[0]) == ("Invalid", "Degraded")
    assert (ready(conflict)["reason"], health(conflict)[0]) == ("Conflict", "Degraded")
    assert (ready(orphan)["reason"], health(orphan)[0]) == ("ClusterNotFound", "Degraded")
    assert health(unseen) == ("Progressing", "Waiting for kafka-topic-operator to report on this KafkaTopic")

    world.edit(created, partitions=4)  # a new generation the operator has not handled yet
    assert health(created) == ("Progressing", "Waiting for kafka-topic-operator to reconcile generation 2")


@pytest.mark.timeout(60)
def test_a_replica_change_is_progressing_where_reassignment_is_enabled_and_degraded_where_not(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    enabled = kafka_cluster("main", zk_chroot.connect_string, reassignment={"enabled": True})
    disabled = kafka_cluster("strict", zk_chroot.connect_string)
    moving = kafka_topic("orders", partitions=2, replicas=1)
    refused = kafka_topic("payments", cluster="strict", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(enabled)
        await world.cluster_changed(disabled)
        await world.topic_changed(moving)
        await world.topic_changed(refused)
        bring_partitions_online(kafka_zk, read_cluster(kafka_zk))
        wait_for_view(world, lambda state: state.topics["orders"].topic_id is not None)
        await world.topic_changed(world.edit(moving, replicas=2))
        await world.topic_changed(world.edit(refused, replicas=3))

    world.run(scenario)
    assert (ready(moving)["reason"], health(moving)[0]) == ("Reassigning", "Progressing")
    assert (ready(refused)["reason"], health(refused)[0]) == ("NotSupported", "Degraded")


def test_every_reason_a_kafkatopic_carries_shows_as_the_page_says() -> None:
    """Each reason the operator writes on a KafkaTopic's Ready condition is shown by Argo CD as the Argo CD page's
    table says (its reasons in backticks), and the table names no reason the operator does not write (a user
    reading it looks for them)."""
    page = (ARGOCD_CM.parents[2] / "docs" / "operations" / "argo-cd.md").read_text()
    shown: dict[str, str] = {}
    for row in page.splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[1] in ("Healthy", "Progressing", "Degraded", "Suspended"):
            for word in re.findall(r"`([A-Z][A-Za-z]+)`", cells[0]):
                if word != "True":
                    shown[word] = cells[1]
    written = {g.reason.value: g for g in REASON_GUIDES if KAFKATOPIC in g.kinds and g.ready != "Event"}
    assert sorted(set(shown) - set(written)) == [], "the page names reasons the operator never writes"
    for reason, guide in sorted(written.items()):
        body = kafka_topic("orders")
        status = "True" if guide.ready == "True" else "False"
        body["status"] = {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": status, "reason": reason, "message": "m"}]}  # fmt: skip
        assert reason in shown, f"the page does not say how {reason} shows"
        assert health(body) == (shown[reason], f"{reason}: m"), reason


def test_kafkacluster_health(world: World, cluster: dict[str, Any], zk_chroot: ZkChroot) -> None:
    typo = kafka_cluster("typo", f"{zk_chroot.server_hosts}/no-such-chroot")
    unseen = kafka_cluster("fresh", zk_chroot.connect_string)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        with pytest.raises(kopf.TemporaryError):
            await world.cluster_changed(typo)

    world.run(scenario)
    assert health(cluster) == ("Healthy", f"Connected: {ready(cluster)['message']}")
    assert (ready(typo)["reason"], health(typo)[0]) == ("ChrootMissing", "Degraded")
    assert health(unseen)[0] == "Progressing"
    world.edit(cluster, allowDelete=True)
    assert health(cluster) == ("Progressing", "Waiting for kafka-topic-operator to reconcile generation 2")
