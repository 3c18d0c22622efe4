"""Topic configs as each Kafka release line from 2.0 to 4.1 judges them, and the canonical strings we write.

A declared config is only worth writing to ``/config/topics/<t>`` if every broker will accept it: brokers re-parse
the znode with the same ``ConfigDef``, and one value they cannot parse makes the topic (or the broker, at startup)
fail. So the catalogue and the checks follow Kafka's source rule for rule (semantics §7, kafka-versions.md a-c), in
Kafka's order and with Kafka's messages, including the Java parsing quirks (see ``java_lang``).

The catalogue is one table: each key's first definition and the revisions later lines made to it (a default, a
validator, internal to public), so that what a line accepts is read from data. ``topic_configs_at(version)`` is
one line's ``LogConfig.configDef``: which names exist, their types, defaults and validators, in definition order.

Two specs are compared by their canonical strings: "1000", 1000 and " 1000 " declare the same retention, and a
plan must not rewrite a topic because YAML typed a number. The canonical form of each value is what Kafka parses it
to, printed back: booleans ``true``/``false``, integers without sign or leading zeros, doubles as Java prints them,
strings trimmed, lists joined with ','.

The rules across keys (compaction lags, local retention, tiered storage, 3.9's ZooKeeper-mode refusals) are in
``config_cross_checks``; where a line's brokers read their own settings, ``broker_settings`` says what kto assumes.
Where a line accepts a value its brokers then fail on, the value is refused anyway, marked ``stricter_than_kafka``.

4.0 and 4.1 run only in KRaft mode (``releases.KRAFT_ONLY_RELEASE_LINES``), where the controller judges a config
sent through the Admin protocol with the same ``LogConfig`` rules and ``fromZK=false``. Their changes were read
from the release notes, the generated config docs and the KIPs and PRs they name (kraft.md §4), not from a
source tag, and none was checked against a 4.x broker:

* 4.0 removed ``message.format.version`` (KIP-724) and ``message.timestamp.difference.max.ms`` (KIP-937): for 4.x
  they are unknown names, refused as Kafka refuses any (``Unknown topic config name: <k>``, ``LogConfig.validateNames``,
  3.9.0-rc3:storage/.../LogConfig.java:578-583). Not confirmed: what a 4.x controller does with a request that
  still carries one (Aiven reports it "ignored and removed during topic creation or update" on its platform),
  and with a topic that stored one before the upgrade (3.9's KRaft controller validates the merged existing
  and new config, so a stored removed key could fail later alters unless 4.x special-cases it);
* 4.0 defaults ``message.timestamp.after.max.ms`` to 3600000 (KIP-1030);
* 4.0 makes ``message.downconversion.enable`` a no-op, still defined and accepted, and 4.1 no longer defines it
  (a real 4.1.1 broker answers ``Unknown topic config name``);
* 4.1, not 4.0, raises the topic-level ``segment.bytes`` minimum from 14 to 1048576 (KAFKA-19080).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Final

from topic_operator.kafka import java_lang
from topic_operator.kafka.broker_settings import BrokerSettings
from topic_operator.kafka.config_cross_checks import cross_field_problems, remote_storage_turned_off
from topic_operator.kafka.config_validators import (
    KAFKA_3_4,
    METADATA_VERSIONS,
    GzipLevelValidator,
    MetadataVersionValidator,
    ParsedValue,
    Range,
    ThrottledReplicaListValidator,
    Validator,
    ValidList,
    ValidString,
    config_error,
)
from topic_operator.kafka.errors import ConfigError, InvalidConfigurationError
from topic_operator.kafka.releases import (
    ALL_KAFKA_VERSIONS,
    COMPACTION_LAG_CHECK,
    DEFAULT_KAFKA_VERSION,
    DOWNCONVERSION_REMOVED,
    FORMAT_VERSION_REMOVED,
    OLDEST_KAFKA,
    REMOTE_STORAGE_BROKER_CHECKS,
    SEGMENT_BYTES_AT_LEAST_1_MIB,
    TIMESTAMP_AFTER_MAX_ONE_HOUR,
    TIMESTAMP_DIFFERENCE_REMOVED,
    KafkaVersion,
    release_line,
)
from topic_operator.message_text import shown

__all__ = [
    "KAFKA_3_4",
    "METADATA_VERSIONS",
    "OLDEST_SUPPORTED_KAFKA",
    "TOPIC_CONFIGS",
    "ComparableValue",
    "ConfigType",
    "GzipLevelValidator",
    "MetadataVersionValidator",
    "ParsedValue",
    "Range",
    "ThrottledReplicaListValidator",
    "TopicConfigDef",
    "ValidList",
    "ValidString",
    "Validator",
    "checked_by_some_line",
    "checked_topic_config",
    "comparable_config",
    "parse_topic_config_value",
    "remote_storage_turned_off",
    "topic_config_names",
    "topic_config_problems",
    "topic_configs_at",
    "validate_topic_config",
]

OLDEST_SUPPORTED_KAFKA: Final[KafkaVersion] = OLDEST_KAFKA
"""The oldest release line the project manages; keys older than it are recorded as available "since" it."""


class ConfigType(Enum):
    """``ConfigDef.Type`` of the topic configs; the value is the name Kafka prints ("Not a number of type INT")."""

    BOOLEAN = "BOOLEAN"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    STRING = "STRING"
    LIST = "LIST"


@dataclass(frozen=True)
class TopicConfigDef:
    """One topic config as one release line's ``LogConfig.configDef`` defines it."""

    name: str
    type: ConfigType
    default: str
    """The default in canonical form, as Kafka's docs print it ("" for an empty list)."""
    validator: Validator | None
    broker_keys: tuple[str, ...]
    """The broker settings that supply the value when the topic has none, first set wins (semantics §7.1)."""
    since: KafkaVersion
    """The first release line (2.0 at the oldest, the oldest we support) whose LogConfig defines the key."""
    internal: bool
    """Defined with ``defineInternal``: accepted but undocumented (the remote-storage keys in 3.0-3.5)."""
    doc: str
    removed: KafkaVersion | None = None
    """The first release line whose LogConfig no longer defines the key (4.0 for ``message.format.version``), or
    None while every line up to the newest defines it. From that line on, the key is an unknown name."""

    @property
    def valid_values(self) -> str:
        """Kafka's "Valid Values" column: the validator's description, empty when anything of the type goes."""
        return self.validator.description if self.validator is not None else ""


