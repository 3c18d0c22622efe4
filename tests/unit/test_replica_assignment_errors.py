"""Every rejection of ``assign_replicas_to_brokers`` in Kafka's order, with its class and message (§1.1, §1.7)."""

import pytest

from topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from topic_operator.kafka.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    KafkaError,
)

THREE = [BrokerMetadata(0), BrokerMetadata(1), BrokerMetadata(2)]


def rejection(*args: object, **kwargs: object) -> KafkaError:
    with pytest.raises(KafkaError) as caught:
        assign_replicas_to_brokers(*args, **kwargs)  # type: ignore[arg-type]
    return caught.value


@pytest.mark.parametrize(
    ("args", "cls", "message"),
    [
        ((THREE, 0, 1), InvalidPartitionsError, "Number of partitions must be larger than 0."),
        ((THREE, -3, 0), InvalidPartitionsError, "Number of partitions must be larger than 0."),
        ((THREE, 1, 0), InvalidReplicationFactorError, "Replication factor must be larger than 0."),
        ((THREE, 1, -1), InvalidReplicationFactorError, "Replication factor must be larger than 0."),
        (
            (THREE, 1, 4),
            InvalidReplicationFactorError,
            "Replication factor: 4 larger than available brokers: 3.",
        ),
        (
            ([], 1, 1),
            InvalidReplicationFactorError,
            "Replication factor: 1 larger than available brokers: 0.",
        ),
        (
            ([BrokerMetadata(0, "a"), BrokerMetadata(1)], 1, 1),
            AdminOperationError,
            "Not all brokers have rack information for replica rack aware assignment.",
        ),
    ],
)
def test_kafka_rules_in_order(args: tuple[object, ...], cls: type[KafkaError], message: str) -> None:
    error = rejection(*args)
    assert type(error) is cls
    assert str(error) == message
    assert not error.stricter_than_kafka


def test_rf_checked_before_racks() -> None:
    error = rejection([BrokerMetadata(0, "a"), BrokerMetadata(1)], 1, 3)
    assert isinstance(error, InvalidReplicationFactorError)


def test_duplicate_broker_ids_are_refused() -> None:
    error = rejection([BrokerMetadata(1, "a"), BrokerMetadata(1, "b"), BrokerMetadata(2, "a")], 3, 2, 0)
    assert isinstance(error, AdminOperationError)
    assert str(error) == "Duplicate broker ids in the broker list: 1."
    assert error.stricter_than_kafka


@pytest.mark.parametrize(
    ("kwargs", "cls", "fragment"),
    [
        ({"n_partitions": 2**31}, InvalidPartitionsError, "outside Kafka's 32-bit integer range"),
        ({"n_partitions": True}, InvalidPartitionsError, "must be an integer, got True"),
        ({"n_partitions": "3"}, InvalidPartitionsError, "must be an integer, got '3'"),
        ({"replication_factor": 2.0}, InvalidReplicationFactorError, "must be an integer, got 2.0"),
        (
            {"start_partition_id": 2**31 - 2},
            InvalidPartitionsError,
            "would exceed Kafka's largest partition id",
        ),
        (
            {"fixed_start_index": 2**31 - 3},
            AdminOperationError,
            "overflow Kafka's 32-bit placement arithmetic",
        ),
    ],
)
def test_values_kafka_would_overflow_on_are_refused(
    kwargs: dict[str, object], cls: type[KafkaError], fragment: str
) -> None:
    arguments: dict[str, object] = {"n_partitions": 4, "replication_factor": 2, **kwargs}
    error = rejection(THREE, **arguments)
    assert type(error) is cls
    assert fragment in str(error)
    assert error.stricter_than_kafka


def test_largest_safe_partition_ids_are_accepted() -> None:
    result = assign_replicas_to_brokers(THREE, 2, 2, fixed_start_index=0, start_partition_id=2**31 - 2)
    assert sorted(result) == [2**31 - 2, 2**31 - 1]
