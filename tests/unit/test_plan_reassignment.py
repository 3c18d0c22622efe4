"""Replica changes of existing topics, planned as Kafka partition reassignments where the KafkaCluster enables
them: the moves, their throttles, one at a time, queued while one runs, and the refusals."""

import dataclasses

import pytest

from harness.states import cluster_spec, cluster_state, existing, spec
from topic_operator.kafka.errors import (
    BrokerNotAvailableError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    ReassignmentInProgressError,
)
from topic_operator.kafka.reassignment import PartitionMove
from topic_operator.model import ReassignmentPolicy, TopicSpec, TopicState
from topic_operator.plan import AlterConfig, Change, Plan, Reassign, TopicPlan, TopicStatus, plan, plan_topic
from topic_operator.plan_output import plan_to_dict, render_plan_text

ENABLED = cluster_spec(reassignment=ReassignmentPolicy(enabled=True))
THROTTLED = cluster_spec(reassignment=ReassignmentPolicy(enabled=True, throttle_bytes_per_second=1000))
ONE = {0: (0,), 1: (1,), 2: (2,)}
THROTTLE_LISTS = {
    "leader.replication.throttled.replicas": "0:0",
    "follower.replication.throttled.replicas": "0:1,0:2",
}


def _only_reassign(topic_plan: TopicPlan) -> Reassign:
    actions = topic_plan.actions
    assert [type(a) for a in actions] == [Reassign], topic_plan.rejections
    action = actions[0]
    assert isinstance(action, Reassign)
    return action


def test_an_increase_keeps_every_replica_in_order_and_adds_new_racks() -> None:
    state = cluster_state(existing("t", ONE, version=4))
    result = plan_topic(spec("t", 3, 3), state, ENABLED)
    action = _only_reassign(result)
    assert result.status is TopicStatus.CHANGE
    assert result.changes == (Change("replicas", 1, 3),)
    assert action.expected_version == 4
    for move in action.moves:
        assert move.target[: len(move.current)] == move.current  # preferred leader and order kept
        assert len(move.target) == 3
        racks = {("rack-a", "rack-b", "rack-c")[b % 3] for b in move.target}
        assert len(racks) == 3  # brokers 0..5 sit in racks a, b, c, a, b, c
    assert action.config is None
    assert action.throttle_bytes_per_second is None


def test_a_decrease_drops_from_the_end_and_never_the_preferred_leader() -> None:
    state = cluster_state(existing("t", {0: (0, 1, 2), 1: (1, 2, 3)}))
    action = _only_reassign(plan_topic(spec("t", 2, 2), state, ENABLED))
    assert action.moves == (PartitionMove(0, (0, 1, 2), (0, 1)), PartitionMove(1, (1, 2, 3), (1, 2)))


def test_a_declared_move_of_existing_partitions_is_the_target_as_given() -> None:
    state = cluster_state(existing("t", {0: (0, 1, 2), 1: (1, 2, 3)}))
    declared = spec("t", 2, 3, assignment={0: (0, 1, 2), 1: (4, 2, 3)})
    result = plan_topic(declared, state, ENABLED)
    assert _only_reassign(result).moves == (PartitionMove(1, (1, 2, 3), (4, 2, 3)),)
    assert result.changes == (Change("replicaAssignment.1", [1, 2, 3], [4, 2, 3]),)


def test_a_throttle_adds_the_throttled_replica_lists_to_the_current_overrides() -> None:
    state = cluster_state(existing("t", {0: (0,)}, {"retention.ms": "1000"}, config_version=7))
    action = _only_reassign(plan_topic(spec("t", 1, 3, {"retention.ms": "1000"}), state, THROTTLED))
    [move] = action.moves
    assert action.throttle_bytes_per_second == 1000
    assert action.config_expected_version == 7
    assert action.config == {
        "retention.ms": "1000",
        "leader.replication.throttled.replicas": "0:0",
        "follower.replication.throttled.replicas": ",".join(f"0:{b}" for b in move.adding),
    }
    assert action.brokers == tuple(sorted(move.target))