class _Keep(Enum):
    KEEP = "keep"


_KEEP: Final = _Keep.KEEP


@dataclass(frozen=True)
class _Revision:
    """What one release line changed in a key's definition (fields left ``_KEEP``/None stay as they were)."""

    since: KafkaVersion
    default: str | None = None
    validator: Validator | _Keep | None = _KEEP
    internal: bool | None = None
    broker_keys: tuple[str, ...] | None = None


@dataclass(frozen=True)
class _History:
    first: TopicConfigDef
    revisions: tuple[_Revision, ...]

    def at(self, version: KafkaVersion) -> TopicConfigDef | None:
        """The key as ``version``'s LogConfig defines it, or None before it existed or once it is removed."""
        if version < self.first.since:
            return None
        if self.first.removed is not None and version >= self.first.removed:
            return None
        definition = self.first
        for revision in self.revisions:
            if revision.since > version:
                break
            definition = replace(
                definition,
                default=definition.default if revision.default is None else revision.default,
                validator=definition.validator if revision.validator is _KEEP else revision.validator,
                internal=definition.internal if revision.internal is None else revision.internal,
                broker_keys=definition.broker_keys if revision.broker_keys is None else revision.broker_keys,
            )
        if isinstance(definition.validator, MetadataVersionValidator):  # its versions are the line's own
            definition = replace(definition, validator=MetadataVersionValidator(version))
        return definition


def _define(
    name: str,
    config_type: ConfigType,
    default: str,
    validator: Validator | None,
    broker_keys: tuple[str, ...],
    doc: str,
    *revisions: _Revision,
    since: KafkaVersion = OLDEST_SUPPORTED_KAFKA,
    internal: bool = False,
    removed: KafkaVersion | None = None,
) -> _History:
    first = TopicConfigDef(name, config_type, default, validator, broker_keys, since, internal, doc, removed)
    return _History(first, tuple(sorted(revisions, key=lambda r: r.since)))


