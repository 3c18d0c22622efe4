"""Partitions only ever increase, and manual maps for new partitions obey Kafka's checks and ours (§3.5)."""

import pytest

from topic_operator.kafka.assignment import BrokerMetadata, assign_new_partitions
from topic_operator.kafka.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    KafkaError,
)

FOUR = [BrokerMetadata(i) for i in range(4)]
EXISTING = {0: [0, 1], 1: [1, 2]}


def rejection(*args: object, **kwargs: object) -> KafkaError:
    with pytest.raises(KafkaError) as caught:
        assign_new_partitions(*args, **kwargs)  # type: ignore[arg-type]
    return caught.value


@pytest.mark.parametrize("requested", [2, 1, 0])
def test_decrease_or_same_count_is_rejected_as_kafka_does(requested: int) -> None:
    error = rejection(EXISTING, FOUR, requested, topic="orders")
    assert isinstance(error, InvalidPartitionsError)
    assert str(error) == (
        "The number of partitions for a topic can only be increased. Topic orders currently has 2 partitions, "
        f"{requested} would not be an increase."
    )
    assert error.field == "partitions"
    assert error.error_code == 37


def test_missing_partition_zero() -> None:
    error = rejection({1: [2, 3]}, FOUR, 3, topic="orders")
    assert isinstance(error, AdminOperationError)
    assert str(error) == (
        "Unexpected existing replica assignment for topic 'orders', partition id 0 is missing. Assignment: "
        "Map(1 -> ReplicaAssignment(replicas=2,3, addingReplicas=, removingReplicas=))"
    )
    assert not error.stricter_than_kafka


def test_gaps_in_existing_ids_are_refused_before_they_overwrite_partitions() -> None:
    error = rejection({0: [0], 2: [1]}, FOUR, 4, topic="t")
    assert isinstance(error, AdminOperationError)
    assert "partition ids [0, 2] are not 0..1" in str(error)
    assert error.stricter_than_kafka


def test_rf_larger_than_brokers_is_kafkas_rule() -> None:
    error = rejection({0: [0, 1, 2]}, FOUR[:2], 2)
    assert isinstance(error, InvalidReplicationFactorError)
    assert str(error) == "Replication factor: 3 larger than available brokers: 2."


@pytest.mark.parametrize(
    ("manual", "cls", "message"),
    [
        ({2: []}, InvalidReplicaAssignmentError, "Cannot have replication factor of 0 for partition id 2."),
        (
            {2: [3, 3]},
            InvalidReplicaAssignmentError,
            "Duplicate brokers not allowed in replica assignment: 3, 3 for partition id 2.",
        ),
        (
            {2: [0, 9]},
            BrokerNotAvailableError,
            "Some brokers specified for partition id 2 are not available. Specified brokers: 0, 9, "
            "available brokers: 0, 1, 2, 3.",
        ),
        (
            {2: [0], 3: [1, 2], 4: [1, 2, 3]},
            InvalidReplicaAssignmentError,
            "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [2, 4] have "
            "replication factors [1, 3], respectively.",
        ),
    ],
)
def test_manual_map_checks_with_kafkas_messages(
    manual: dict[int, list[int]], cls: type[KafkaError], message: str
) -> None:
    error = rejection(EXISTING, FOUR, 2 + len(manual), manual)
    assert type(error) is cls
    assert str(error) == message
    assert not error.stricter_than_kafka


def test_manual_checks_run_per_partition_before_the_rf_report() -> None:
    error = rejection(EXISTING, FOUR, 4, {2: [0], 3: [9, 9]})
    assert str(error) == "Duplicate brokers not allowed in replica assignment: 9, 9 for partition id 3."


def test_manual_map_must_cover_exactly_the_new_partitions() -> None:
    too_few = rejection(EXISTING, FOUR, 4, {2: [0, 1]})
    assert str(too_few) == "Increasing the number of partitions by 2 but 1 assignments provided."
    assert too_few.stricter_than_kafka
    overwrite = rejection(EXISTING, FOUR, 4, {1: [0, 1], 2: [1, 2]}, topic="orders")
    assert str(overwrite) == (
        "The new partitions of topic 'orders' are 2..3, but the assignment names partitions [1, 2]."
    )
    assert overwrite.stricter_than_kafka


def test_increase_is_checked_before_the_manual_map() -> None:
    error = rejection(EXISTING, FOUR, 2, {2: []})
    assert isinstance(error, InvalidPartitionsError)
