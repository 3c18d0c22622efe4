"""The topic-config catalogue matches Kafka 3.4.0's LogConfig.configDef (semantics §7.1), in definition order."""

from dataclasses import FrozenInstanceError
from types import MappingProxyType

import pytest

from topic_operator.kafka.topic_configs import (
    METADATA_VERSIONS,
    OLDEST_SUPPORTED_KAFKA,
    TOPIC_CONFIGS,
    ConfigType,
    MetadataVersionValidator,
    Range,
    ThrottledReplicaListValidator,
    ValidList,
    ValidString,
    topic_config_names,
    validate_topic_config,
)

LONG_MAX = "9223372036854775807"

# Kafka 3.4.0 core/src/main/scala/kafka/log/LogConfig.scala, `configDef`: the .define calls, then the three
# .defineInternal calls. The two 3.6 keys sit where 3.6's LogConfig.java defines them.
DEFINITION_ORDER_3_4 = [
    "segment.bytes",
    "segment.ms",
    "segment.jitter.ms",
    "segment.index.bytes",
    "flush.messages",
    "flush.ms",
    "retention.bytes",
    "retention.ms",
    "max.message.bytes",
    "index.interval.bytes",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "file.delete.delay.ms",
    "min.cleanable.dirty.ratio",
    "cleanup.policy",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "compression.type",
    "preallocate",
    "message.format.version",
    "message.timestamp.type",
    "message.timestamp.difference.max.ms",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
    "message.downconversion.enable",
    "remote.storage.enable",
    "local.retention.ms",
    "local.retention.bytes",
]

# Semantics §7.1, row by row: key -> (type, default, valid values as Kafka prints them, broker keys).
TABLE_7_1 = {
    "cleanup.policy": (ConfigType.LIST, "delete", "[compact, delete]", ("log.cleanup.policy",)),
    "compression.type": (
        ConfigType.STRING,
        "producer",
        "[uncompressed, zstd, lz4, snappy, gzip, producer]",
        ("compression.type",),
    ),
    "delete.retention.ms": (ConfigType.LONG, "86400000", "[0,...]", ("log.cleaner.delete.retention.ms",)),
    "file.delete.delay.ms": (ConfigType.LONG, "60000", "[0,...]", ("log.segment.delete.delay.ms",)),
    "flush.messages": (ConfigType.LONG, LONG_MAX, "[1,...]", ("log.flush.interval.messages",)),
    "flush.ms": (
        ConfigType.LONG,
        LONG_MAX,
        "[0,...]",
        ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    ),
    "follower.replication.throttled.replicas": (
        ConfigType.LIST,
        "",
        "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
        (),
    ),
    "index.interval.bytes": (ConfigType.INT, "4096", "[0,...]", ("log.index.interval.bytes",)),
    "leader.replication.throttled.replicas": (
        ConfigType.LIST,
        "",
        "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
        (),
    ),
    "local.retention.bytes": (ConfigType.LONG, "-2", "[-2,...]", ()),
    "local.retention.ms": (ConfigType.LONG, "-2", "[-2,...]", ()),
    "max.compaction.lag.ms": (ConfigType.LONG, LONG_MAX, "[1,...]", ("log.cleaner.max.compaction.lag.ms",)),
    "max.message.bytes": (ConfigType.INT, "1048588", "[0,...]", ("message.max.bytes",)),
    "message.downconversion.enable": (ConfigType.BOOLEAN, "true", "", ("log.message.downconversion.enable",)),
    "message.format.version": (
        ConfigType.STRING,
        "3.0-IV1",
        "[" + ", ".join(METADATA_VERSIONS) + "]",
        ("log.message.format.version",),
    ),
    "message.timestamp.difference.max.ms": (
        ConfigType.LONG,
        LONG_MAX,
        "[0,...]",
        ("log.message.timestamp.difference.max.ms",),
    ),
    "message.timestamp.type": (
        ConfigType.STRING,
        "CreateTime",
        "[CreateTime, LogAppendTime]",
        ("log.message.timestamp.type",),
    ),
    "min.cleanable.dirty.ratio": (
        ConfigType.DOUBLE,
        "0.5",
        "[0,...,1]",
        ("log.cleaner.min.cleanable.ratio",),
    ),
    "min.compaction.lag.ms": (ConfigType.LONG, "0", "[0,...]", ("log.cleaner.min.compaction.lag.ms",)),
    "min.insync.replicas": (ConfigType.INT, "1", "[1,...]", ("min.insync.replicas",)),
    "preallocate": (ConfigType.BOOLEAN, "false", "", ("log.preallocate",)),
    "remote.storage.enable": (ConfigType.BOOLEAN, "false", "", ()),
    "retention.bytes": (ConfigType.LONG, "-1", "", ("log.retention.bytes",)),
    "retention.ms": (
        ConfigType.LONG,
        "604800000",
        "[-1,...]",
        ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    ),
    "segment.bytes": (ConfigType.INT, "1073741824", "[14,...]", ("log.segment.bytes",)),
    "segment.index.bytes": (ConfigType.INT, "10485760", "[4,...]", ("log.index.size.max.bytes",)),
    "segment.jitter.ms": (ConfigType.LONG, "0", "[0,...]", ("log.roll.jitter.ms", "log.roll.jitter.hours")),
    "segment.ms": (ConfigType.LONG, "604800000", "[1,...]", ("log.roll.ms", "log.roll.hours")),
    "unclean.leader.election.enable": (ConfigType.BOOLEAN, "false", "", ("unclean.leader.election.enable",)),
}

