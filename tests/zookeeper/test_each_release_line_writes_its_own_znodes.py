"""On a real ZooKeeper, a cluster of each release line gets the topic znodes its controller reads: version 1 up to
2.3, 2 up to 2.7 (with the adding/removing maps), 3 from 2.8; the controller of 2.8+ adds the topic id, and a
later rewrite keeps the format and every field the znode holds (kafka-versions.md d.1, d.2)."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from harness.kafka_cluster import CLUSTER_ID, SIX_BROKERS_THREE_RACKS
from topic_operator.kafka.releases import format_version
from topic_operator.model import ClusterSpec, TopicSpec
from topic_operator.reconcile import Reconciler, TopicOutcome
from topic_operator.testing.simulated_brokers import (
    bootstrap_cluster,
    bring_partitions_online,
    register_brokers,
)
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore
from topic_operator.zookeeper.znodes import BrokerIdZNode, ControllerZNode, TopicZNode

LINES = [(2, 0), (2, 3), (2, 4), (2, 7), (2, 8), (3, 4), (3, 9)]


def topic_json(zk: KazooClient, topic: str) -> dict[str, object]:
    data, _ = zk.get(TopicZNode.path(topic))
    document = json.loads(data)
    assert isinstance(document, dict)
    return document


def apply(zk: KazooClient, version: tuple[int, int], partitions: int) -> None:
    reconciler = Reconciler(ZooKeeperStore(zk), ClusterSpec("test", "", kafka_version=version))
    report = reconciler.apply([TopicSpec("test", "orders", partitions, 3, {"retention.ms": "1000"})])
    assert [r.outcome for r in report.results] == [TopicOutcome.APPLIED], report.results


@pytest.mark.parametrize("version", LINES, ids=[format_version(v) for v in LINES])
def test_a_topic_is_created_and_grown_in_the_lines_format(zk: KazooClient, version: tuple[int, int]) -> None:
    bootstrap_cluster(zk, CLUSTER_ID)
    register_brokers(zk, SIX_BROKERS_THREE_RACKS, kafka_version=version)
    registration = json.loads(zk.get(BrokerIdZNode.path(0))[0])
    assert registration["version"] == (5 if version >= (2, 7) else 4)
    controller = json.loads(zk.get(ControllerZNode.path)[0])
    assert controller["version"] == (2 if version >= (3, 4) else 1)

    apply(zk, version, 3)
    expected = 1 if version < (2, 4) else 2 if version < (2, 8) else 3
    created = topic_json(zk, "orders")
    assert created["version"] == expected
    assert ("adding_replicas" in created) is (expected >= 2)
    assert "topic_id" not in created  # the controller gives it one, from 2.8 (as kafka-topics.sh relied on)

    bring_partitions_online(zk, read_cluster(zk), kafka_version=version)
    with_id = topic_json(zk, "orders")
    assert ("topic_id" in with_id) is (version >= (2, 8))

    apply(zk, version, 5)
    grown = topic_json(zk, "orders")
    assert grown["version"] == expected
    assert sorted(grown["partitions"]) == ["0", "1", "2", "3", "4"]  # type: ignore[call-overload]
    assert grown.get("topic_id") == with_id.get("topic_id")
    state = read_cluster(zk)
    assert state.topics["orders"].format_version == expected


def test_a_topic_id_a_newer_controller_wrote_is_kept_by_an_older_declaration(zk: KazooClient) -> None:
    """Declared 2.7, but a 2.8+ controller gave the topic its id: growing it rewrites version 3 with the id, not
    version 2 without it (a controller would then give the topic a second id)."""
    bootstrap_cluster(zk, CLUSTER_ID)
    register_brokers(zk, SIX_BROKERS_THREE_RACKS, kafka_version=(2, 8))
    apply(zk, (2, 8), 3)
    bring_partitions_online(zk, read_cluster(zk), kafka_version=(2, 8))
    topic_id = topic_json(zk, "orders")["topic_id"]
    apply(zk, (2, 7), 4)
    grown = topic_json(zk, "orders")
    assert grown["version"] == 3
    assert grown["topic_id"] == topic_id
