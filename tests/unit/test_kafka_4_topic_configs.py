"""The KRaft-only lines 4.0 and 4.1 judge topic configs as those releases do (kraft.md §4), and a ZooKeeper-mode
cluster still cannot declare them: each rule checked on the lines on both sides of its change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.kafka.broker_settings import BrokerSettings
from topic_operator.kafka.errors import ConfigError, InvalidConfigurationError, KafkaError
from topic_operator.kafka.java_lang import INT_MAX, LONG_MAX
from topic_operator.kafka.releases import (
    ALL_KAFKA_VERSIONS,
    KAFKA_VERSIONS,
    KRAFT_ONLY_VERSIONS,
    NEWEST_KAFKA,
    RELEASE_LINES,
    UnknownKafkaVersionError,
    format_version,
    parse_kafka_version,
    release_line,
)
from topic_operator.kafka.topic_configs import (
    TOPIC_CONFIGS,
    remote_storage_turned_off,
    topic_config_names,
    topic_config_problems,
    topic_configs_at,
    validate_topic_config,
)

Version = tuple[int, int]
KRAFT_4 = [(4, 0), (4, 1)]
REMOVED_IN_4_0 = ["message.format.version", "message.timestamp.difference.max.ms"]
RUNNING_TIERED_STORAGE = BrokerSettings.of({"remote.log.storage.system.enable": "true"})


def ids(versions: list[Version]) -> list[str]:
    return [format_version(v) for v in versions]


def refusal(props: dict[str, object], version: Version, broker: BrokerSettings | None = None) -> KafkaError:
    with pytest.raises(KafkaError) as raised:
        validate_topic_config(props, kafka_version=version, broker=broker)
    return raised.value


# ---- which lines exist, and who may declare them ----------------------------------------------------------------


def test_the_zookeeper_lines_still_end_at_3_9() -> None:
    assert NEWEST_KAFKA == (3, 9)
    assert KAFKA_VERSIONS[-1] == (3, 9)
    assert RELEASE_LINES[-1].version == (3, 9)
    assert not set(KRAFT_ONLY_VERSIONS) & set(KAFKA_VERSIONS)
    assert (*KAFKA_VERSIONS, (4, 0), (4, 1)) == ALL_KAFKA_VERSIONS


@pytest.mark.parametrize("text", ["4.0", "4.1"])
def test_parse_kafka_version_refuses_a_kraft_only_line_by_default(text: str) -> None:
    with pytest.raises(UnknownKafkaVersionError) as raised:
        parse_kafka_version(text)
    message = str(raised.value)
    assert message.startswith(f"'{text}' is not a ZooKeeper-mode Kafka release line")
    assert f"Kafka {text} runs only in KRaft mode" in message
    assert message.endswith("one of 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, "
                            "3.7, 3.8, 3.9")  # fmt: skip


def test_parse_kafka_version_takes_the_kraft_only_lines_when_asked() -> None:
    assert parse_kafka_version("4.0", kraft=True) == (4, 0)
    assert parse_kafka_version("4.1", kraft=True) == (4, 1)
    assert parse_kafka_version("3.9", kraft=True) == (3, 9)
    with pytest.raises(
        UnknownKafkaVersionError, match=r"^'4\.2' is not a Kafka release line .*, 3\.9, 4\.0, 4\.1$"
    ):
        parse_kafka_version("4.2", kraft=True)


def test_a_zookeeper_line_is_refused_without_a_kraft_note() -> None:
    with pytest.raises(UnknownKafkaVersionError) as raised:
        parse_kafka_version("2.9")
    assert "KRaft" not in str(raised.value)


@pytest.mark.parametrize(("version", "tag"), [((4, 0), "4.0.0"), ((4, 1), "4.1.0")])
def test_the_kraft_only_lines_have_rows(version: Version, tag: str) -> None:
    line = release_line(version)
    assert line.tag == tag
    assert line.kraft_only
    assert not release_line((3, 9)).kraft_only
    with pytest.raises(UnknownKafkaVersionError, match=r"Kafka 4\.2 is not a release line"):
        release_line((4, 2))


# ---- 4.0: message.format.version and message.timestamp.difference.max.ms are gone --------------------------------


@pytest.mark.parametrize("version", KRAFT_4, ids=ids(KRAFT_4))
@pytest.mark.parametrize(
    ("key", "value"), [("message.format.version", "3.0"), ("message.timestamp.difference.max.ms", "1000")]
)
def test_a_key_4_0_removed_is_an_unknown_name_on_4_x(version: Version, key: str, value: str) -> None:
    error = refusal({key: value}, version)
    assert type(error) is InvalidConfigurationError
    assert str(error) == f"Unknown topic config name: {key}"
    assert error.field == f"config.{key}"
    assert not error.stricter_than_kafka
    assert key not in topic_config_names(version)
    assert [str(p) for p in topic_config_problems({key: value}, kafka_version=version)] == [
        f"Unknown topic config name: {key}"
    ]


@pytest.mark.parametrize(
    ("key", "value"), [("message.format.version", "3.0"), ("message.timestamp.difference.max.ms", "1000")]
)
def test_a_key_4_0_removed_is_still_accepted_on_3_9(key: str, value: str) -> None:
    assert validate_topic_config({key: value}, kafka_version=(3, 9)) == {key: value}


@given(st.text(max_size=12))
def test_message_format_version_is_refused_on_4_x_whatever_its_value(value: str) -> None:
    for version in KRAFT_4:
        with pytest.raises(InvalidConfigurationError) as raised:
            validate_topic_config({"message.format.version": value}, kafka_version=version)
        assert str(raised.value) == "Unknown topic config name: message.format.version"


def test_the_catalogue_says_when_a_key_was_removed() -> None:
    assert TOPIC_CONFIGS["message.format.version"].removed == (4, 0)
    assert TOPIC_CONFIGS["message.timestamp.difference.max.ms"].removed == (4, 0)
    assert TOPIC_CONFIGS["segment.bytes"].removed is None


def test_4_x_defines_the_keys_of_3_9_less_the_removed_ones_in_definition_order() -> None:
    expected = tuple(name for name in topic_config_names((3, 9)) if name not in REMOVED_IN_4_0)
    assert topic_config_names((4, 0)) == expected
    assert topic_config_names((4, 1)) == tuple(n for n in expected if n != "message.downconversion.enable")


# ---- 4.0: message.timestamp.after.max.ms defaults to one hour -----------------------------------------------------


@pytest.mark.parametrize(
    ("version", "default"),
    [((3, 6), str(LONG_MAX)), ((3, 9), str(LONG_MAX)), ((4, 0), "3600000"), ((4, 1), "3600000")],
    ids=["3.6", "3.9", "4.0", "4.1"],
)
def test_the_default_of_message_timestamp_after_max_ms(version: Version, default: str) -> None:
    definition = topic_configs_at(version)["message.timestamp.after.max.ms"]
    assert definition.default == default
    assert definition.valid_values == "[0,...]"


def test_message_timestamp_before_max_ms_keeps_its_default_on_4_x() -> None:
    assert topic_configs_at((4, 0))["message.timestamp.before.max.ms"].default == str(LONG_MAX)


# ---- 4.1 (not 4.0): segment.bytes at least 1 MiB -------------------------------------------------------------------


@pytest.mark.parametrize("version", [(3, 9), (4, 0)], ids=["3.9", "4.0"])
def test_segment_bytes_1000_is_accepted_before_4_1(version: Version) -> None:
    assert validate_topic_config({"segment.bytes": "1000"}, kafka_version=version) == {
        "segment.bytes": "1000"
    }
    assert validate_topic_config({"segment.bytes": 14}, kafka_version=version) == {"segment.bytes": "14"}
    assert str(refusal({"segment.bytes": "13"}, version)) == (
        "Invalid value 13 for configuration segment.bytes: Value must be at least 14"
    )


def test_segment_bytes_1000_is_refused_on_4_1_in_kafkas_words() -> None:
    error = refusal({"segment.bytes": "1000"}, (4, 1))
    assert type(error) is ConfigError
    assert str(error) == "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"
    assert error.field == "config.segment.bytes"
    assert not error.stricter_than_kafka
    assert topic_configs_at((4, 1))["segment.bytes"].valid_values == "[1048576,...]"


@given(st.integers(min_value=14, max_value=INT_MAX))
def test_4_1_takes_a_segment_size_exactly_when_it_is_at_least_1_mib(size: int) -> None:
    assert validate_topic_config({"segment.bytes": size}, kafka_version=(4, 0)) == {
        "segment.bytes": str(size)
    }
    if size >= 1048576:
        assert validate_topic_config({"segment.bytes": size}, kafka_version=(4, 1)) == {
            "segment.bytes": str(size)
        }
    else:
        assert str(refusal({"segment.bytes": size}, (4, 1))).endswith("Value must be at least 1048576")


# ---- 4.0: message.downconversion.enable is a no-op, still accepted; 4.1: an unknown name ---------------------------


@pytest.mark.parametrize("version", [(3, 9), (4, 0)], ids=ids([(3, 9), (4, 0)]))
@pytest.mark.parametrize("value", ["true", "false", True])
def test_message_downconversion_enable_is_still_accepted(version: Version, value: object) -> None:
    assert validate_topic_config({"message.downconversion.enable": value}, kafka_version=version) == {
        "message.downconversion.enable": str(value).lower()
    }


def test_message_downconversion_enable_is_an_unknown_name_on_4_1() -> None:
    """As a real 4.1.1 broker answers it (the KRaft sweep of ``tests/real`` asks it)."""
    with pytest.raises(
        InvalidConfigurationError, match=r"^Unknown topic config name: message.downconversion.enable$"
    ):
        validate_topic_config({"message.downconversion.enable": "true"}, kafka_version=(4, 1))


# ---- every line, and what KRaft no longer refuses --------------------------------------------------------------


@pytest.mark.parametrize("version", KRAFT_4, ids=ids(KRAFT_4))
def test_every_default_of_a_4_x_line_is_valid_on_that_line(version: Version) -> None:
    defaults = {name: d.default for name, d in topic_configs_at(version).items()}
    assert validate_topic_config(defaults, kafka_version=version) == dict(sorted(defaults.items()))


@pytest.mark.parametrize("version", KRAFT_4, ids=ids(KRAFT_4))
@pytest.mark.parametrize("key", ["remote.log.copy.disable", "remote.log.delete.on.disable"])
def test_the_zookeeper_mode_refusal_of_the_remote_log_keys_ends_with_3_9(version: Version, key: str) -> None:
    assert validate_topic_config({key: "true"}, kafka_version=version) == {key: "true"}
    assert "under Zookeeper's mode" in str(refusal({key: "true"}, (3, 9)))


@pytest.mark.parametrize("version", KRAFT_4, ids=ids(KRAFT_4))
def test_with_remote_copy_disabled_local_retention_must_equal_total_on_4_x(version: Version) -> None:
    base: dict[str, object] = {"remote.storage.enable": "true", "remote.log.copy.disable": "true"}
    matching = {**base, "retention.ms": "1000", "local.retention.ms": "1000"}
    assert validate_topic_config(matching, kafka_version=version, broker=RUNNING_TIERED_STORAGE) == matching
    error = refusal(
        {**base, "retention.ms": "1000", "local.retention.ms": "500"}, version, RUNNING_TIERED_STORAGE
    )
    assert type(error) is InvalidConfigurationError
    assert error.field == "config.local.retention.ms"
    assert str(error) == (
        "When `remote.log.copy.disable` is set to true, the `local.retention.ms` and `retention.ms` must be set to "
        "the identical value because there will be no more logs copied to the remote storage."
    )
    # without remote storage on, Kafka does not look
    assert validate_topic_config(
        {"remote.log.copy.disable": "true", "retention.ms": "1000", "local.retention.ms": "500"},
        kafka_version=version,
    )


@pytest.mark.parametrize("version", KRAFT_4, ids=ids(KRAFT_4))
def test_turning_remote_storage_off_on_4_x_is_kafkas_own_refusal(version: Version) -> None:
    before, after = {"remote.storage.enable": "true"}, {"remote.storage.enable": "false"}
    error = remote_storage_turned_off(before, after, kafka_version=version)
    assert error is not None
    assert not error.stricter_than_kafka
    assert "ZooKeeper" not in str(error)
    assert str(error).endswith("`remote.storage.enable=false,remote.log.delete.on.disable=true`.")
    deleting = {**after, "remote.log.delete.on.disable": "true"}
    assert remote_storage_turned_off(before, deleting, kafka_version=version) is None
    assert validate_topic_config(deleting, kafka_version=version) == deleting
    zookeeper = remote_storage_turned_off(before, after, kafka_version=(3, 9))
    assert zookeeper is not None
    assert zookeeper.stricter_than_kafka