KEYS_3_6 = {
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
}
KEYS_3_8 = ("compression.gzip.level", "compression.lz4.level", "compression.zstd.level")
KEYS_3_9 = ("remote.log.copy.disable", "remote.log.delete.on.disable")


def test_the_3_4_names_come_in_kafkas_definition_order() -> None:
    assert list(topic_config_names((3, 4))) == DEFINITION_ORDER_3_4
    assert list(topic_config_names()) == DEFINITION_ORDER_3_4


def test_definition_order_is_not_alphabetical() -> None:
    """The §7.1 table is sorted by name; validation order must not be."""
    assert list(topic_config_names()) != sorted(topic_config_names())


def test_the_3_6_keys_follow_the_timestamp_difference_key() -> None:
    names = list(TOPIC_CONFIGS)
    difference = names.index("message.timestamp.difference.max.ms")
    assert names[difference + 1 : difference + 3] == list(KEYS_3_6)
    assert names[difference + 3] == "leader.replication.throttled.replicas"
    # the catalogue holds every line's keys: 3.4's, and those 3.6, 3.8 and 3.9 added
    assert len(names) == len(DEFINITION_ORDER_3_4) + len(KEYS_3_6) + len(KEYS_3_8) + len(KEYS_3_9)


def test_the_catalogue_is_exactly_the_table_of_section_7_1() -> None:
    assert set(topic_config_names()) == set(TABLE_7_1)


@pytest.mark.parametrize("name", sorted(TABLE_7_1))
def test_each_key_has_the_tables_type_default_validator_and_broker_keys(name: str) -> None:
    config_type, default, valid_values, broker_keys = TABLE_7_1[name]
    definition = TOPIC_CONFIGS[name]
    assert definition.name == name
    assert definition.type is config_type
    assert definition.default == default
    assert definition.valid_values == valid_values
    assert definition.broker_keys == broker_keys
    assert definition.doc


@pytest.mark.parametrize(("name", "broker_key"), sorted(KEYS_3_6.items()))
def test_the_3_6_timestamp_keys(name: str, broker_key: str) -> None:
    definition = TOPIC_CONFIGS[name]
    assert definition.type is ConfigType.LONG
    assert definition.default == LONG_MAX
    assert definition.validator == Range(0)
    assert definition.broker_keys == (broker_key,)
    assert definition.since == (3, 6)
    assert not definition.internal


def test_remote_storage_keys_are_internal_and_exist_from_3_0() -> None:
    remote = {"remote.storage.enable", "local.retention.ms", "local.retention.bytes"}
    for name, definition in TOPIC_CONFIGS.items():
        assert definition.internal == (name in remote), name
        if name in remote:
            assert definition.since == (3, 0)
    assert remote.isdisjoint(topic_config_names((2, 8)))
    assert remote <= set(topic_config_names((3, 0)))