_BOOLEAN, _INT, _LONG, _DOUBLE, _STRING, _LIST = (
    ConfigType.BOOLEAN,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.STRING,
    ConfigType.LIST,
)
_LONG_MAX: Final = str(java_lang.LONG_MAX)
_PUBLIC_FROM_3_6: Final = _Revision((3, 6), internal=False)
_THROTTLED_2_0: Final = ThrottledReplicaListValidator(wildcard_alone=False, colon_format=False)
_THROTTLED_REVISIONS: Final = (
    _Revision((2, 3), validator=ThrottledReplicaListValidator(wildcard_alone=False, colon_format=True)),
    _Revision((2, 8), validator=ThrottledReplicaListValidator()),
)
_FORMAT_VERSION_DEFAULTS: Final = tuple(
    _Revision(line.version, default=line.newest_metadata_version)
    for line in (release_line((2, minor)) for minor in range(1, 9))
)
"""2.x defaults ``message.format.version`` to its own newest version (2.1.1:core/src/main/scala/kafka/log/LogConfig.scala:259
... 2.8.2:...:291); 3.0 fixes it at 3.0-IV1 (3.0.2:core/src/main/scala/kafka/server/KafkaConfig.scala:142)."""

_HISTORIES: Final[tuple[_History, ...]] = (
    # LogConfig.configDef in definition order (kafka-versions.md a.3): the order validation runs, the first
    # failure wins. Keys later lines added sit where those lines define them; every line's order is a
    # subsequence of this one. Definitions: 2.0.1:core/src/main/scala/kafka/log/LogConfig.scala:219-269, changes
    # as cited in kafka-versions.md a.4.
    _define("segment.bytes", _INT, "1073741824", Range(14), ("log.segment.bytes",),
            "Size of one log segment file.",
            # KAFKA-19080, apache/kafka#19371; kafka-site 41/generated/topic_config.html [1048576,...]. 4.0 keeps
            # [14,...] at topic level (40/generated/topic_config.html): #18140 raised only log.segment.bytes.
            _Revision(SEGMENT_BYTES_AT_LEAST_1_MIB, validator=Range(1048576))),
    _define("segment.ms", _LONG, "604800000", Range(1), ("log.roll.ms", "log.roll.hours"),
            "Time after which a segment is rolled even if not full."),
    _define("segment.jitter.ms", _LONG, "0", Range(0), ("log.roll.jitter.ms", "log.roll.jitter.hours"),
            "Maximum random jitter subtracted from segment.ms, to avoid rolling all segments at once."),
    _define("segment.index.bytes", _INT, "10485760", Range(0), ("log.index.size.max.bytes",),
            "Size of the offset index that maps offsets to file positions.",
            _Revision((3, 3), validator=Range(4))),  # 3.3.2:core/src/main/scala/kafka/log/LogConfig.scala:336
    _define("flush.messages", _LONG, _LONG_MAX, Range(0), ("log.flush.interval.messages",),
            "Messages written to a partition before it is fsynced.",
            _Revision((3, 3), validator=Range(1))),  # 3.3.2:...:338
    _define("flush.ms", _LONG, _LONG_MAX, Range(0), ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
            "Time before a partition is fsynced."),
    _define("retention.bytes", _LONG, "-1", None, ("log.retention.bytes",),
            "Maximum partition size before old segments are deleted; -1 for no limit."),
    _define("retention.ms", _LONG, "604800000", None,
            ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
            "Time a message is kept before deletion; -1 for no limit.",
            _Revision((2, 2), validator=Range(-1))),  # 2.2.2:...:235
    _define("max.message.bytes", _INT, "1000012", Range(0), ("message.max.bytes",),
            "Largest record batch the topic accepts.",
            _Revision((2, 5), default="1048588")),  # 2.5.1:core/src/main/scala/kafka/server/KafkaConfig.scala:65
    _define("index.interval.bytes", _INT, "4096", Range(0), ("log.index.interval.bytes",),
            "Bytes between offset index entries."),
    _define("delete.retention.ms", _LONG, "86400000", Range(0), ("log.cleaner.delete.retention.ms",),
            "Time delete tombstones are kept on compacted topics."),
    _define("min.compaction.lag.ms", _LONG, "0", Range(0), ("log.cleaner.min.compaction.lag.ms",),
            "Minimum time a message stays uncompacted."),
    _define("max.compaction.lag.ms", _LONG, _LONG_MAX, Range(1), ("log.cleaner.max.compaction.lag.ms",),
            "Maximum time a message stays ineligible for compaction.",
            since=COMPACTION_LAG_CHECK),  # 2.3.1:...:254
    _define("file.delete.delay.ms", _LONG, "60000", Range(0), ("log.segment.delete.delay.ms",),
            "Delay before a deleted segment file is removed from disk."),
    _define("min.cleanable.dirty.ratio", _DOUBLE, "0.5", Range(0, 1), ("log.cleaner.min.cleanable.ratio",),
            "Dirty share of the log above which the cleaner compacts it."),
    _define("cleanup.policy", _LIST, "delete", ValidList(("compact", "delete")), ("log.cleanup.policy",),
            "Retention policy for old segments: delete, compact, or both."),
    _define("unclean.leader.election.enable", _BOOLEAN, "false", None, ("unclean.leader.election.enable",),
            "Whether an out-of-sync replica may become leader, at the risk of data loss."),
    _define("min.insync.replicas", _INT, "1", Range(1), ("min.insync.replicas",),
            "In-sync replicas required for an acks=all write to succeed."),
    _define("compression.type", _STRING, "producer",
            ValidString(("uncompressed", "snappy", "lz4", "gzip", "producer")), ("compression.type",),
            "Compression of stored batches; producer keeps the producer's codec.",
            # 2.1.1:core/src/main/scala/kafka/message/CompressionCodec.scala:49 adds zstd
            _Revision((2, 1), validator=ValidString(("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")))),
    _define("compression.gzip.level", _INT, "-1", GzipLevelValidator(), ("compression.gzip.level",),
            "Compression level of gzip batches, when compression.type is gzip.",
            since=(3, 8)),  # 3.8.0:storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java:249
    _define("compression.lz4.level", _INT, "9", Range(1, 17), ("compression.lz4.level",),
            "Compression level of lz4 batches, when compression.type is lz4.",
            since=(3, 8)),  # 3.8.0:...:251; Lz4Compression.java:35-37
    _define("compression.zstd.level", _INT, "3", Range(-131072, 22), ("compression.zstd.level",),
            "Compression level of zstd batches, when compression.type is zstd.",
            since=(3, 8)),  # 3.8.0:...:253; bounds 3.9.0-rc3:.../record/CompressionType.java:113-117
    _define("preallocate", _BOOLEAN, "false", None, ("log.preallocate",),
            "Whether segment files are preallocated on disk."),
    _define("message.format.version", _STRING, "2.0-IV1", MetadataVersionValidator(OLDEST_SUPPORTED_KAFKA),
            ("log.message.format.version",),
            "Deprecated record format version; ignored from inter-broker protocol 3.0 but still validated.",
            *_FORMAT_VERSION_DEFAULTS, _Revision((3, 0), default="3.0-IV1"),
            # KIP-724; apache/kafka#18267 (KAFKA-17393); not in kafka-site 40/generated/topic_config.html
            removed=FORMAT_VERSION_REMOVED),
    _define("message.timestamp.type", _STRING, "CreateTime", ValidString(("CreateTime", "LogAppendTime")),
            ("log.message.timestamp.type",),
            "Whether record timestamps are the producer's create time or the broker's append time."),
    _define("message.timestamp.difference.max.ms", _LONG, _LONG_MAX, Range(0),
            ("log.message.timestamp.difference.max.ms",),
            "Largest allowed gap between a CreateTime timestamp and the broker's clock.",
            # KIP-937; not in kafka-site 40/generated/topic_config.html, broker key removed (40/.../upgrade.md)
            removed=TIMESTAMP_DIFFERENCE_REMOVED),
    _define("message.timestamp.before.max.ms", _LONG, _LONG_MAX, Range(0), ("log.message.timestamp.before.max.ms",),
            "Largest allowed lag of a CreateTime timestamp behind the broker's clock.",
            since=(3, 6)),  # 3.6.2:storage/.../LogConfig.java:278
    _define("message.timestamp.after.max.ms", _LONG, _LONG_MAX, Range(0), ("log.message.timestamp.after.max.ms",),
            "Largest allowed lead of a CreateTime timestamp over the broker's clock.",
            # KIP-1030; kafka-site 40/getting-started/upgrade.md, 40/generated/topic_config.html
            _Revision(TIMESTAMP_AFTER_MAX_ONE_HOUR, default="3600000"),
            since=(3, 6)),  # 3.6.2:...:280
    _define("leader.replication.throttled.replicas", _LIST, "", _THROTTLED_2_0, (),
            "Replicas throttled on the leader side: '*' or partition:broker pairs.", *_THROTTLED_REVISIONS),
    _define("follower.replication.throttled.replicas", _LIST, "", _THROTTLED_2_0, (),
            "Replicas throttled on the follower side: '*' or partition:broker pairs.", *_THROTTLED_REVISIONS),
    # 4.0: a no-op, still defined and accepted (apache/kafka#18291); 4.1: gone from LogConfig, an unknown name
    # on a real 4.1.1 broker (DOWNCONVERSION_REMOVED), though TopicConfig keeps its deprecated constant.
    _define("message.downconversion.enable", _BOOLEAN, "true", None, ("log.message.downconversion.enable",),
            "Whether the broker down-converts records for old consumers (a no-op in Kafka 4.0).",
            removed=DOWNCONVERSION_REMOVED),
    _define("remote.storage.enable", _BOOLEAN, "false", None, (),
            "Tiered storage for the topic (internal in 3.0-3.5).",
            _PUBLIC_FROM_3_6, since=(3, 0), internal=True),  # 3.0.2:...LogConfig.scala:378; 3.6.2:...java:288
    _define("local.retention.ms", _LONG, "-2", Range(-2), (),
            "Local retention time with tiered storage; -2 follows retention.ms (internal in 3.0-3.5).",
            _Revision((3, 6), internal=False, broker_keys=("log.local.retention.ms",)),
            since=(3, 0), internal=True),
    _define("local.retention.bytes", _LONG, "-2", Range(-2), (),
            "Local retention size with tiered storage; -2 follows retention.bytes (internal in 3.0-3.5).",
            _Revision((3, 6), internal=False, broker_keys=("log.local.retention.bytes",)),
            since=(3, 0), internal=True),
    _define("remote.log.copy.disable", _BOOLEAN, "false", None, (),
            "Stop copying segments to remote storage, keeping what is there read-only (refused in ZooKeeper mode).",
            since=(3, 9)),  # 3.9.0-rc3:storage/.../LogConfig.java:332
    _define("remote.log.delete.on.disable", _BOOLEAN, "false", None, (),
            "Delete remote data when remote storage is turned off (refused in ZooKeeper mode).",
            since=(3, 9)),  # 3.9.0-rc3:...:333
)  # fmt: skip

