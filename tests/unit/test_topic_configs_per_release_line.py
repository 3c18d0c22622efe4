"""What each release line from 2.0 to 3.9 accepts that another does not (kafka-versions.md a-c), one rule per test,
each parametrised over the lines on both sides of the change."""

from __future__ import annotations

import pytest

from topic_operator.kafka.broker_settings import BrokerSettings
from topic_operator.kafka.errors import ConfigError, InvalidConfigurationError, KafkaError
from topic_operator.kafka.releases import KAFKA_VERSIONS, RELEASE_LINES, ReleaseLine, format_version
from topic_operator.kafka.topic_configs import (
    ThrottledReplicaListValidator,
    remote_storage_turned_off,
    topic_config_names,
    topic_configs_at,
    validate_topic_config,
)

Version = tuple[int, int]
LINES_FROM = {since: [v for v in KAFKA_VERSIONS if v >= since] for since in KAFKA_VERSIONS}


def refusal(props: dict[str, object], version: Version, broker: BrokerSettings | None = None) -> KafkaError:
    with pytest.raises(KafkaError) as raised:
        validate_topic_config(props, kafka_version=version, broker=broker)
    return raised.value


def ids(versions: list[Version]) -> list[str]:
    return [format_version(v) for v in versions]


# ---- names ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "since"),
    [
        ("max.compaction.lag.ms", (2, 3)),
        ("remote.storage.enable", (3, 0)),
        ("local.retention.ms", (3, 0)),
        ("message.timestamp.before.max.ms", (3, 6)),
        ("compression.gzip.level", (3, 8)),
        ("compression.zstd.level", (3, 8)),
        ("remote.log.copy.disable", (3, 9)),
    ],
)
def test_a_key_is_unknown_before_the_line_that_defines_it(key: str, since: Version) -> None:
    for version in KAFKA_VERSIONS:
        known = key in topic_config_names(version)
        assert known is (version >= since), format_version(version)
        if not known:
            assert str(refusal({key: "1"}, version)) == f"Unknown topic config name: {key}"


def test_a_3_9_cluster_takes_compression_gzip_level_9() -> None:
    """The issue's example: refused as unknown on a kafkaVersion 3.9 cluster before the catalogue knew 3.8."""
    assert validate_topic_config({"compression.gzip.level": "9"}, kafka_version=(3, 9)) == {
        "compression.gzip.level": "9"
    }


@pytest.mark.parametrize("version", LINES_FROM[(3, 8)], ids=ids(LINES_FROM[(3, 8)]))
@pytest.mark.parametrize(
    ("key", "accepted", "refused", "reason"),
    [
        (
            "compression.gzip.level",
            ["-1", "1", "9"],
            ["0", "-2", "10"],
            "Value must be between 1 and 9 or equal to -1",
        ),
        ("compression.lz4.level", ["1", "17"], ["0", "18"], None),
        ("compression.zstd.level", ["-131072", "22"], ["-131073", "23"], None),
    ],
)
def test_the_compression_levels_of_3_8(
    version: Version, key: str, accepted: list[str], refused: list[str], reason: str | None
) -> None:
    for value in accepted:
        assert validate_topic_config({key: value}, kafka_version=version) == {key: value}
    for value in refused:
        error = refusal({key: value}, version)
        assert isinstance(error, ConfigError)
        if reason is not None:
            assert str(error) == f"Invalid value {value} for configuration {key}: {reason}"


def test_the_internal_remote_keys_become_public_in_3_6() -> None:
    for version in KAFKA_VERSIONS:
        definitions = topic_configs_at(version)
        if "remote.storage.enable" in definitions:
            assert definitions["remote.storage.enable"].internal is (version < (3, 6))


# ---- types, ranges and defaults ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KAFKA_VERSIONS, ids=ids(list(KAFKA_VERSIONS)))
@pytest.mark.parametrize(("key", "minimum_from_3_3"), [("segment.index.bytes", 4), ("flush.messages", 1)])
def test_the_minimums_before_3_3_are_zero(version: Version, key: str, minimum_from_3_3: int) -> None:
    minimum = minimum_from_3_3 if version >= (3, 3) else 0
    assert validate_topic_config({key: str(minimum)}, kafka_version=version) == {key: str(minimum)}
    assert str(refusal({key: str(minimum - 1)}, version)) == (
        f"Invalid value {minimum - 1} for configuration {key}: Value must be at least {minimum}"
    )


@pytest.mark.parametrize("version", KAFKA_VERSIONS, ids=ids(list(KAFKA_VERSIONS)))
def test_retention_ms_has_a_minimum_from_2_2(version: Version) -> None:
    props: dict[str, object] = {"retention.ms": "-5"}
    if version < (2, 2):
        assert (
            validate_topic_config(props, kafka_version=version) == props
        )  # any long: brokers read it as unlimited
    else:
        assert str(refusal(props, version)) == (
            "Invalid value -5 for configuration retention.ms: Value must be at least -1"
        )


