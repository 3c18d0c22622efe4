"""Kafka's validators, the order they run in, and the request-level checks around them (semantics §7.2, §7.3)."""

import pytest

from topic_operator.kafka.errors import ConfigError, InvalidConfigurationError
from topic_operator.kafka.topic_configs import validate_topic_config

THROTTLED = "leader.replication.throttled.replicas"
THROTTLED_RULE = (
    "must be the literal '*' or a list of replicas in the following format: "
    "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
)


def config_error(props: dict[str, object], *, kafka_version: tuple[int, int] = (3, 4)) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        validate_topic_config(props, kafka_version=kafka_version)
    return caught.value


def invalid_configuration(props: dict[str, object]) -> InvalidConfigurationError:
    """An InvalidConfigurationException proper: not its ConfigException subclass."""
    with pytest.raises(InvalidConfigurationError) as caught:
        validate_topic_config(props)
    assert type(caught.value) is InvalidConfigurationError
    assert caught.value.kafka_class == "org.apache.kafka.common.errors.InvalidConfigurationException"
    assert not caught.value.stricter_than_kafka
    return caught.value


# ---- null values and unknown names -----------------------------------------------------------------------------


def test_null_values_are_reported_together_sorted() -> None:
    error = invalid_configuration({"retention.ms": None, "cleanup.policy": None, "segment.ms": "1"})
    assert str(error) == "Null value not supported for topic configs: cleanup.policy,retention.ms"
    assert error.field == "config"


def test_a_single_null_value_names_its_field() -> None:
    error = invalid_configuration({"retention.ms": None})
    assert str(error) == "Null value not supported for topic configs: retention.ms"
    assert error.field == "config.retention.ms"


def test_nulls_are_checked_before_names() -> None:
    assert str(invalid_configuration({"no.such.key": None})) == (
        "Null value not supported for topic configs: no.such.key"
    )


def test_unknown_name() -> None:
    error = invalid_configuration({"retention.hours": "1"})
    assert str(error) == "Unknown topic config name: retention.hours"
    assert error.field == "config.retention.hours"


def test_the_first_unknown_name_in_sorted_order_is_reported() -> None:
    assert str(invalid_configuration({"zeta": "1", "alpha": "1", "retention.ms": "1"})) == (
        "Unknown topic config name: alpha"
    )


def test_names_are_checked_before_values() -> None:
    assert (
        str(invalid_configuration({"segment.bytes": "oops", "zzz": "1"})) == "Unknown topic config name: zzz"
    )


def test_broker_names_are_not_topic_names() -> None:
    assert (
        str(invalid_configuration({"log.retention.ms": "1"})) == "Unknown topic config name: log.retention.ms"
    )


def test_names_are_case_sensitive() -> None:
    assert str(invalid_configuration({"Retention.ms": "1"})) == "Unknown topic config name: Retention.ms"


@pytest.mark.parametrize("key", ["message.timestamp.before.max.ms", "message.timestamp.after.max.ms"])
def test_the_3_6_keys_are_unknown_before_3_6(key: str) -> None:
    assert str(invalid_configuration({key: "1000"})) == f"Unknown topic config name: {key}"
    assert validate_topic_config({key: " 1000 "}, kafka_version=(3, 6)) == {key: "1000"}
    assert str(config_error({key: "-1"}, kafka_version=(3, 6))) == (
        f"Invalid value -1 for configuration {key}: Value must be at least 0"
    )


def test_remote_storage_keys_are_unknown_to_2_8_and_accepted_from_3_0() -> None:
    props: dict[str, object] = {"remote.storage.enable": "true"}
    with pytest.raises(
        InvalidConfigurationError, match=r"^Unknown topic config name: remote.storage.enable$"
    ):
        validate_topic_config(props, kafka_version=(2, 8))
    assert validate_topic_config(props, kafka_version=(3, 0)) == {"remote.storage.enable": "true"}
    assert validate_topic_config(props) == {"remote.storage.enable": "true"}