_BY_NAME: Final[Mapping[str, _History]] = MappingProxyType({h.first.name: h for h in _HISTORIES})


def _as_of_3_4_or_added(history: _History) -> TopicConfigDef:
    definition = history.at(max(KAFKA_3_4, history.first.since))
    assert definition is not None
    return definition


TOPIC_CONFIGS: Final[Mapping[str, TopicConfigDef]] = MappingProxyType(
    {h.first.name: _as_of_3_4_or_added(h) for h in _HISTORIES}
)
"""Every topic config any line from 2.0 to 4.1 knows, in definition order, each as Kafka 3.4 defines it or, for
keys added later, as the line that added it does. Read-only. A line's own view is ``topic_configs_at``: a key
4.0 removed is here (``removed`` says since when) but not in a 4.x line's view."""


@cache
def topic_configs_at(kafka_version: KafkaVersion) -> Mapping[str, TopicConfigDef]:
    """One release line's ``LogConfig.configDef``: the keys it defines, as it defines them, in definition order."""
    release_line(kafka_version)  # refuses a line the catalogue does not hold
    return MappingProxyType(
        {
            history.first.name: definition
            for history in _HISTORIES
            if (definition := history.at(kafka_version)) is not None
        }
    )


def topic_config_names(kafka_version: KafkaVersion = KAFKA_3_4) -> tuple[str, ...]:
    """The names a cluster of ``kafka_version`` accepts, in definition order."""
    return tuple(topic_configs_at(kafka_version))