@pytest.mark.parametrize("version", KAFKA_VERSIONS, ids=ids(list(KAFKA_VERSIONS)))
def test_zstd_is_a_compression_type_from_2_1(version: Version) -> None:
    if version >= (2, 1):
        assert validate_topic_config({"compression.type": "zstd"}, kafka_version=version)
        return
    assert str(refusal({"compression.type": "zstd"}, version)) == (
        "Invalid value zstd for configuration compression.type: String must be one of: uncompressed, snappy, lz4, "
        "gzip, producer"
    )


@pytest.mark.parametrize(
    ("version", "max_message_bytes", "format_version"),
    [
        ((2, 0), "1000012", "2.0-IV1"),
        ((2, 4), "1000012", "2.4-IV1"),
        ((2, 5), "1048588", "2.5-IV0"),
        ((2, 8), "1048588", "2.8-IV1"),
        ((3, 0), "1048588", "3.0-IV1"),
        ((3, 9), "1048588", "3.0-IV1"),
    ],
)
def test_defaults_per_line(version: Version, max_message_bytes: str, format_version: str) -> None:
    definitions = topic_configs_at(version)
    assert definitions["max.message.bytes"].default == max_message_bytes
    assert definitions["message.format.version"].default == format_version


@pytest.mark.parametrize("line", RELEASE_LINES, ids=[line.name for line in RELEASE_LINES])
def test_every_default_of_every_line_is_valid_on_that_line(line: ReleaseLine) -> None:
    version = line.version
    defaults = {name: d.default for name, d in topic_configs_at(version).items()}
    if version >= (
        3,
        6,
    ):  # given explicitly, remote storage stays off: the broker's path accepts its defaults
        assert defaults["remote.storage.enable"] == "false"
    assert validate_topic_config(defaults, kafka_version=version) == dict(sorted(defaults.items()))


# ---- message.format.version ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "accepted", "refused"),
    [
        ((2, 0), ["2.0", "2.0-IV1", "0.10.2.1", "1.1"], ["2.1", "2.1-IV0"]),
        ((2, 1), ["2.1", "2.1-IV2", "2.1.1"], ["2.2"]),
        ((2, 8), ["2.8.", "2.8.2"], ["3.0"]),  # Scala's split drops the trailing dot
        ((3, 3), ["3.3", "3.3-IV3"], ["2.8.", "3.4"]),  # Java's does not keep "2.8." apart
        ((3, 6), ["3.5", "3.6", "3.6-IV2"], ["3.7"]),
        ((3, 7), ["3.7", "3.7-IV4", "3.8-IV0"], ["3.8"]),  # short forms only up to the latest production
        ((3, 8), ["3.8", "3.9-IV0"], ["3.9"]),
        ((3, 9), ["3.9", "4.0-IV0", "4.0-IV1"], ["4.0", "4.0-IV2"]),
    ],
)
def test_the_versions_each_line_knows(version: Version, accepted: list[str], refused: list[str]) -> None:
    key = "message.format.version"
    for value in accepted:
        assert validate_topic_config({key: value}, kafka_version=version) == {key: value}
    quote = "`" if version < (3, 3) else ""
    for value in refused:
        error = refusal({key: value}, version)
        assert str(error).startswith(
            f"Invalid value {value} for configuration {key}: Version {quote}{value}{quote} is not a valid version"
        )


def test_2_0_has_no_format_version_validator_so_a_bad_one_is_refused_as_stricter() -> None:
    error = refusal({"message.format.version": "1.2"}, (2, 0))
    assert isinstance(error, ConfigError)
    assert error.stricter_than_kafka
    assert "its brokers then fail to parse it" in str(error)
    assert not refusal({"message.format.version": "1.2"}, (2, 1)).stricter_than_kafka


# ---- throttled replicas -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KAFKA_VERSIONS, ids=ids(list(KAFKA_VERSIONS)))
def test_a_list_starting_with_the_wildcard(version: Version) -> None:
    """2.0-2.7 take "*,100:10" and their brokers then fail to parse it; 2.8+ refuse it."""
    key = "follower.replication.throttled.replicas"
    error = refusal({key: "*,100:10"}, version)
    assert isinstance(error, ConfigError)
    assert error.stricter_than_kafka is (version < (2, 8))
    colon = "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
    old = "[partitionId],[brokerId]:[partitionId],[brokerId]:..."
    assert (colon if version >= (2, 3) else old) in str(error)
    assert validate_topic_config({key: "*"}, kafka_version=version) == {key: "*"}


def test_the_throttled_validator_of_each_era() -> None:
    assert topic_configs_at((2, 0))["leader.replication.throttled.replicas"].validator == (
        ThrottledReplicaListValidator(wildcard_alone=False, colon_format=False)
    )
    assert topic_configs_at((2, 7))["leader.replication.throttled.replicas"].validator == (
        ThrottledReplicaListValidator(wildcard_alone=False, colon_format=True)
    )
    assert topic_configs_at((2, 8))["leader.replication.throttled.replicas"].validator == (
        ThrottledReplicaListValidator()
    )


# ---- rules across keys -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", LINES_FROM[(2, 3)], ids=ids(LINES_FROM[(2, 3)]))
def test_the_compaction_lag_check_from_2_3(version: Version) -> None:
    error = refusal({"min.compaction.lag.ms": "200", "max.compaction.lag.ms": "100"}, version)
    assert type(error) is InvalidConfigurationError
    assert (
        str(error)
        == "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)"
    )