# ---- ranges ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "segment.bytes",
            "13",
            "Invalid value 13 for configuration segment.bytes: Value must be at least 14",
        ),
        (
            "segment.bytes",
            "013",
            "Invalid value 13 for configuration segment.bytes: Value must be at least 14",
        ),
        ("segment.ms", "0", "Invalid value 0 for configuration segment.ms: Value must be at least 1"),
        (
            "segment.jitter.ms",
            -1,
            "Invalid value -1 for configuration segment.jitter.ms: Value must be at least 0",
        ),
        (
            "segment.index.bytes",
            "3",
            "Invalid value 3 for configuration segment.index.bytes: Value must be at least 4",
        ),
        ("flush.messages", "0", "Invalid value 0 for configuration flush.messages: Value must be at least 1"),
        ("flush.ms", "-1", "Invalid value -1 for configuration flush.ms: Value must be at least 0"),
        ("retention.ms", "-2", "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
        (
            "max.message.bytes",
            "-1",
            "Invalid value -1 for configuration max.message.bytes: Value must be at least 0",
        ),
        (
            "min.insync.replicas",
            " 0 ",
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        ),
        (
            "max.compaction.lag.ms",
            "0",
            "Invalid value 0 for configuration max.compaction.lag.ms: Value must be at least 1",
        ),
        (
            "local.retention.ms",
            "-3",
            "Invalid value -3 for configuration local.retention.ms: Value must be at least -2",
        ),
        (
            "local.retention.bytes",
            "-3",
            "Invalid value -3 for configuration local.retention.bytes: Value must be at least -2",
        ),
        (
            "min.cleanable.dirty.ratio",
            "-0.1",
            "Invalid value -0.1 for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
        (
            "min.cleanable.dirty.ratio",
            "1.5",
            "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            "min.cleanable.dirty.ratio",
            "1e7",
            "Invalid value 1.0E7 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            "min.cleanable.dirty.ratio",
            "1.0000001",
            "Invalid value 1.0000001 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            "min.cleanable.dirty.ratio",
            "Infinity",
            "Invalid value Infinity for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            "min.cleanable.dirty.ratio",
            "-Infinity",
            "Invalid value -Infinity for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
        (
            "min.cleanable.dirty.ratio",
            "-1e-4",
            "Invalid value -1.0E-4 for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
        (
            "min.cleanable.dirty.ratio",
            "-4.9e-324",
            "Invalid value -4.9E-324 for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
    ],
)
def test_range_violations_print_the_parsed_value(key: str, value: object, message: str) -> None:
    error = config_error({key: value})
    assert str(error) == message
    assert error.field == f"config.{key}"
    assert not error.stricter_than_kafka


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("segment.bytes", "14", "14"),
        ("retention.ms", "-1", "-1"),
        ("retention.bytes", "-12345", "-12345"),
        ("local.retention.ms", "-2", "-2"),
        (
            "local.retention.ms",
            "604800000",
            "604800000",
        ),  # the local retention rules: test_local_retention_rules
        ("local.retention.bytes", "-1", "-1"),
        ("min.cleanable.dirty.ratio", "1", "1.0"),
        ("min.cleanable.dirty.ratio", "-0.0", "-0.0"),
        ("min.cleanable.dirty.ratio", "4.9e-324", "4.9E-324"),
    ],
)
def test_range_boundaries_pass(key: str, value: str, expected: str) -> None:
    assert validate_topic_config({key: value}) == {key: expected}


@pytest.mark.parametrize("value", ["NaN", "-NaN", " NaN ", float("nan")])
def test_nan_dirty_ratio_is_refused_although_kafka_accepts_it(value: object) -> None:
    error = config_error({"min.cleanable.dirty.ratio": value})
    assert str(error) == (
        "Invalid value NaN for configuration min.cleanable.dirty.ratio: Value must be a number from 0 to 1 "
        "(Kafka's range check lets NaN through; rejected here)"
    )
    assert error.stricter_than_kafka
    assert error.field == "config.min.cleanable.dirty.ratio"


# ---- enumerations ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "compression.type",
            "GZIP",
            "Invalid value GZIP for configuration compression.type: "
            "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        (
            "compression.type",
            " none ",
            "Invalid value none for configuration compression.type: "
            "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        (
            "message.timestamp.type",
            "createtime",
            "Invalid value createtime for configuration message.timestamp.type: "
            "String must be one of: CreateTime, LogAppendTime",
        ),
        (
            "cleanup.policy",
            "compact,Delete",
            "Invalid value Delete for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        (
            "cleanup.policy",
            "compact,",
            "Invalid value  for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        (
            "cleanup.policy",
            "compact;delete",
            "Invalid value compact;delete for configuration cleanup.policy: "
            "String must be one of: compact, delete",
        ),
    ],
)
def test_enum_violations_name_the_offending_item(key: str, value: str, message: str) -> None:
    error = config_error({key: value})
    assert str(error) == message
    assert error.field == f"config.{key}"