# --------------------------------------------------------------------------------------------------------------
# Parsing: ConfigDef.parseType on the value as text.
# --------------------------------------------------------------------------------------------------------------


def parse_topic_config_value(definition: TopicConfigDef, raw: str) -> ParsedValue:
    """``ConfigDef.parseType`` for a String value: trim, then parse by type; a ConfigError carries Kafka's message
    with the raw (untrimmed) text."""
    trimmed = java_lang.java_trim(raw)
    config_type = definition.type
    if config_type is ConfigType.BOOLEAN:
        try:
            return java_lang.parse_java_boolean(trimmed)
        except ValueError:
            raise config_error(definition.name, raw, "Expected value to be either true or false") from None
    if config_type is ConfigType.STRING:
        return trimmed
    if config_type is ConfigType.LIST:
        return tuple(java_lang.split_config_list(trimmed))
    try:
        return _parse_number(config_type, trimmed)
    except ValueError:
        raise config_error(definition.name, raw, f"Not a number of type {config_type.value}") from None


ComparableValue = str | frozenset[str]


def comparable_config(config: Mapping[str, str]) -> dict[str, ComparableValue]:
    """Overrides in the form two of them are compared by, so that ``1000``, ``"1000"`` and `` 1000 `` are equal
    and a plan never rewrites a topic for YAML's typing: each known key's canonical string, list configs as the
    set of their items (Kafka reads ``compact,delete`` and ``delete,compact`` alike). A value that is unknown or
    does not parse (say, written to ZooKeeper by hand) is kept as its raw text, so it equals only itself and a
    valid declared value replaces it."""
    comparable: dict[str, ComparableValue] = {}
    for key, raw in config.items():
        definition = TOPIC_CONFIGS.get(key)
        if definition is None:
            comparable[key] = raw
            continue
        try:
            value = parse_topic_config_value(definition, raw)
        except ConfigError:
            comparable[key] = raw
            continue
        comparable[key] = frozenset(value) if isinstance(value, tuple) else _canonical(value)
    return comparable


