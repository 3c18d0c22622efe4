"""The pure builders behind every status the operator writes: conditions keep their transition time while their
status holds, each engine outcome maps to one Ready reason, drift rows and plans have a fixed shape."""

from __future__ import annotations

import datetime

from topic_operator.k8s.conditions import READY, Condition, Reason, merge_conditions
from topic_operator.k8s.status import (
    cluster_status,
    drift_rows,
    plan_items,
    ready_for_outcome,
    same_status,
    topic_status,
)
from topic_operator.kafka.errors import InvalidPartitionsError, InvalidReplicationFactorError
from topic_operator.model import Broker, ClusterState, TopicState
from topic_operator.plan import AlterConfig, Change, TopicPlan, TopicStatus
from topic_operator.reconcile import TopicOutcome

T0 = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
T1 = T0 + datetime.timedelta(minutes=5)


def test_transition_time_moves_only_when_the_status_changes() -> None:
    first = merge_conditions(None, Condition(READY, True, Reason.CREATED, "created"), T0)
    assert first == [
        {
            "type": "Ready",
            "status": "True",
            "reason": "Created",
            "message": "created",
            "lastTransitionTime": "2025-01-01T00:00:00Z",
        }
    ]
    same_status_new_reason = merge_conditions(first, Condition(READY, True, Reason.IN_SYNC, "in sync"), T1)
    assert same_status_new_reason[0]["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert same_status_new_reason[0]["reason"] == "InSync"
    flipped = merge_conditions(same_status_new_reason, Condition(READY, False, Reason.PAUSED), T1)
    assert flipped[0]["lastTransitionTime"] == "2025-01-01T00:05:00Z"


def test_other_condition_types_are_kept() -> None:
    merged = merge_conditions(
        [{"type": "Custom", "status": "True"}], Condition(READY, None, Reason.PAUSED), T0
    )
    assert [(c["type"], c["status"]) for c in merged] == [("Custom", "True"), ("Ready", "Unknown")]


def _plan(status: TopicStatus, *changes: Change, rejections=(), actions=()) -> TopicPlan:
    return TopicPlan("c", "orders", status, tuple(actions), changes, tuple(rejections))


def test_each_outcome_has_its_ready_reason() -> None:
    grow = _plan(TopicStatus.CHANGE, Change("partitions", 3, 6))
    create = _plan(TopicStatus.CREATE, Change("partitions", None, 3))
    decrease = InvalidPartitionsError("The number of partitions for a topic can only be increased.")
    factor = InvalidReplicationFactorError("not supported", stricter_than_kafka=True)
    cases = [
        (TopicOutcome.APPLIED, create, (), False, True, Reason.CREATED),
        (TopicOutcome.APPLIED, grow, (), True, True, Reason.UPDATED),
        (TopicOutcome.UNCHANGED, _plan(TopicStatus.UNCHANGED), (), True, True, Reason.IN_SYNC),
        (TopicOutcome.PLANNED, grow, (), True, False, Reason.PLANNED),
        (TopicOutcome.REJECTED, grow, (decrease,), True, False, Reason.INVALID),
        (TopicOutcome.REJECTED, grow, (factor,), True, False, Reason.NOT_SUPPORTED),
        (TopicOutcome.REJECTED, create, (factor,), False, False, Reason.INVALID),
        (TopicOutcome.CONFLICT, grow, (), True, False, Reason.CONFLICT),
    ]
    for outcome, plan, errors, exists, status, reason in cases:
        condition = ready_for_outcome(outcome, plan, errors, exists=exists)
        assert (condition.status, condition.reason) == (status, reason), outcome
    assert "partitions: 3 -> 6" in ready_for_outcome(TopicOutcome.APPLIED, grow, (), exists=True).message


def test_drift_rows_leave_out_what_a_side_lacks() -> None:
    rows = drift_rows(
        [
            Change("partitions", 6, 3),
            Change("config.retention.ms", None, "1000"),
            Change("config.x", True, None),
        ]
    )
    assert rows == [
        {"field": "partitions", "desired": "3", "actual": "6"},
        {"field": "config.retention.ms", "desired": "1000"},
        {"field": "config.x", "actual": "true"},
    ]


def test_plan_items_are_the_engines_json() -> None:
    plan = _plan(TopicStatus.CHANGE, actions=[AlterConfig("orders", {"retention.ms": "1"}, 4)])
    assert plan_items(plan, pending=True) == [
        {"type": "alter_config", "topic": "orders", "config": {"retention.ms": "1"}, "expected_version": 4}
    ]
    assert plan_items(plan, pending=False) == []
    rejected = _plan(TopicStatus.REJECTED, rejections=[InvalidPartitionsError("no")])
    assert plan_items(rejected, pending=True)[0]["type"] == "rejection"


def test_topic_status_clears_what_kafka_no_longer_has_and_compares_without_timestamps() -> None:
    state = TopicState("orders", {0: (1, 2), 1: (2, 0)}, topic_id="abc")
    condition = Condition(READY, True, Reason.IN_SYNC, "ok")
    first = topic_status(generation=2, topic="orders", state=state, ready=condition, now=T0)
    assert (first["topicId"], first["partitions"], first["replicas"], first["driftCount"]) == ("abc", 2, 2, 0)
    later = topic_status(generation=2, topic="orders", state=state, ready=condition, previous=first, now=T1)
    assert same_status(first, later)
    gone = topic_status(generation=2, topic="orders", state=None, ready=condition, previous=first, now=T1)
    assert gone["topicId"] is None
    assert not same_status(first, gone)
    assert same_status({"a": 1}, {"a": 1, "b": None})


def test_cluster_status_counts_and_caps_unmanaged_topics() -> None:
    topics = {f"t{i:03}": TopicState(f"t{i:03}", {0: (0,)}) for i in range(150)}
    state = ClusterState("cid", {0: Broker(0, "r1"), 1: Broker(1, None)}, topics, controller=1)
    condition = Condition(READY, True, Reason.CONNECTED)
    status = cluster_status(
        generation=1, state=state, declared={"t000", "t001", "nope"}, ready=condition, now=T0
    )
    assert status["topics"] == {"managed": 2, "unmanaged": 148}
    assert len(status["unmanagedTopics"]) == 100
    assert status["unmanagedTopics"][0] == "t002"
    assert status["brokers"] == [{"id": 0, "rack": "r1"}, {"id": 1}]
    assert (status["racks"], status["brokerCount"], status["controller"]) == (["r1"], 2, 1)
    down = cluster_status(generation=1, state=None, declared=(), ready=condition, now=T0)
    assert down["connected"] is False