@pytest.mark.parametrize("value", ["compact", "delete", "compact,delete", "delete, compact", "", " "])
def test_cleanup_policies_accepted(value: str) -> None:
    assert set(validate_topic_config({"cleanup.policy": value})) == {"cleanup.policy"}


# ---- throttled replica lists (§7.3) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("*", "*"),
        ("* ", "*"),
        ("", ""),
        (" ", ""),
        ("100:10,12:10", "100:10,12:10"),
        ("100:0,", "100:0,"),
        ("*,", "*,"),  # Kafka's second rule: the items run together are "*"
        (",*", ",*"),
    ],
)
def test_valid_throttled_replica_lists(value: str, expected: str) -> None:
    assert validate_topic_config({THROTTLED: value}) == {THROTTLED: expected}


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("100", "[100]"),
        ("100:", "[100:]"),
        ("100 :0", "[100 :0]"),
        ("100: 0", "[100: 0]"),
        ("*,100:10", "[*, 100:10]"),
        ("**", "[**]"),
        ("a:1", "[a:1]"),
    ],
)
def test_invalid_throttled_replica_lists(value: str, shown: str) -> None:
    for key in (THROTTLED, "follower.replication.throttled.replicas"):
        error = config_error({key: value})
        assert str(error) == f"Invalid value {shown} for configuration {key}: {key} {THROTTLED_RULE}"
        assert error.field == f"config.{key}"


def test_empty_items_are_valid_replicas() -> None:
    """The split eats the whitespace around commas, and an empty item matches ``([0-9]+:[0-9]+)?``."""
    assert validate_topic_config({THROTTLED: "100:10,  ,"}) == {THROTTLED: "100:10,,"}
    assert validate_topic_config({THROTTLED: " , "}) == {THROTTLED: ","}


# ---- message.format.version (§7.3) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "2.8.1",
        "3.4",
        "3.4-IV0",
        "0.10.0-IV1",
        "0.10.0",
        "0.8.2.2",
        "1.0.1",
        "3.0-IV1",
        "0.11.0-IV2.9",
        " 2.8 ",
    ],
)
def test_message_format_versions_accepted(value: str) -> None:
    key = "message.format.version"
    assert validate_topic_config({key: value}) == {key: value.strip()}


@pytest.mark.parametrize(
    ("value", "version"),
    [
        ("3.5", "3.5"),
        ("3.4-IV1", "3.4-IV1"),
        ("3.0-iv1", "3.0-iv1"),
        ("3", "3"),
        ("3.4.", "3.4."),
        ("0.10", "0.10"),
        ("0.10.3", "0.10.3"),
        ("", ""),
        ("  ", ""),
        ("...", "..."),
        ("latest", "latest"),
        (" 2.9 ", "2.9"),
    ],
)
def test_message_format_versions_refused(value: str, version: str) -> None:
    error = config_error({"message.format.version": value})
    assert str(error) == (
        f"Invalid value {version} for configuration message.format.version: Version {version} is not a valid version"
    )
    assert error.field == "config.message.format.version"