def _parse_number(config_type: ConfigType, trimmed: str) -> int | float:
    if config_type is ConfigType.INT:
        return java_lang.parse_java_int(trimmed)
    if config_type is ConfigType.LONG:
        return java_lang.parse_java_long(trimmed)
    return java_lang.parse_java_double(trimmed)


def _canonical(value: ParsedValue) -> str:
    """The parsed value printed back the way Kafka would read it again to the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, float):
        return java_lang.java_double_to_string(value)
    if isinstance(value, int):
        return str(value)
    return value


def _raw_text(key: str, config_type: ConfigType, value: object) -> str:
    """The string Kafka would be given for a YAML value: numbers and booleans as Java prints them, so that 1000.0
    for an INT fails exactly as the string "1000.0" does; a list only for LIST configs, joined with ','.

    Kafka's own ``parseType`` rejects a value of the wrong Java class too, so this is not a rule of ours; only the
    wording is (Kafka never sees a YAML list or map).
    """
    if isinstance(value, (list, tuple)) and config_type is ConfigType.LIST:
        items = [_scalar_text(item) for item in value]
        if any(item is None for item in items):
            raise _type_error(key, value, "each list item")
        return ",".join(item for item in items if item is not None)
    text = _scalar_text(value)
    if text is None:
        raise _type_error(key, value, "the value")
    return text


def _scalar_text(value: object) -> str | None:
    """A YAML scalar as Kafka would receive it in a string, or None for anything else (a map, a list, ...)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_lang.java_double_to_string(value)
    return None


def _type_error(key: str, value: object, what: str) -> ConfigError:
    return ConfigError(
        f"Invalid value {shown(value)} for configuration {key}: {what} must be a string, number or boolean",
        field=f"config.{key}",
    )


# --------------------------------------------------------------------------------------------------------------
# LogConfig.validate
# --------------------------------------------------------------------------------------------------------------


