"""Each error stands for one Kafka exception: its class name, protocol error code and message (semantics §11)."""

import pytest

from topic_operator.kafka import errors
from topic_operator.kafka.errors import (
    AdminOperationError,
    ConfigError,
    InvalidConfigurationError,
    InvalidPartitionsError,
    KafkaError,
    error_class_for,
)

EXPECTED = {
    "InvalidTopicError": ("org.apache.kafka.common.errors.InvalidTopicException", 17),
    "InvalidPartitionsError": ("org.apache.kafka.common.errors.InvalidPartitionsException", 37),
    "InvalidReplicationFactorError": ("org.apache.kafka.common.errors.InvalidReplicationFactorException", 38),
    "InvalidReplicaAssignmentError": ("org.apache.kafka.common.errors.InvalidReplicaAssignmentException", 39),
    "InvalidConfigurationError": ("org.apache.kafka.common.errors.InvalidConfigurationException", 40),
    "ConfigError": ("org.apache.kafka.common.config.ConfigException", 40),
    "InvalidRequestError": ("org.apache.kafka.common.errors.InvalidRequestException", 42),
    "TopicExistsError": ("org.apache.kafka.common.errors.TopicExistsException", 36),
    "UnknownTopicOrPartitionError": ("org.apache.kafka.common.errors.UnknownTopicOrPartitionException", 3),
    "BrokerNotAvailableError": ("org.apache.kafka.common.errors.BrokerNotAvailableException", 8),
    "ReassignmentInProgressError": ("org.apache.kafka.common.errors.ReassignmentInProgressException", 60),
    "TopicDeletionDisabledError": ("org.apache.kafka.common.errors.TopicDeletionDisabledException", 73),
    "TopicAlreadyMarkedForDeletionError": ("kafka.common.TopicAlreadyMarkedForDeletionException", -1),
    "AdminOperationError": ("kafka.admin.AdminOperationException", -1),
    "PolicyViolationError": ("org.apache.kafka.common.errors.PolicyViolationException", 44),
    "TopicAuthorizationError": ("org.apache.kafka.common.errors.TopicAuthorizationException", 29),
}


@pytest.mark.parametrize(("name", "expected"), EXPECTED.items())
def test_class_names_and_codes(name: str, expected: tuple[str, int]) -> None:
    cls = getattr(errors, name)
    assert (cls.kafka_class, cls.error_code) == expected
    assert error_class_for(expected[0]) is cls
    assert issubclass(cls, KafkaError)


OURS = {"ClusterMigratingToKraftError", "BrokerRefusalError"}
"""Refusals Kafka has no exception for, reported as the Kafka class they derive from, and a broker's answer
whose code no class here stands for."""


def test_every_exported_error_is_checked() -> None:
    exported = {n for n in errors.__all__ if n.endswith("Error") and n != "KafkaError"}
    assert exported == set(EXPECTED) | OURS


def test_our_own_refusals_report_as_kafkas_admin_exception() -> None:
    error = errors.ClusterMigratingToKraftError("migrating", field="cluster", stricter_than_kafka=True)
    assert (error.kafka_class, error.error_code) == ("kafka.admin.AdminOperationException", -1)
    assert error_class_for("kafka.admin.AdminOperationException") is AdminOperationError


def test_message_field_and_strictness_are_kept() -> None:
    error = InvalidPartitionsError("Number of partitions must be larger than 0.", field="partitions")
    assert str(error) == "Number of partitions must be larger than 0."
    assert error.field == "partitions"
    assert error.stricter_than_kafka is False
    assert AdminOperationError("x", stricter_than_kafka=True).stricter_than_kafka


def test_config_exception_is_caught_as_invalid_configuration() -> None:
    with pytest.raises(InvalidConfigurationError):
        raise ConfigError("Invalid value x for configuration y: Not a number of type LONG")


def test_errors_compare_by_value() -> None:
    assert InvalidPartitionsError("m", field="partitions") == InvalidPartitionsError("m", field="partitions")
    assert InvalidPartitionsError("m") != AdminOperationError("m")
    assert len({InvalidPartitionsError("m"), InvalidPartitionsError("m")}) == 1


def test_unknown_kafka_class_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="no error class"):
        error_class_for("org.example.Nope")


@pytest.mark.parametrize(
    ("code", "expected"),
    [(36, errors.TopicExistsError), (37, InvalidPartitionsError), (39, errors.InvalidReplicaAssignmentError),
     (40, InvalidConfigurationError), (44, errors.PolicyViolationError), (3, errors.UnknownTopicOrPartitionError)],
)  # fmt: skip
def test_a_broker_s_answer_becomes_the_class_of_its_code(code: int, expected: type[KafkaError]) -> None:
    error = errors.error_for_code(code, "the broker's own words", kafka_name="Whatever", field="config")
    assert type(error) is expected
    assert (str(error), error.field) == ("the broker's own words", "config")


def test_a_code_no_class_stands_for_keeps_the_client_s_name_and_the_message() -> None:
    error = errors.error_for_code(
        89, "The throttling quota has been exceeded.", kafka_name="ThrottlingQuotaExceededError"
    )
    assert isinstance(error, errors.BrokerRefusalError)
    assert (error.code, error.kafka_name) == (89, "ThrottlingQuotaExceededError")
    assert str(error) == "ThrottlingQuotaExceededError: The throttling quota has been exceeded."