@pytest.mark.parametrize(
    ("kafka_version", "accepted", "refused"),
    [
        ((2, 8), ["2.8", "2.8-IV1", "2.8.2", "0.11.0"], ["3.0", "3.0-IV1", "3.4"]),
        ((3, 3), ["3.3", "3.3-IV3", "3.0-IV1"], ["3.4", "3.4-IV0"]),
        ((3, 4), ["3.4", "3.4-IV0"], ["3.5", "3.5-IV0"]),
        # 3.6 defines the versions of 3.5 and its own (3.6.2:server-common/.../MetadataVersion.java:171-186)
        ((3, 6), ["3.4-IV0", "3.5", "3.6", "3.6-IV2"], ["3.7", "3.7-IV0"]),
    ],
)
def test_a_cluster_knows_the_versions_up_to_its_own_release(
    kafka_version: tuple[int, int], accepted: list[str], refused: list[str]
) -> None:
    key = "message.format.version"
    for version in accepted:
        assert validate_topic_config({key: version}, kafka_version=kafka_version) == {key: version}
    # ApiVersionValidator (2.1-3.2) quotes the version, MetadataVersionValidator (3.3+) does not
    quote = "`" if kafka_version < (3, 3) else ""
    for version in refused:
        error = config_error({key: version}, kafka_version=kafka_version)
        assert str(error) == (
            f"Invalid value {version} for configuration {key}: Version {quote}{version}{quote} is not a valid version"
        )


# ---- order: the first failure in definition order wins ---------------------------------------------------------


def test_definition_order_not_alphabetical_decides_the_first_failure() -> None:
    # segment.ms sorts after min.insync.replicas but is defined second; segment.bytes is defined first.
    props: dict[str, object] = {"min.insync.replicas": "0", "segment.ms": "0", "segment.bytes": "1"}
    assert str(config_error(props)) == (
        "Invalid value 1 for configuration segment.bytes: Value must be at least 14"
    )
    del props["segment.bytes"]
    assert (
        str(config_error(props)) == "Invalid value 0 for configuration segment.ms: Value must be at least 1"
    )


def test_dirty_ratio_is_checked_before_cleanup_policy() -> None:
    props: dict[str, object] = {"cleanup.policy": "none", "min.cleanable.dirty.ratio": "2"}
    assert str(config_error(props)) == (
        "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"
    )


def test_a_parse_failure_and_a_range_failure_compete_by_position() -> None:
    props: dict[str, object] = {"retention.ms": "-5", "max.message.bytes": "big"}
    assert (
        str(config_error(props))
        == "Invalid value -5 for configuration retention.ms: Value must be at least -1"
    )


def test_a_type_error_competes_by_position_too() -> None:
    props: dict[str, object] = {"preallocate": ["x"], "segment.ms": "soon"}
    assert (
        str(config_error(props))
        == "Invalid value soon for configuration segment.ms: Not a number of type LONG"
    )


def test_value_failures_come_before_the_compaction_cross_check() -> None:
    props: dict[str, object] = {
        "min.compaction.lag.ms": "10",
        "max.compaction.lag.ms": "5",
        "preallocate": "y",
    }
    assert str(config_error(props)) == (
        "Invalid value y for configuration preallocate: Expected value to be either true or false"
    )


# ---- min.compaction.lag.ms <= max.compaction.lag.ms ------------------------------------------------------------


def test_min_compaction_lag_above_max_is_a_conflict() -> None:
    error = invalid_configuration({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": " 5 "})
    assert (
        str(error) == "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"
    )
    assert error.field == "config"


def test_the_cross_check_uses_defaults_for_absent_keys() -> None:
    assert str(invalid_configuration({"max.compaction.lag.ms": "1", "min.compaction.lag.ms": 2})) == (
        "conflict topic config setting min.compaction.lag.ms (2) > max.compaction.lag.ms (1)"
    )
    # min defaults to 0, which is below any valid max
    assert validate_topic_config({"max.compaction.lag.ms": "1"}) == {"max.compaction.lag.ms": "1"}
    # max defaults to Long.MAX_VALUE, which no min can exceed
    long_max = "9223372036854775807"
    assert validate_topic_config({"min.compaction.lag.ms": long_max}) == {"min.compaction.lag.ms": long_max}


def test_equal_compaction_lags_are_fine() -> None:
    props: dict[str, object] = {"min.compaction.lag.ms": "7", "max.compaction.lag.ms": "7"}
    assert validate_topic_config(props) == {"max.compaction.lag.ms": "7", "min.compaction.lag.ms": "7"}