def validate_topic_config(
    props: Mapping[str, object],
    *,
    kafka_version: KafkaVersion = KAFKA_3_4,
    broker: BrokerSettings | None = None,
    kraft: bool = False,
) -> dict[str, str]:
    """Check a topic's config overrides as release line ``kafka_version`` does and return them in canonical form
    (semantics §7.2, kafka-versions.md c).

    In Kafka's order: null values (the CreateTopics request check), unknown names, then every defined key parsed
    and checked in definition order with absent keys taking their default (the first failure wins), then the
    rules across keys (``config_cross_checks``). Kafka reports the first unknown name in Properties order, which
    is unspecified; we report the first in sorted order, so the answer is stable.

    ``broker``: the brokers' own settings where the line's checks read them (3.6+ tiered storage, the 3.0-3.5
    local retention rule); None for Kafka's defaults. ``kraft``: the config goes to a KRaft controller, which
    judges tiered storage's keys by its own path (``config_cross_checks``); every 4.0+ line is judged so.

    Stricter than Kafka (``stricter_than_kafka``): ``min.cleanable.dirty.ratio=NaN`` (Kafka's range check lets it
    through), and values a line's validator accepts but its brokers fail on: a local retention above the total
    one (3.0-3.5), a throttled-replica list starting with ``*`` (2.0-2.7), a ``message.format.version`` no 2.0
    broker parses.

    ``kafka_version`` may be a KRaft-only line (4.0, 4.1), judged as its controller judges a config sent through
    the Admin protocol; those lines are read from release notes and config docs, not source, and were not checked
    against a 4.x broker (module docstring). A removed key such as ``message.format.version`` is refused as unknown,
    as ``LogConfig.validateNames`` refuses any name its line does not define: inferred, not confirmed on 4.x.

    Returns only the given keys, sorted, each mapped to the string to write to ZooKeeper (or to send with
    IncrementalAlterConfigs).
    Raises ``InvalidConfigurationError`` for nulls, unknown names and the rules across keys, and its subclass
    ``ConfigError`` (Kafka's ConfigException) for values that do not parse or fail their validator.
    """
    _reject_null_values(props)
    definitions = topic_configs_at(kafka_version)
    _reject_unknown_names(props, definitions)
    parsed = dict(_starting_values(kafka_version, broker))
    for name, definition in definitions.items():
        if name in props:
            parsed[name] = _parse_and_check(definition, props[name])
    for problem in cross_field_problems(parsed, props, kafka_version, broker, kraft=kraft):
        raise problem
    return {key: _canonical(parsed[key]) for key in sorted(props)}


def topic_config_problems(
    props: Mapping[str, object],
    *,
    kafka_version: KafkaVersion = KAFKA_3_4,
    broker: BrokerSettings | None = None,
    kraft: bool = False,
) -> list[InvalidConfigurationError]:
    """Every problem of a config at once, one per key where the problem is a key's (Kafka stops at the first; a
    reviewer wants them all): null values, unknown names, values that do not parse or fail their validator.
    The rules across keys are judged once every key is valid on its own, so that a bad ``retention.ms`` is not
    also reported as a local retention above it."""
    problems: list[InvalidConfigurationError] = []
    definitions = topic_configs_at(kafka_version)
    parsed = dict(_starting_values(kafka_version, broker))
    for key in sorted(props):
        if props[key] is None:
            problems.append(
                InvalidConfigurationError(
                    f"Null value not supported for topic configs: {key}", field=f"config.{key}"
                )
            )
        elif key not in definitions:
            problems.append(
                InvalidConfigurationError(f"Unknown topic config name: {key}", field=f"config.{key}")
            )
        else:
            try:
                parsed[key] = _parse_and_check(definitions[key], props[key])
            except ConfigError as error:
                problems.append(error)
    if problems:
        return problems
    return cross_field_problems(parsed, props, kafka_version, broker, kraft=kraft)


def checked_topic_config(
    props: Mapping[str, object],
    *,
    kafka_version: KafkaVersion = KAFKA_3_4,
    broker: BrokerSettings | None = None,
    kraft: bool = False,
) -> tuple[dict[str, str] | None, tuple[InvalidConfigurationError, ...]]:
    """The canonical config and no problems, or None and every problem (``topic_config_problems``).

    Repositories repeat a handful of configs over thousands of topics, so results are remembered for configs of
    plain scalar values (each keyed with its type: ``1``, ``1.0`` and ``True`` are different declarations).
    """
    key = _cache_key(props)
    if key is None:
        return _checked(props, kafka_version, broker, kraft)
    config, problems = _checked_cached(key, kafka_version, broker, kraft)
    return (dict(config) if config is not None else None), problems