def test_a_config_change_with_a_replica_change_is_written_with_the_moves() -> None:
    state = cluster_state(existing("t", {0: (0,)}, {"retention.ms": "1000"}))
    result = plan_topic(spec("t", 1, 2, {"retention.ms": "2000"}), state, THROTTLED)
    action = _only_reassign(result)  # one transaction writes the config znode: no second action on it
    assert action.config is not None
    assert action.config["retention.ms"] == "2000"
    assert Change("config.retention.ms", "1000", "2000") in result.changes


def test_without_the_setting_a_replica_change_is_not_supported_and_says_how_to_enable_it() -> None:
    result = plan_topic(spec("t", 3, 3), cluster_state(existing("t", ONE)), cluster_spec())
    [error] = result.rejections
    assert isinstance(error, InvalidReplicationFactorError)
    assert "spec.reassignment.enabled: true" in error.message
    assert result.actions == ()


@pytest.mark.parametrize(
    ("declared", "error_class", "words"),
    [
        (spec("t", 3, 7), InvalidReplicationFactorError, "larger than available brokers: 6"),
        (
            spec("t", 3, 2, assignment={0: (0, 0), 1: (1, 2), 2: (2, 3)}),
            InvalidReplicaAssignmentError,
            "Duplicate replica assignment found",
        ),
        (
            spec("t", 3, 2, assignment={0: (0, 9), 1: (1, 2), 2: (2, 3)}),
            BrokerNotAvailableError,
            "9",
        ),
        (spec("t", 4, 3), InvalidRequestError, "apply the partition count first"),
    ],
    ids=["rf-above-brokers", "duplicate-brokers", "unregistered-broker", "with-a-partition-change"],
)
def test_refusals_name_the_topic_and_the_rule_and_plan_nothing(
    declared: TopicSpec, error_class: type, words: str
) -> None:
    result = plan_topic(declared, cluster_state(existing("t", ONE)), ENABLED)
    assert result.status is TopicStatus.REJECTED
    assert result.actions == ()
    assert any(isinstance(e, error_class) and words in e.message for e in result.rejections), (
        result.rejections
    )


def test_an_internal_topic_is_never_reassigned() -> None:
    state = cluster_state(existing("__consumer_offsets", ONE))
    result = plan_topic(spec("__consumer_offsets", 3, 3), state, ENABLED)
    assert result.status is TopicStatus.REJECTED
    assert "internal topic" in result.rejections[0].message


def test_one_reassignment_at_a_time_in_the_whole_cluster() -> None:
    running = existing("other", {0: (1, 2, 0)}, adding={0: (0,)})
    result = plan_topic(spec("t", 3, 3), cluster_state(existing("t", ONE), running), ENABLED)
    [error] = result.rejections
    assert isinstance(error, ReassignmentInProgressError)
    assert "existing assignment running (topics other)" in error.message


def test_a_reassignment_requested_by_another_tool_counts_too() -> None:
    pending = dataclasses.replace(existing("other", {0: (1,)}), pending_reassignment=True)
    result = plan_topic(spec("t", 3, 3), cluster_state(existing("t", ONE), pending), ENABLED)
    assert isinstance(result.rejections[0], ReassignmentInProgressError)


def _moving(config: dict[str, str] | None = None) -> TopicState:
    """Partition 0 moving from [0] to [0, 1, 2], as the controller writes it mid-way (§14)."""
    return dataclasses.replace(
        existing("t", {0: (0, 1, 2), 1: (1,)}, config),
        adding_replicas={0: (1, 2)},
        removing_replicas={},
    )


def test_while_the_topic_is_reassigned_its_own_change_is_not_planned_again() -> None:
    result = plan_topic(
        spec("t", 2, 3, assignment={0: (0, 1, 2), 1: (1, 3, 5)}), cluster_state(_moving()), ENABLED
    )
    # partition 1's move is declared too, but waits: never a second concurrent reassignment
    assert result.actions == ()
    assert result.reassigning == (PartitionMove(0, (0,), (0, 1, 2)),)
    assert result.changes == (Change("replicaAssignment.1", [1], [1, 3, 5]),)
    assert result.status is TopicStatus.CHANGE


def test_the_change_in_flight_is_not_drift() -> None:
    declared = spec("t", 2, 3, assignment={0: (0, 1, 2), 1: (1,)})
    result = plan_topic(declared, cluster_state(_moving()), ENABLED)
    # declared RF 3 against partition 0's target: partition 1 keeps one replica, as declared
    assert result.reassigning is not None
    assert result.actions == ()