def test_every_other_key_is_available_from_the_oldest_supported_release() -> None:
    # the oldest supported line is 2.0, whose LogConfig lacks only max.compaction.lag.ms (added in 2.3)
    older = set(TABLE_7_1) - {"remote.storage.enable", "local.retention.ms", "local.retention.bytes"}
    assert OLDEST_SUPPORTED_KAFKA == (2, 0)
    assert {n for n, d in TOPIC_CONFIGS.items() if d.since == OLDEST_SUPPORTED_KAFKA} == older - {
        "max.compaction.lag.ms"
    }
    assert TOPIC_CONFIGS["max.compaction.lag.ms"].since == (2, 3)


def test_names_known_by_version() -> None:
    assert len(topic_config_names((2, 0))) == 25
    assert len(topic_config_names((2, 3))) == 26
    assert len(topic_config_names((2, 8))) == 26
    assert len(topic_config_names((3, 5))) == 29
    assert len(topic_config_names((3, 6))) == 31
    assert len(topic_config_names((3, 8))) == 34  # the three compression levels
    assert len(topic_config_names((3, 9))) == 36  # and remote.log.copy.disable, remote.log.delete.on.disable


def test_validators_carry_kafkas_rules() -> None:
    assert TOPIC_CONFIGS["segment.bytes"].validator == Range(14)
    assert TOPIC_CONFIGS["min.cleanable.dirty.ratio"].validator == Range(0, 1)
    assert TOPIC_CONFIGS["retention.bytes"].validator is None
    assert TOPIC_CONFIGS["cleanup.policy"].validator == ValidList(("compact", "delete"))
    assert TOPIC_CONFIGS["message.timestamp.type"].validator == ValidString(("CreateTime", "LogAppendTime"))
    assert isinstance(TOPIC_CONFIGS["message.format.version"].validator, MetadataVersionValidator)
    assert isinstance(
        TOPIC_CONFIGS["leader.replication.throttled.replicas"].validator, ThrottledReplicaListValidator
    )


def test_the_3_4_metadata_versions() -> None:
    assert METADATA_VERSIONS[:5] == ("0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0")
    assert METADATA_VERSIONS[-6:] == ("3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0")
    assert len(METADATA_VERSIONS) == 42
    assert len(set(METADATA_VERSIONS)) == 42


def test_the_catalogue_is_read_only() -> None:
    assert isinstance(TOPIC_CONFIGS, MappingProxyType)
    with pytest.raises(TypeError):
        TOPIC_CONFIGS["x"] = TOPIC_CONFIGS["segment.bytes"]  # type: ignore[index]
    definition = TOPIC_CONFIGS["segment.bytes"]
    with pytest.raises(FrozenInstanceError):
        definition.default = "1"  # type: ignore[misc,unused-ignore]


def test_an_empty_config_is_valid_and_stays_empty() -> None:
    assert validate_topic_config({}) == {}
    assert validate_topic_config({}, kafka_version=(3, 6)) == {}


@pytest.mark.parametrize("version", [(3, 4), (3, 6)])
def test_every_default_given_explicitly_is_valid_and_already_canonical(version: tuple[int, int]) -> None:
    defaults = {name: TOPIC_CONFIGS[name].default for name in topic_config_names(version)}
    assert validate_topic_config(defaults, kafka_version=version) == dict(sorted(defaults.items()))


def test_an_older_cluster_lists_only_its_own_versions() -> None:
    assert MetadataVersionValidator((2, 8)).description.endswith(", 2.8-IV0, 2.8-IV1]")
    assert MetadataVersionValidator((3, 3)).description.endswith(", 3.3-IV3]")
    assert MetadataVersionValidator().description == "[" + ", ".join(METADATA_VERSIONS) + "]"


@pytest.mark.parametrize("version", [(2, 8), (3, 0), (3, 3)])
def test_an_older_cluster_validates_configs_that_leave_the_format_version_unset(
    version: tuple[int, int],
) -> None:
    # 3.4's default message.format.version (3.0-IV1) is unknown to a 2.8 broker; an absent key must not be judged
    # by it, or every config of that cluster would be refused.
    assert validate_topic_config({"retention.ms": " 1000 "}, kafka_version=version) == {
        "retention.ms": "1000"
    }