def checked_by_some_line(
    props: Mapping[str, object], *, broker: BrokerSettings | None = None, kraft: bool = False
) -> tuple[dict[str, str] | None, tuple[InvalidConfigurationError, ...]]:
    """``checked_topic_config`` for a cluster whose release is not declared and will be read from its brokers:
    a config some known line accepts passes (in the newest such line's canonical form), since the plan judges it
    again by the brokers' own line; one that no line accepts gets ``DEFAULT_KAFKA_VERSION``'s problems."""
    for version in reversed(ALL_KAFKA_VERSIONS):
        config, problems = checked_topic_config(props, kafka_version=version, broker=broker, kraft=kraft)
        if config is not None:
            return config, problems
    return checked_topic_config(props, kafka_version=DEFAULT_KAFKA_VERSION, broker=broker, kraft=kraft)


def _cache_key(props: Mapping[str, object]) -> tuple[tuple[str, type, object], ...] | None:
    items = []
    for name, value in props.items():
        if not isinstance(name, str) or not isinstance(value, (str, int, float, bool, type(None))):
            return None
        items.append((name, type(value), value))
    return tuple(sorted(items, key=lambda item: item[0]))


@lru_cache(maxsize=4096)
def _checked_cached(
    key: tuple[tuple[str, type, object], ...],
    kafka_version: KafkaVersion,
    broker: BrokerSettings | None,
    kraft: bool,
) -> tuple[Mapping[str, str] | None, tuple[InvalidConfigurationError, ...]]:
    config, problems = _checked({name: value for name, _, value in key}, kafka_version, broker, kraft)
    return (MappingProxyType(config) if config is not None else None), problems


def _checked(
    props: Mapping[str, object], kafka_version: KafkaVersion, broker: BrokerSettings | None, kraft: bool
) -> tuple[dict[str, str] | None, tuple[InvalidConfigurationError, ...]]:
    problems = topic_config_problems(props, kafka_version=kafka_version, broker=broker, kraft=kraft)
    if problems:
        return None, tuple(problems)
    return validate_topic_config(props, kafka_version=kafka_version, broker=broker, kraft=kraft), ()


@cache
def _parsed_defaults(kafka_version: KafkaVersion) -> Mapping[str, ParsedValue]:
    """Every absent key takes its default. Kafka re-parses and re-validates the defaults on each call; they are
    constant and valid (a catalogue test checks it), so they are parsed once per line and not validated again."""
    return MappingProxyType(
        {
            name: parse_topic_config_value(definition, definition.default)
            for name, definition in topic_configs_at(kafka_version).items()
        }
    )


@lru_cache(maxsize=64)
def _starting_values(kafka_version: KafkaVersion, broker: BrokerSettings | None) -> Mapping[str, ParsedValue]:
    """What an absent key is: its default, or from 3.6 on what the brokers' settings give it, as the broker's
    ``LogConfig.validate`` parses the broker's log config and the topic's overrides together (3.6.2:storage/
    src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java:628-636)."""
    defaults = _parsed_defaults(kafka_version)
    if broker is None or kafka_version < REMOTE_STORAGE_BROKER_CHECKS:
        return defaults
    definitions = topic_configs_at(kafka_version)
    combined = dict(defaults)
    for name, raw in broker.topic_defaults().items():
        if name in definitions:
            combined[name] = parse_topic_config_value(definitions[name], raw)
    return MappingProxyType(combined)


def _reject_null_values(props: Mapping[str, object]) -> None:
    nulls = sorted(key for key, value in props.items() if value is None)
    if nulls:
        raise InvalidConfigurationError(
            f"Null value not supported for topic configs: {','.join(nulls)}",
            field=f"config.{nulls[0]}" if len(nulls) == 1 else "config",
        )


def _reject_unknown_names(props: Mapping[str, object], definitions: Mapping[str, TopicConfigDef]) -> None:
    unknown = sorted(key for key in props if key not in definitions)
    if unknown:
        raise InvalidConfigurationError(
            f"Unknown topic config name: {unknown[0]}", field=f"config.{unknown[0]}"
        )


def _parse_and_check(definition: TopicConfigDef, value: object) -> ParsedValue:
    """``ConfigDef.parseValue`` of a given value: parsed, then validated by the line's validator."""
    parsed = parse_topic_config_value(definition, _raw_text(definition.name, definition.type, value))
    if definition.validator is not None:
        definition.validator.check(definition.name, parsed)
    return parsed