def test_configs_still_change_mid_way_keeping_the_throttle_lists() -> None:
    state = cluster_state(_moving({"retention.ms": "1", **THROTTLE_LISTS}))
    declared = spec("t", 2, 1, {"retention.ms": "2"}, assignment={0: (0, 1, 2), 1: (1,)})
    result = plan_topic(declared, state, THROTTLED)
    [action] = result.actions
    assert isinstance(action, AlterConfig)
    assert action.config == {"retention.ms": "2", **THROTTLE_LISTS}
    assert action.clear_broker_throttles == ()


def test_once_done_the_lists_and_the_rates_go_together() -> None:
    state = cluster_state(existing("t", {0: (0, 1, 2)}, {"retention.ms": "1", **THROTTLE_LISTS}))
    result = plan_topic(spec("t", 1, 3, {"retention.ms": "1"}), state, THROTTLED)
    [action] = result.actions
    assert action == AlterConfig("t", {"retention.ms": "1"}, 0, clear_broker_throttles=(0, 1, 2))
    assert result.reassigning is None


def test_the_lists_stay_while_another_topic_is_reassigned() -> None:
    running = existing("other", {0: (1, 2, 0)}, adding={0: (0,)})
    state = cluster_state(existing("t", {0: (0, 1, 2)}, dict(THROTTLE_LISTS)), running)
    assert plan_topic(spec("t", 1, 3), state, THROTTLED).actions == ()


def test_without_a_throttle_setting_leftover_lists_are_removed_as_any_undeclared_config() -> None:
    state = cluster_state(existing("t", {0: (0, 1, 2)}, dict(THROTTLE_LISTS)))
    [action] = plan_topic(spec("t", 1, 3), state, ENABLED).actions
    assert action == AlterConfig("t", {}, 0)


def test_the_plan_shows_each_move_in_text_and_json() -> None:
    state = cluster_state(existing("t", {0: (0,)}))
    result = plan_topic(spec("t", 1, 3), state, THROTTLED)
    [move] = _only_reassign(result).moves
    whole = Plan("main", (result,), (), frozenset({"t"}))
    assert f"      p0: [0] -> {list(move.target)}" in render_plan_text(whole)
    [action] = plan_to_dict(whole)["topics"][0]["actions"]
    assert action["type"] == "reassign"
    assert action["moves"] == [
        {
            "partition": 0,
            "current": [0],
            "target": list(move.target),
            "adding": list(move.adding),
            "removing": [],
        }
    ]
    assert action["throttle_bytes_per_second"] == 1000


def test_a_finished_reassignments_rates_stay_on_the_brokers_a_new_one_throttles() -> None:
    done = existing("done", {0: (0, 1, 2)}, dict(THROTTLE_LISTS))
    declared = [spec("done", 1, 3), spec("t", 1, 3, assignment={0: (3, 0, 1)})]
    whole = plan(declared, cluster_state(done, existing("t", {0: (3,)})), THROTTLED)
    cleanup, start = whole.topics
    [reassign] = start.actions
    [alter] = cleanup.actions
    assert isinstance(reassign, Reassign)
    assert isinstance(alter, AlterConfig)
    assert reassign.brokers == (0, 1, 3)
    assert alter.clear_broker_throttles == (2,)  # 0 and 1 keep the rates the new moves need


def test_a_throttled_decrease_writes_no_empty_follower_list() -> None:
    state = cluster_state(existing("t", {0: (0, 1, 2)}))
    action = _only_reassign(plan_topic(spec("t", 1, 2), state, THROTTLED))
    assert action.config == {"leader.replication.throttled.replicas": "0:0,0:1,0:2"}


def test_waiting_for_a_running_reassignment_is_reported_as_reassigning_not_as_final() -> None:
    from topic_operator.k8s.conditions import Reason
    from topic_operator.k8s.status import rejection_reason

    running = existing("other", {0: (1, 2, 0)}, adding={0: (0,)})
    result = plan_topic(spec("t", 3, 3), cluster_state(existing("t", ONE), running), ENABLED)
    assert rejection_reason(result.rejections, exists=True) is Reason.REASSIGNING
    growing = plan_topic(spec("other", 2, 3), cluster_state(running), ENABLED)
    assert rejection_reason(growing.rejections, exists=True) is Reason.REASSIGNING
