"""A manual assignment at creation obeys ``validateTopicCreate``'s checks in order, plus ours (§3.3)."""

import pytest

from topic_operator.kafka.assignment import validate_replica_assignment
from topic_operator.kafka.errors import BrokerNotAvailableError, InvalidReplicaAssignmentError, KafkaError


def rejection(assignment: dict[int, list[int]], brokers: list[int] | None = None) -> KafkaError:
    with pytest.raises(KafkaError) as caught:
        validate_replica_assignment(assignment, brokers)
    return caught.value


def test_valid_assignment_passes() -> None:
    validate_replica_assignment({0: [1, 2], 1: [2, 3], 2: [3, 1]}, brokers=[1, 2, 3])
    validate_replica_assignment({1: [4], 0: [5]})


@pytest.mark.parametrize(
    "assignment",
    [{}, {0: [1], 1: [1, 2]}, {0: [], 1: [1]}],
)
def test_replica_counts_must_be_equal_including_the_empty_assignment(
    assignment: dict[int, list[int]],
) -> None:
    error = rejection(assignment)
    assert isinstance(error, InvalidReplicaAssignmentError)
    assert str(error) == "All partitions should have the same number of replicas"
    assert not error.stricter_than_kafka


def test_duplicates_render_the_whole_map() -> None:
    error = rejection({1: [1, 2], 0: [0, 0]})
    assert str(error) == "Duplicate replica assignment found: Map(0 -> List(0, 0), 1 -> List(1, 2))"
    assert isinstance(error, InvalidReplicaAssignmentError)


def test_ids_failing_kafkas_sum_check() -> None:
    error = rejection({1: [1], 2: [2]})
    assert str(error) == "partitions should be a consecutive 0-based integer sequence"
    assert not error.stricter_than_kafka


def test_ids_passing_kafkas_sum_check_are_still_refused() -> None:
    # Kafka's quirk: 3 entries, expected sum 3, and 0 + 3 = 3 (negative keys are not summed).
    error = rejection({-5: [1], 0: [2], 3: [3]})
    assert str(error) == "partitions should be a consecutive 0-based integer sequence"
    assert error.stricter_than_kafka


def test_replication_factor_zero_is_refused() -> None:
    error = rejection({0: [], 1: []})
    assert isinstance(error, InvalidReplicaAssignmentError)
    assert str(error) == "Cannot have replication factor of 0 for partition id 0."
    assert error.stricter_than_kafka


def test_replicas_must_name_registered_brokers_when_known() -> None:
    error = rejection({0: [1, 2], 1: [2, 7]}, brokers=[2, 1, 3])
    assert isinstance(error, BrokerNotAvailableError)
    assert str(error) == (
        "Some brokers specified for partition id 1 are not available. Specified brokers: 2, 7, "
        "available brokers: 1, 2, 3."
    )
    assert error.stricter_than_kafka


def test_unknown_brokers_pass_when_the_broker_list_is_unknown() -> None:
    validate_replica_assignment({0: [100, 200]})


@pytest.mark.parametrize(
    ("assignment", "fragment"),
    [
        ({0: [-1]}, "Broker id -1 in partition 0 is negative"),
        ({"0": [1]}, "Partition id must be an integer, got '0'"),
        ({0: "12"}, "Replicas of partition 0 must be a list of broker ids"),
        ({0: [1.0]}, "Broker id must be an integer, got 1.0"),
    ],
)
def test_malformed_values_are_named(assignment: dict[int, list[int]], fragment: str) -> None:
    error = rejection(assignment)
    assert isinstance(error, InvalidReplicaAssignmentError)
    assert fragment in str(error)
