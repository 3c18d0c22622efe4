"""Existing topics change forward only: more partitions (Kafka's placement), the config override set."""

from harness.states import RACKS, cluster_state, existing, spec
from topic_operator.kafka.assignment import BrokerMetadata, assign_new_partitions
from topic_operator.kafka.errors import (
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    ReassignmentInProgressError,
)
from topic_operator.plan import AddPartitions, AlterConfig, Change, TopicStatus, plan_topic

TWO = {0: (0, 1, 2), 1: (1, 2, 3)}
SIX = [BrokerMetadata(i, rack) for i, rack in enumerate(RACKS)]


def test_nothing_to_do() -> None:
    state = cluster_state(existing("t", TWO, {"retention.ms": "1000", "cleanup.policy": "delete,compact"}))
    declared = spec("t", 2, 3, {"retention.ms": "1000", "cleanup.policy": "compact,delete"})
    result = plan_topic(declared, state)
    assert result.status is TopicStatus.UNCHANGED
    assert result.actions == ()
    assert result.changes == ()


def test_spelling_of_stored_values_is_not_drift() -> None:
    state = cluster_state(existing("t", TWO, {"retention.ms": " 1000 ", "preallocate": "TRUE"}))
    assert plan_topic(spec("t", 2, 3, {"retention.ms": "1000", "preallocate": "true"}), state).actions == ()


def test_growth_continues_kafkas_placement_and_keeps_what_was_read() -> None:
    state = cluster_state(existing("t", TWO, version=5, adding=None))
    [action] = plan_topic(spec("t", 5, 3), state).actions
    assert isinstance(action, AddPartitions)
    assert action.new_partitions == {
        p: tuple(r) for p, r in assign_new_partitions(TWO, SIX, 5, topic="t").items()
    }
    assert (action.expected_version, action.topic_id) == (5, "q3xFy1sLTyajJv4JTtj6qQ")
    assert action.existing == TWO


def test_growth_with_declared_lists_for_the_new_partitions() -> None:
    declared = spec("t", 3, 3, assignment={0: (0, 1, 2), 1: (1, 2, 3), 2: (5, 4, 3)})
    [action] = plan_topic(declared, cluster_state(existing("t", TWO))).actions
    assert isinstance(action, AddPartitions)
    assert action.new_partitions == {2: (5, 4, 3)}


def test_moving_existing_partitions_is_not_supported() -> None:
    declared = spec("t", 3, 3, assignment={0: (2, 1, 0), 1: (1, 2, 3), 2: (5, 4, 3)})
    [error] = plan_topic(declared, cluster_state(existing("t", TWO))).rejections
    assert isinstance(error, InvalidReplicaAssignmentError)
    assert "moves existing partitions [0] of topic t" in str(error)


def test_config_set_is_owned_by_the_declaration() -> None:
    state = cluster_state(
        existing("t", TWO, {"retention.ms": "1000", "segment.ms": "60000"}, config_version=3)
    )
    result = plan_topic(spec("t", 2, 3, {"retention.ms": "2000"}), state)
    [action] = result.actions
    assert action == AlterConfig("t", {"retention.ms": "2000"}, expected_version=3)
    assert result.changes == (
        Change("config.retention.ms", "1000", "2000"),
        Change("config.segment.ms", "60000", None),
    )


def test_config_for_a_topic_without_config_znode() -> None:
    [action] = plan_topic(
        spec("t", 2, 3, {"retention.ms": "1"}), cluster_state(existing("t", TWO, config_version=None))
    ).actions
    assert action == AlterConfig("t", {"retention.ms": "1"}, expected_version=None)


def test_replication_factor_change_is_not_supported() -> None:
    result = plan_topic(spec("t", 2, 2), cluster_state(existing("t", TWO)))
    [error] = result.rejections
    assert isinstance(error, InvalidReplicationFactorError)
    assert str(error) == (
        "Changing the replication factor of topic t from 3 to 2 is not supported: Kafka changes replicas only "
        "by partition reassignment; kafka-topic-operator does that through Kafka's partition reassignment once "
        "KafkaCluster main sets spec.reassignment.enabled: true."
    )
    assert result.actions == ()


def test_no_growth_during_a_reassignment_but_config_still_applies() -> None:
    moving = cluster_state(existing("t", TWO, adding={0: (3,)}))
    [error] = plan_topic(spec("t", 3), moving).rejections
    assert isinstance(error, ReassignmentInProgressError)
    assert str(error) == "A partition reassignment is in progress for the topic 't'."
    assert plan_topic(spec("t", 2, 3, {"retention.ms": "1"}), moving).status is TopicStatus.CHANGE


def test_a_topic_queued_for_deletion_is_left_alone() -> None:
    [error] = plan_topic(spec("t", 2), cluster_state(existing("t", TWO, marked=True))).rejections
    assert isinstance(error, InvalidTopicError)
    assert str(error) == "The topic is queued for deletion."
