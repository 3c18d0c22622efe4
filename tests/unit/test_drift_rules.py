"""The single-process drift rules (the Spark job's reference): each kind on the smallest case that shows it."""

from __future__ import annotations

from dataclasses import replace

from harness.states import cluster_state, existing, spec
from topic_operator.drift.kinds import partition_list, rejection_text, skew_bounds
from topic_operator.drift.planning import plan_cluster
from topic_operator.drift.rules import (
    BrokerLoad,
    broker_loads,
    cluster_findings,
    skew_findings,
    unobserved_finding,
)
from topic_operator.model import ClusterSpec, ClusterState, PartitionState, TopicSpec


def findings(specs: list[TopicSpec], state: ClusterState) -> list[tuple[str | None, ...]]:
    facts = plan_cluster(specs, state, ClusterSpec("main", ""), seed=0).facts
    found = cluster_findings("main", specs, state, facts)
    return [f.as_tuple()[1:8] for f in found if f.topic is not None]  # skew has tests of its own


def even(partitions: int = 6) -> dict[int, tuple[int, ...]]:
    """Replicas rotated over the 6 brokers (racks a, b, c, a, b, c): every partition on three racks."""
    return {p: (p % 6, (p + 1) % 6, (p + 2) % 6) for p in range(partitions)}


def test_in_sync_topics_have_no_findings() -> None:
    state = cluster_state(existing("orders", even(), {"retention.ms": "1000"}))
    assert findings([spec("orders", 6, 3, {"retention.ms": "1000"})], state) == []


def test_config_is_compared_as_the_planner_compares_it() -> None:
    state = cluster_state(existing("t", even(), {"cleanup.policy": "delete,compact", "retention.ms": " 7"}))
    declared = [spec("t", 6, 3, {"cleanup.policy": "compact,delete", "retention.ms": "8"})]
    assert findings(declared, state) == [
        ("t", "config_differs", "config.retention.ms", "8", " 7", "alter_config", "warning"),
    ]


def test_a_decrease_is_rejected_in_kafkas_words() -> None:
    state = cluster_state(existing("t", even()))
    facts = plan_cluster([spec("t", 3, 3)], state, ClusterSpec("main", ""), seed=0).facts
    [row] = cluster_findings("main", [spec("t", 3, 3)], state, facts)
    assert (row.kind, row.action, row.severity) == ("partitions_ahead", "rejected", "error")
    assert row.message == (
        "InvalidPartitionsException: The number of partitions for a topic can only be increased. "
        "Topic t currently has 6 partitions, 3 would not be an increase."
    )


def test_a_rejected_topic_rejects_its_config_change_too() -> None:
    state = cluster_state(existing("t", {p: r[:2] for p, r in even().items()}, {"retention.ms": "1"}))
    rows = findings([spec("t", 6, 3, {"retention.ms": "2"})], state)
    assert [(r[1], r[5]) for r in rows] == [
        ("config_differs", "rejected"),
        ("replication_factor_differs", "rejected"),
    ]


def test_health_needs_partition_states() -> None:
    assignment = even(3)
    states = {0: PartitionState(0, (0, 1), 1, 1), 1: PartitionState(-1, (), 1, 1)}
    state = cluster_state(
        existing("t", assignment), replace(existing("u", assignment), partition_states=states)
    )
    assert [(r[0], r[1], r[4]) for r in findings([spec("t", 3, 3), spec("u", 3, 3)], state)] == [
        ("u", "offline", "2"),  # partition 1 has no leader, partition 2 no state at all
        ("u", "under_replicated", "2"),  # partitions 0 and 1
    ]


def test_rack_violation_is_fewer_racks_than_replicas_and_racks_allow() -> None:
    state = cluster_state(existing("t", {0: (0, 3), 1: (0, 1)}))  # brokers 0 and 3 are both in rack-a
    assert findings([spec("t", 2, 2)], state) == [
        ("t", "rack_violation", "racks", "0", "1", "manual", "warning")
    ]
    no_racks = cluster_state(existing("t", {0: (0, 3), 1: (0, 1)}), racks=(None,) * 6)
    assert findings([spec("t", 2, 2)], no_racks) == []


def test_skew_uses_the_cluster_mean_with_a_tolerance() -> None:
    assert skew_bounds(12, 3) == (3, 5)  # mean 4, tolerance max(1, 0.4)
    assert skew_bounds(1500, 10) == (135, 165)  # mean 150, tolerance 15
    loads = [BrokerLoad("c", b, None, True, n, n) for b, n in ((0, 150), (1, 170), (2, 130))]
    rows = [(f.field, f.desired, f.actual) for f in skew_findings("c", loads)]
    assert rows == [
        ("broker.1.replicas", "135..165", "170"),
        ("broker.2.replicas", "135..165", "130"),
        ("broker.1.leaders", "135..165", "170"),
        ("broker.2.leaders", "135..165", "130"),
    ]
    assert skew_findings("c", loads[:1]) == []  # one broker cannot be skewed


def test_broker_loads_count_unregistered_brokers_apart() -> None:
    state = cluster_state(existing("t", {0: (0, 9)}), racks=("a", "b"))
    loads = broker_loads("main", state)
    assert [(b.broker, b.registered, b.replicas, b.leaders) for b in loads] == [
        (0, True, 1, 1),  # preferred leader: the snapshot has no partition states
        (1, True, 0, 0),
        (9, False, 1, 0),
    ]


def test_texts() -> None:
    assert partition_list([3, 1, 2]) == "1, 2, 3"
    assert partition_list(list(range(13))) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 3 more"
    assert rejection_text([("org.apache.kafka.common.errors.X", "a"), ("Y", "b")]) == "X: a; Y: b"
    finding = unobserved_finding("far", 3)
    assert (finding.kind, finding.desired, finding.message) == (
        "cluster_unobserved",
        "3 declared topics",
        "no snapshot rows for this cluster",
    )
