"""A KRaft controller refuses any request of more than 10,000 metadata records, every topic in it. The writer cuts
each kind of action into requests under that bound, counting records as the controller does, and the planner
refuses a topic that alone exceeds it, in the controller's words, where a KRaft controller writes."""

from __future__ import annotations

import dataclasses

import pytest

from harness.states import cluster_state, existing, spec
from topic_operator.admin.request_sizes import records_of, within_records
from topic_operator.kafka.controller_records import EXCESSIVE_BATCH, MAX_RECORDS_PER_OPERATION
from topic_operator.kafka.errors import PolicyViolationError
from topic_operator.kafka.kraft_migration import choose_writer
from topic_operator.kafka.reassignment import PartitionMove
from topic_operator.model import Backend, ClusterState
from topic_operator.plan import (
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    Reassign,
    TopicStatus,
    plan_topic,
)


def kraft(state: ClusterState) -> ClusterState:
    """The same state as read through the brokers of a KRaft cluster."""
    return dataclasses.replace(
        state, backend=Backend.KRAFT, writer=choose_writer(None, zookeeper=False, brokers=True)
    )


def test_each_action_counts_the_records_the_controller_writes() -> None:
    # a TopicRecord, a ConfigRecord per override, a PartitionRecord per partition
    assert records_of(CreateTopic("t", dict.fromkeys(range(40), (1,)), {"retention.ms": "1", "a": "b"})) == 43
    assert records_of(AddPartitions("t", {0: (1,)}, dict.fromkeys(range(1, 6), (1,)), 0)) == 5
    # only the keys that change; a broker's two throttle rates count for each broker
    alter = AlterConfig(
        "t", {"a": "1", "b": "2"}, None, clear_broker_throttles=(1, 2), previous={"a": "1", "c": "3"}
    )
    assert records_of(alter) == 2 + 2 * 2
    moves = tuple(PartitionMove(p, (1,), (1, 2)) for p in range(7))
    assert records_of(Reassign("t", moves, 0)) == 7
    assert records_of(DeleteTopic("t")) == 1


def test_a_batch_is_cut_into_requests_under_the_bound_and_keeps_its_order() -> None:
    sizes = [4_000, 4_000, 3_000, 9_999, 1, 10_000, 12_000, 5]
    runs = list(within_records(list(range(len(sizes))), lambda i: sizes[i]))
    assert runs == [[0, 1], [2], [3, 4], [5], [6], [7]]
    assert [i for run in runs for i in run] == list(range(len(sizes)))
    for run in runs:
        assert len(run) == 1 or sum(sizes[i] for i in run) <= MAX_RECORDS_PER_OPERATION


def test_ten_thousand_small_creates_go_in_requests_each_under_the_bound() -> None:
    creates = [CreateTopic(f"t{i}", {0: (1,)}, {"retention.ms": "1"} if i % 2 else {}) for i in range(10_000)]
    runs = list(within_records(creates, records_of))
    assert sum(len(r) for r in runs) == 10_000
    assert len(runs) == 3  # 25,000 records
    assert all(sum(map(records_of, run)) <= MAX_RECORDS_PER_OPERATION for run in runs)


def test_a_topic_too_large_for_one_request_is_refused_in_the_plan_on_kraft() -> None:
    result = plan_topic(spec("huge", 9_999, 1, {"retention.ms": "1000"}), kraft(cluster_state()))
    assert result.status is TopicStatus.REJECTED
    assert result.actions == ()
    [error] = result.rejections
    assert isinstance(error, PolicyViolationError)
    assert error.field == "partitions"
    assert str(error).startswith(EXCESSIVE_BATCH)
    assert "huge needs 10,001 metadata records" in str(error)
    # at the bound exactly, it is one request the controller takes
    fits = plan_topic(spec("fits", 9_998, 1, {"retention.ms": "1000"}), kraft(cluster_state()))
    assert fits.status is TopicStatus.CREATE


def test_the_same_topic_is_not_refused_where_zookeeper_is_written() -> None:
    # a ZooKeeper-mode controller has no such bound (the znode size bound is another rule)
    assert plan_topic(spec("huge", 10_000, 1), cluster_state()).status is TopicStatus.CREATE


def test_growing_by_more_partitions_than_one_request_holds_is_refused_on_kraft() -> None:
    current = existing("grown", {0: (1,)})
    refused = plan_topic(spec("grown", 10_002, 1), kraft(cluster_state(current)))
    assert refused.status is TopicStatus.REJECTED
    [error] = refused.rejections
    assert isinstance(error, PolicyViolationError)
    assert "10,001 new partitions" in str(error)
    assert plan_topic(spec("grown", 10_001, 1), kraft(cluster_state(current))).status is TopicStatus.CHANGE


@pytest.mark.parametrize("partitions", [10_000, 10**8])
def test_an_absurd_topic_is_refused_before_placement(partitions: int) -> None:
    result = plan_topic(spec("absurd", partitions, 3), kraft(cluster_state()))
    assert result.status is TopicStatus.REJECTED
    assert isinstance(result.rejections[0], PolicyViolationError)
