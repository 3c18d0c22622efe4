"""Reconcile applies each topic's plan through the writer, re-plans topics that met a concurrent change, and
changes nothing the second time."""

import json

from kazoo.client import KazooClient

from harness.states import cluster_spec, spec
from topic_operator.kafka.errors import InvalidPartitionsError
from topic_operator.model import ApplyMode, TopicSpec
from topic_operator.reconcile import Reconciler, TopicOutcome
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore

CLUSTER = cluster_spec()


def versions(client: KazooClient) -> dict[str, int]:
    """Every topic and config znode's data version: proof that nothing was written."""
    seen = {}
    for parent in ("/brokers/topics", "/config/topics"):
        for child in client.get_children(parent):
            seen[f"{parent}/{child}"] = client.exists(f"{parent}/{child}").version
    return seen


def test_apply_then_apply_again_changes_nothing(kafka_zk: KazooClient) -> None:
    declared = [spec("orders", 6, 3, {"retention.ms": "1000"}), spec("payments", 3, 2)]
    first = Reconciler(ZooKeeperStore(kafka_zk), CLUSTER).apply(declared)
    assert [r.outcome for r in first.results] == [TopicOutcome.APPLIED, TopicOutcome.APPLIED]
    assert first.writes == 2
    before = versions(kafka_zk)
    notifications = kafka_zk.get_children("/config/changes")
    second = Reconciler(ZooKeeperStore(kafka_zk), CLUSTER).apply(declared)
    assert [r.outcome for r in second.results] == [TopicOutcome.UNCHANGED, TopicOutcome.UNCHANGED]
    assert second.writes == 0
    assert versions(kafka_zk) == before
    assert kafka_zk.get_children("/config/changes") == notifications


def test_growth_and_config_in_one_apply(kafka_zk: KazooClient) -> None:
    reconciler = Reconciler(ZooKeeperStore(kafka_zk), CLUSTER)
    reconciler.apply([spec("orders", 3, 3)])
    report = reconciler.apply([spec("orders", 5, 3, {"cleanup.policy": "compact"})])
    assert report.results[0].outcome is TopicOutcome.APPLIED
    topic = read_cluster(kafka_zk).topics["orders"]
    assert topic.partition_count == 5
    assert topic.config == {"cleanup.policy": "compact"}
    assert [
        json.loads(kafka_zk.get(f"/config/changes/{n}")[0]) for n in kafka_zk.get_children("/config/changes")
    ] == [{"version": 2, "entity_path": "topics/orders"}]


def test_a_rejected_topic_leaves_zookeeper_untouched_and_others_proceed(kafka_zk: KazooClient) -> None:
    reconciler = Reconciler(ZooKeeperStore(kafka_zk), CLUSTER)
    reconciler.apply([spec("orders", 4, 3)])
    before = versions(kafka_zk)
    report = reconciler.apply([spec("orders", 2, 3, {"retention.ms": "5"}), spec("fresh", 1, 1)])
    fresh, orders = report.results  # sorted by topic
    assert orders.outcome is TopicOutcome.REJECTED
    assert isinstance(orders.errors[0], InvalidPartitionsError)
    assert fresh.outcome is TopicOutcome.APPLIED
    after = versions(kafka_zk)
    assert {k: v for k, v in after.items() if "orders" in k} == {
        k: v for k, v in before.items() if "orders" in k
    }


def test_plan_mode_computes_but_does_not_write(kafka_zk: KazooClient) -> None:
    declared = TopicSpec("main", "preview", 3, 3, mode=ApplyMode.PLAN)
    report = Reconciler(ZooKeeperStore(kafka_zk), CLUSTER).apply([declared])
    assert report.results[0].outcome is TopicOutcome.PLANNED
    assert report.results[0].plan.actions  # the create is in the report
    assert not kafka_zk.exists("/brokers/topics/preview")


def test_a_stale_state_turns_into_a_conflict_that_is_re_planned(kafka_zk: KazooClient) -> None:
    reconciler = Reconciler(ZooKeeperStore(kafka_zk), CLUSTER)
    reconciler.apply([spec("orders", 3, 3, {"retention.ms": "1"})])
    stale = read_cluster(kafka_zk)
    # Someone else changes the config after our read (kafka-configs.sh, say).
    kafka_zk.set("/config/topics/orders", b'{"version":1,"config":{"retention.ms":"2","segment.ms":"9000"}}')
    report = reconciler.apply([spec("orders", 3, 3, {"retention.ms": "3"})], state=stale)
    [result] = report.results
    assert result.outcome is TopicOutcome.APPLIED
    assert result.attempts == 2
    assert read_cluster(kafka_zk).topics["orders"].config == {"retention.ms": "3"}
    # The re-plan saw the other writer's key and removed it on purpose: the declaration owns the set.
    assert {c.field for c in result.plan.changes} == {"config.retention.ms", "config.segment.ms"}