@pytest.mark.parametrize("version", LINES_FROM[(3, 6)], ids=ids(LINES_FROM[(3, 6)]))
def test_the_3_6_compaction_lag_check_reads_the_brokers_setting(version: Version) -> None:
    broker = BrokerSettings.of({"log.cleaner.max.compaction.lag.ms": "100"})
    error = refusal({"min.compaction.lag.ms": "200"}, version, broker)
    assert (
        str(error)
        == "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)"
    )
    assert validate_topic_config({"min.compaction.lag.ms": "200"}, kafka_version=(3, 5), broker=broker)


@pytest.mark.parametrize("version", [(3, 0), (3, 4), (3, 5)], ids=["3.0", "3.4", "3.5"])
def test_3_0_to_3_5_brokers_refuse_a_local_retention_above_theirs(version: Version) -> None:
    error = refusal({"retention.ms": "1000", "local.retention.ms": "-1"}, version)
    assert error.stricter_than_kafka
    period = "" if version == (3, 5) else "."  # 3.5's Java port dropped it
    assert str(error) == (
        "Invalid value -1 for configuration local.retention.ms: Value must not be -1 as retention.ms value is set "
        f"as 1000{period}"
    )


def test_3_0_to_3_5_compare_with_the_brokers_retention_when_stated() -> None:
    props: dict[str, object] = {"local.retention.ms": "5000"}
    assert "compared with Kafka's default" not in str(
        refusal(props, (3, 4), BrokerSettings.of({"log.retention.minutes": "0"}))
    )
    assert validate_topic_config(
        props, kafka_version=(3, 4), broker=BrokerSettings.of({"log.retention.hours": "1"})
    )
    # nothing stated: Kafka's default (7 days) decides, and the message says so
    assert validate_topic_config(props, kafka_version=(3, 4)) == {"local.retention.ms": "5000"}


@pytest.mark.parametrize("version", LINES_FROM[(3, 6)], ids=ids(LINES_FROM[(3, 6)]))
def test_3_6_refuses_remote_storage_unless_the_brokers_run_it(version: Version) -> None:
    props: dict[str, object] = {"remote.storage.enable": "true"}
    error = refusal(props, version)
    assert isinstance(error, ConfigError)
    assert str(error).startswith(
        "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log "
        "storage. (kafka-topic-operator takes the brokers' remote.log.storage.system.enable from the "
        "KafkaCluster's spec.brokerConfig"
    )
    running = BrokerSettings.of({"remote.log.storage.system.enable": "true"})
    assert validate_topic_config(props, kafka_version=version, broker=running) == props
    stated_off = BrokerSettings.of({"remote.log.storage.system.enable": "false"})
    assert str(refusal(props, version, stated_off)).endswith("with remote log storage.")


def test_before_3_6_remote_storage_is_not_checked_against_the_brokers() -> None:
    assert validate_topic_config({"remote.storage.enable": "true"}, kafka_version=(3, 5))


@pytest.mark.parametrize("version", LINES_FROM[(3, 6)], ids=ids(LINES_FROM[(3, 6)]))
def test_3_6_local_retention_rule_applies_only_with_remote_storage(version: Version) -> None:
    props: dict[str, object] = {"retention.ms": "1000", "local.retention.ms": "2000"}
    assert validate_topic_config(props, kafka_version=version) == props  # no constructor check any more
    running = BrokerSettings.of({"remote.log.storage.system.enable": "true"})
    error = refusal({**props, "remote.storage.enable": "true"}, version, running)
    assert not error.stricter_than_kafka
    assert str(error) == (
        "Invalid value 2000 for configuration local.retention.ms: Value must not be more than retention.ms "
        "property value: 1000"
    )


@pytest.mark.parametrize("key", ["remote.log.copy.disable", "remote.log.delete.on.disable"])
def test_3_9_refuses_the_remote_log_disable_keys_in_zookeeper_mode(key: str) -> None:
    assert validate_topic_config({key: "false"}, kafka_version=(3, 9)) == {key: "false"}
    error = refusal({key: "true"}, (3, 9))
    assert type(error) is InvalidConfigurationError
    assert error.field == f"config.{key}"
    assert str(error) == (
        "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` under Zookeeper's mode."
    )


def test_3_9_refuses_turning_remote_storage_off() -> None:
    before, after = {"remote.storage.enable": "true"}, {"remote.storage.enable": "false"}
    error = remote_storage_turned_off(before, after, kafka_version=(3, 9))
    assert error is not None
    assert error.stricter_than_kafka
    assert str(error).startswith("It is invalid to disable remote storage without deleting remote data.")
    assert remote_storage_turned_off(before, {}, kafka_version=(3, 9)) is not None  # removing the key too
    assert remote_storage_turned_off(before, after, kafka_version=(3, 8)) is None
    assert remote_storage_turned_off({}, after, kafka_version=(3, 9)) is None
    assert remote_storage_turned_off(before, before, kafka_version=(3, 9)) is None
