"""Topic configs as Kafka 3.4.0's ``LogConfig.validate`` judges them, and the canonical strings we write.

A declared config is only worth writing to ``/config/topics/<t>`` if every broker will accept it: brokers re-parse
the znode with the same ``ConfigDef``, and one value they cannot parse makes the topic (or the broker, at startup)
fail. So the catalogue and the checks follow Kafka's source rule for rule (semantics §7), in Kafka's order and
with Kafka's messages, including the Java parsing quirks (see ``java_lang``).

Two specs are compared by their canonical strings: "1000", 1000 and " 1000 " declare the same retention, and a
plan must not rewrite a topic because YAML typed a number. The canonical form of each value is what Kafka parses it
to, printed back: booleans ``true``/``false``, integers without sign or leading zeros, doubles as Java prints them,
strings trimmed, lists joined with ','.

Rules follow 3.4.0 for every cluster version, except that ``kafka_version`` decides which names exist (the
remote-storage keys from 3.0, the timestamp before/after keys from 3.6) and which ``message.format.version``
strings a cluster older than 3.4 knows. Not modelled: the lower minimums of 2.8-3.2 (``segment.index.bytes`` >= 0,
``flush.messages`` >= 0), 2.8's laxer version look-up ("3.4." reads as "3.4") and back-quoted message, the
``message.format.version`` strings of releases after 3.4, and 3.6's remote-storage checks. Each of those leaves us
stricter than the cluster or differs only in wording, never laxer.

One rule is not ``LogConfig.validate``'s but the broker's: the ``LogConfig`` constructor, which every broker runs
when it applies a topic's config, refuses ``local.retention.ms`` above ``retention.ms`` or -1 while
``retention.ms`` is not -1, and the same for ``local.retention.bytes`` against ``retention.bytes``. AdminZkClient
writes such a config and the broker then fails on it, so it is refused here, in the broker's words and marked
``stricter_than_kafka`` (see ``_check_local_retention`` for what it is compared with when the topic does not set
``retention.ms``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Final

from topic_operator.kafka import java_lang
from topic_operator.kafka.errors import ConfigError, InvalidConfigurationError
from topic_operator.message_text import shown

__all__ = [
    "KAFKA_3_4",
    "METADATA_VERSIONS",
    "OLDEST_SUPPORTED_KAFKA",
    "TOPIC_CONFIGS",
    "ConfigType",
    "MetadataVersionValidator",
    "ParsedValue",
    "Range",
    "ThrottledReplicaListValidator",
    "TopicConfigDef",
    "ValidList",
    "ValidString",
    "Validator",
    "checked_topic_config",
    "comparable_config",
    "parse_topic_config_value",
    "topic_config_names",
    "topic_config_problems",
    "validate_topic_config",
]

KafkaVersion = tuple[int, int]

KAFKA_3_4: Final[KafkaVersion] = (3, 4)
"""The release whose rules this module ports (semantics §7)."""

OLDEST_SUPPORTED_KAFKA: Final[KafkaVersion] = (2, 8)
"""The oldest cluster the project manages; keys older than it are recorded as available "since" 2.8."""

ParsedValue = bool | int | float | str | tuple[str, ...]
"""A config value after Kafka's ``ConfigDef.parseType``: Boolean, Integer/Long, Double, String or List."""


class ConfigType(Enum):
    """``ConfigDef.Type`` of the topic configs; the value is the name Kafka prints ("Not a number of type INT")."""

    BOOLEAN = "BOOLEAN"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    STRING = "STRING"
    LIST = "LIST"


# --------------------------------------------------------------------------------------------------------------
# Validators: one class per Kafka validator, each carrying what it checks and printing Kafka's "Valid Values".
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    """``ConfigDef.Range``: inclusive bounds, compared as doubles (so NaN passes both, see ``check``)."""

    minimum: int | None = None
    maximum: int | None = None

    @property
    def description(self) -> str:
        """Kafka's ``Range.toString``, the "Valid Values" column of its docs: ``[14,...]``, ``[0,...,1]``."""
        if self.maximum is None:
            return f"[{self.minimum},...]"
        if self.minimum is None:
            return f"[...,{self.maximum}]"
        return f"[{self.minimum},...,{self.maximum}]"

    @property
    def _bounds(self) -> str:
        if self.maximum is None:
            return f"of at least {self.minimum}"
        if self.minimum is None:
            return f"of no more than {self.maximum}"
        return f"from {self.minimum} to {self.maximum}"

    def check(self, key: str, value: ParsedValue) -> None:
        """Kafka's range check, plus one of ours: NaN is rejected.

        Kafka compares ``n.doubleValue() < min`` and ``> max``; both are false for NaN, so Kafka accepts
        ``min.cleanable.dirty.ratio=NaN``, a ratio no comparison in the log cleaner can ever satisfy. We refuse it
        (``stricter_than_kafka=True``).
        """
        number = _expect_number(key, value)
        if isinstance(number, float) and math.isnan(number):
            raise ConfigError(
                f"Invalid value NaN for configuration {key}: Value must be a number {self._bounds} "
                "(Kafka's range check lets NaN through; rejected here)",
                field=f"config.{key}",
                stricter_than_kafka=True,
            )
        if self.minimum is not None and float(number) < self.minimum:
            raise _config_error(key, _java_number(number), f"Value must be at least {self.minimum}")
        if self.maximum is not None and float(number) > self.maximum:
            raise _config_error(key, _java_number(number), f"Value must be no more than {self.maximum}")


@dataclass(frozen=True)
class ValidString:
    """``ConfigDef.ValidString``: one of a fixed, case-sensitive set, listed in Kafka's order."""

    allowed: tuple[str, ...]

    @property
    def description(self) -> str:
        return java_lang.java_list_to_string(self.allowed)

    def check(self, key: str, value: ParsedValue) -> None:
        self.check_item(key, _expect_str(key, value))

    def check_item(self, key: str, item: str) -> None:
        if item not in self.allowed:
            raise _config_error(key, item, f"String must be one of: {', '.join(self.allowed)}")


@dataclass(frozen=True)
class ValidList:
    """``ConfigDef.ValidList``: every item one of a fixed set; the empty list passes. 3.4 keeps duplicates."""

    allowed: tuple[str, ...]

    @property
    def description(self) -> str:
        return java_lang.java_list_to_string(self.allowed)

    def check(self, key: str, value: ParsedValue) -> None:
        items = _expect_list(key, value)
        each = ValidString(self.allowed)
        for item in items:
            each.check_item(key, item)


_REPLICA: Final = re.compile(r"(?:[0-9]+:[0-9]+)?")
_THROTTLED_FORMAT: Final = "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


@dataclass(frozen=True)
class ThrottledReplicaListValidator:
    """Kafka's ``ThrottledReplicaListValidator`` (semantics §7.3): every item, trimmed, is empty or
    ``<partition>:<broker>``, or else all the items run together and trimmed are the literal ``*``.

    The second rule is Kafka's ``mkString.trim == "*"``, which is why "*," and ",*" pass and "*,100:10" does not.
    """

    @property
    def description(self) -> str:
        return _THROTTLED_FORMAT

    def check(self, key: str, value: ParsedValue) -> None:
        items = _expect_list(key, value)
        if all(_REPLICA.fullmatch(java_lang.java_trim(item)) for item in items):
            return
        if java_lang.java_trim("".join(items)) == "*":
            return
        raise _config_error(
            key,
            java_lang.java_list_to_string(items),
            f"{key} must be the literal '*' or a list of replicas in the following format: {_THROTTLED_FORMAT}",
        )


METADATA_VERSIONS: Final[tuple[str, ...]] = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0",
    "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0",
    "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2",
    "1.0-IV0", "1.1-IV0",
    "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1",
    "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1",
    "3.0-IV0", "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
)  # fmt: skip
"""Every ``MetadataVersion.version()`` of Kafka 3.4.0, oldest first: "<release>" or "<release>-IV<n>"."""


def _release(version: str) -> str:
    """``MetadataVersion.shortVersion()``: the version without its "-IV<n>" part."""
    return version.split("-", 1)[0]


def _release_version(release: str) -> KafkaVersion:
    """A release as a cluster version, so the two compare: "0.10.1" is (0, 10), "3.4" is (3, 4)."""
    major, minor = release.split(".")[:2]
    return int(major), int(minor)


@cache
def _metadata_version_keys(known_up_to: KafkaVersion) -> frozenset[str]:
    """``MetadataVersion``'s look-up table of a cluster: every version string and every release name, up to the
    cluster's own release (a 3.3 broker has no "3.4-IV0")."""
    versions = [v for v in METADATA_VERSIONS if _release_version(_release(v)) <= known_up_to]
    return frozenset(versions) | frozenset(_release(v) for v in versions)


def _metadata_version_key(version: str) -> str:
    """``MetadataVersion.fromVersionString``'s look-up key: the first 3 dot-separated segments for "0.x" versions,
    2 otherwise, or the whole string when it has no more segments than that ("2.8.1" -> "2.8", "3.4." stays)."""
    segments = java_lang.java_split(version, ".")
    kept = 3 if version.startswith("0.") else 2
    if kept >= len(segments):
        return version
    return ".".join(segments[:kept])


@dataclass(frozen=True)
class MetadataVersionValidator:
    """Kafka's ``MetadataVersionValidator`` for ``message.format.version`` (semantics §7.3), 3.4 wording.

    From inter-broker protocol 3.0 brokers ignore the value, but they still refuse one they cannot look up.
    """

    known_up_to: KafkaVersion = KAFKA_3_4
    """The newest release whose versions the cluster knows: its own, and at most 3.4, the newest list we hold."""

    @property
    def description(self) -> str:
        known = _metadata_version_keys(self.known_up_to)
        return java_lang.java_list_to_string(v for v in METADATA_VERSIONS if v in known)

    def check(self, key: str, value: ParsedValue) -> None:
        version = _expect_str(key, value)
        if _metadata_version_key(version) not in _metadata_version_keys(self.known_up_to):
            raise _config_error(key, version, f"Version {version} is not a valid version")


Validator = Range | ValidString | ValidList | ThrottledReplicaListValidator | MetadataVersionValidator


# --------------------------------------------------------------------------------------------------------------
# The catalogue.
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicConfigDef:
    """One topic config as ``LogConfig.configDef`` defines it."""

    name: str
    type: ConfigType
    default: str
    """The default in canonical form, as Kafka's docs print it ("" for an empty list)."""
    validator: Validator | None
    broker_keys: tuple[str, ...]
    """The broker settings that supply the value when the topic has none, first set wins (semantics §7.1)."""
    since: KafkaVersion
    """The first cluster version (2.8 at the oldest, the oldest we support) whose LogConfig defines the key."""
    internal: bool
    """Defined with ``defineInternal``: accepted but undocumented (the remote-storage keys in 3.1-3.5)."""
    doc: str

    @property
    def valid_values(self) -> str:
        """Kafka's "Valid Values" column: the validator's description, empty when anything of the type goes."""
        return self.validator.description if self.validator is not None else ""


_LONG_MAX: Final = str(java_lang.LONG_MAX)
_SINCE_2_8: Final = OLDEST_SUPPORTED_KAFKA
_SINCE_3_0: Final = (3, 0)
_SINCE_3_6: Final = (3, 6)
_COMPRESSION_TYPES: Final = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


def _define(
    name: str,
    config_type: ConfigType,
    default: str,
    validator: Validator | None,
    broker_keys: tuple[str, ...],
    doc: str,
    *,
    since: KafkaVersion = _SINCE_2_8,
    internal: bool = False,
) -> TopicConfigDef:
    return TopicConfigDef(name, config_type, default, validator, broker_keys, since, internal, doc)


_BOOLEAN, _INT, _LONG, _DOUBLE, _STRING, _LIST = (
    ConfigType.BOOLEAN,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.STRING,
    ConfigType.LIST,
)

_DEFINITIONS: Final[tuple[TopicConfigDef, ...]] = (
    # Kafka 3.4.0 LogConfig.configDef, in definition order: the order validation runs and the first failure wins.
    _define("segment.bytes", _INT, "1073741824", Range(14), ("log.segment.bytes",),
            "Size of one log segment file."),
    _define("segment.ms", _LONG, "604800000", Range(1), ("log.roll.ms", "log.roll.hours"),
            "Time after which a segment is rolled even if not full."),
    _define("segment.jitter.ms", _LONG, "0", Range(0), ("log.roll.jitter.ms", "log.roll.jitter.hours"),
            "Maximum random jitter subtracted from segment.ms, to avoid rolling all segments at once."),
    _define("segment.index.bytes", _INT, "10485760", Range(4), ("log.index.size.max.bytes",),
            "Size of the offset index that maps offsets to file positions."),
    _define("flush.messages", _LONG, _LONG_MAX, Range(1), ("log.flush.interval.messages",),
            "Messages written to a partition before it is fsynced."),
    _define("flush.ms", _LONG, _LONG_MAX, Range(0), ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
            "Time before a partition is fsynced."),
    _define("retention.bytes", _LONG, "-1", None, ("log.retention.bytes",),
            "Maximum partition size before old segments are deleted; -1 for no limit."),
    _define("retention.ms", _LONG, "604800000", Range(-1),
            ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
            "Time a message is kept before deletion; -1 for no limit."),
    _define("max.message.bytes", _INT, "1048588", Range(0), ("message.max.bytes",),
            "Largest record batch the topic accepts."),
    _define("index.interval.bytes", _INT, "4096", Range(0), ("log.index.interval.bytes",),
            "Bytes between offset index entries."),
    _define("delete.retention.ms", _LONG, "86400000", Range(0), ("log.cleaner.delete.retention.ms",),
            "Time delete tombstones are kept on compacted topics."),
    _define("min.compaction.lag.ms", _LONG, "0", Range(0), ("log.cleaner.min.compaction.lag.ms",),
            "Minimum time a message stays uncompacted."),
    _define("max.compaction.lag.ms", _LONG, _LONG_MAX, Range(1), ("log.cleaner.max.compaction.lag.ms",),
            "Maximum time a message stays ineligible for compaction."),
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
    _define("compression.type", _STRING, "producer", ValidString(_COMPRESSION_TYPES), ("compression.type",),
            "Compression of stored batches; producer keeps the producer's codec."),
    _define("preallocate", _BOOLEAN, "false", None, ("log.preallocate",),
            "Whether segment files are preallocated on disk."),
    _define("message.format.version", _STRING, "3.0-IV1", MetadataVersionValidator(), ("log.message.format.version",),
            "Deprecated record format version; ignored from inter-broker protocol 3.0 but still validated."),
    _define("message.timestamp.type", _STRING, "CreateTime", ValidString(("CreateTime", "LogAppendTime")),
            ("log.message.timestamp.type",),
            "Whether record timestamps are the producer's create time or the broker's append time."),
    _define("message.timestamp.difference.max.ms", _LONG, _LONG_MAX, Range(0),
            ("log.message.timestamp.difference.max.ms",),
            "Largest allowed gap between a CreateTime timestamp and the broker's clock."),
    _define("message.timestamp.before.max.ms", _LONG, _LONG_MAX, Range(0), ("log.message.timestamp.before.max.ms",),
            "Largest allowed lag of a CreateTime timestamp behind the broker's clock.", since=_SINCE_3_6),
    _define("message.timestamp.after.max.ms", _LONG, _LONG_MAX, Range(0), ("log.message.timestamp.after.max.ms",),
            "Largest allowed lead of a CreateTime timestamp over the broker's clock.", since=_SINCE_3_6),
    _define("leader.replication.throttled.replicas", _LIST, "", ThrottledReplicaListValidator(), (),
            "Replicas throttled on the leader side: '*' or partition:broker pairs."),
    _define("follower.replication.throttled.replicas", _LIST, "", ThrottledReplicaListValidator(), (),
            "Replicas throttled on the follower side: '*' or partition:broker pairs."),
    _define("message.downconversion.enable", _BOOLEAN, "true", None, ("log.message.downconversion.enable",),
            "Whether the broker down-converts records for old consumers."),
    _define("remote.storage.enable", _BOOLEAN, "false", None, (),
            "Tiered storage for the topic (internal in 3.1-3.5).", since=_SINCE_3_0, internal=True),
    _define("local.retention.ms", _LONG, "-2", Range(-2), (),
            "Local retention time with tiered storage; -2 follows retention.ms (internal in 3.1-3.5).",
            since=_SINCE_3_0, internal=True),
    _define("local.retention.bytes", _LONG, "-2", Range(-2), (),
            "Local retention size with tiered storage; -2 follows retention.bytes (internal in 3.1-3.5).",
            since=_SINCE_3_0, internal=True),
)  # fmt: skip
"""The 3.6-only keys sit where 3.6's LogConfig defines them, after message.timestamp.difference.max.ms."""

TOPIC_CONFIGS: Final[Mapping[str, TopicConfigDef]] = MappingProxyType({d.name: d for d in _DEFINITIONS})
"""Every topic config Kafka 3.4 knows (plus the two 3.6 keys), in Kafka's definition order. Read-only."""

_MIN_COMPACTION_LAG: Final = "min.compaction.lag.ms"
_MAX_COMPACTION_LAG: Final = "max.compaction.lag.ms"


def topic_config_names(kafka_version: KafkaVersion = KAFKA_3_4) -> tuple[str, ...]:
    """The names a cluster of ``kafka_version`` accepts, in definition order."""
    return tuple(name for name, definition in TOPIC_CONFIGS.items() if definition.since <= kafka_version)


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
            raise _config_error(definition.name, raw, "Expected value to be either true or false") from None
    if config_type is ConfigType.STRING:
        return trimmed
    if config_type is ConfigType.LIST:
        return tuple(java_lang.split_config_list(trimmed))
    try:
        return _parse_number(config_type, trimmed)
    except ValueError:
        raise _config_error(definition.name, raw, f"Not a number of type {config_type.value}") from None


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
    props: Mapping[str, object], *, kafka_version: KafkaVersion = KAFKA_3_4
) -> dict[str, str]:
    """Check a topic's config overrides as Kafka 3.4 does and return them in canonical form (semantics §7.2).

    In Kafka's order: null values (the CreateTopics request check), unknown names, then every defined key parsed
    and checked in definition order with absent keys taking their default (the first failure wins), then
    ``min.compaction.lag.ms`` <= ``max.compaction.lag.ms``. Kafka reports the first unknown name in Properties
    order, which is unspecified; we report the first in sorted order, so the answer is stable.

    Then the broker's own rule on local retention (``_check_local_retention``), which ``LogConfig.validate``
    does not have.

    Stricter than Kafka: ``min.cleanable.dirty.ratio=NaN`` is rejected (Kafka's range check lets it through), and
    so is a local retention the brokers would refuse after AdminZkClient wrote it.

    Returns only the given keys, sorted, each mapped to the string to write to ZooKeeper.
    Raises ``InvalidConfigurationError`` for nulls, unknown names and the lag conflict, and its subclass
    ``ConfigError`` (Kafka's ConfigException) for values that do not parse or fail their validator.
    """
    _reject_null_values(props)
    definitions = _defined_for(kafka_version)
    _reject_unknown_names(props, definitions)
    parsed = dict(_parsed_defaults(kafka_version))
    for name, definition in definitions.items():
        if name in props:
            parsed[name] = _parse_and_check(definition, props, kafka_version)
    _check_compaction_lags(parsed)
    for problem in _local_retention_problems(parsed, props):
        raise problem
    return {key: _canonical(parsed[key]) for key in sorted(props)}


def topic_config_problems(
    props: Mapping[str, object], *, kafka_version: KafkaVersion = KAFKA_3_4
) -> list[InvalidConfigurationError]:
    """Every problem of a config at once, one per key where the problem is a key's (Kafka stops at the first; a
    reviewer wants them all): null values, unknown names, values that do not parse or fail their validator.
    The rules across keys (compaction lags, local retention) are judged once every key is valid on its own, so
    that a bad ``retention.ms`` is not also reported as a local retention above it."""
    problems: list[InvalidConfigurationError] = []
    definitions = _defined_for(kafka_version)
    parsed = dict(_parsed_defaults(kafka_version))
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
                parsed[key] = _parse_and_check(definitions[key], props, kafka_version)
            except ConfigError as error:
                problems.append(error)
    if problems:
        return problems
    try:
        _check_compaction_lags(parsed)
    except InvalidConfigurationError as error:
        problems.append(error)
    problems.extend(_local_retention_problems(parsed, props))
    return problems


def checked_topic_config(
    props: Mapping[str, object], *, kafka_version: KafkaVersion = KAFKA_3_4
) -> tuple[dict[str, str] | None, tuple[InvalidConfigurationError, ...]]:
    """The canonical config and no problems, or None and every problem (``topic_config_problems``).

    Repositories repeat a handful of configs over thousands of topics, so results are remembered for configs of
    plain scalar values (each keyed with its type: ``1``, ``1.0`` and ``True`` are different declarations).
    """
    key = _cache_key(props)
    if key is None:
        return _checked(props, kafka_version)
    config, problems = _checked_cached(key, kafka_version)
    return (dict(config) if config is not None else None), problems


def _cache_key(props: Mapping[str, object]) -> tuple[tuple[str, type, object], ...] | None:
    items = []
    for name, value in props.items():
        if not isinstance(name, str) or not isinstance(value, (str, int, float, bool, type(None))):
            return None
        items.append((name, type(value), value))
    return tuple(sorted(items, key=lambda item: item[0]))


@lru_cache(maxsize=4096)
def _checked_cached(
    key: tuple[tuple[str, type, object], ...], kafka_version: KafkaVersion
) -> tuple[Mapping[str, str] | None, tuple[InvalidConfigurationError, ...]]:
    config, problems = _checked({name: value for name, _, value in key}, kafka_version)
    return (MappingProxyType(config) if config is not None else None), problems


def _checked(
    props: Mapping[str, object], kafka_version: KafkaVersion
) -> tuple[dict[str, str] | None, tuple[InvalidConfigurationError, ...]]:
    problems = topic_config_problems(props, kafka_version=kafka_version)
    if problems:
        return None, tuple(problems)
    return validate_topic_config(props, kafka_version=kafka_version), ()


@cache
def _defined_for(kafka_version: KafkaVersion) -> Mapping[str, TopicConfigDef]:
    return MappingProxyType({name: TOPIC_CONFIGS[name] for name in topic_config_names(kafka_version)})


@cache
def _parsed_defaults(kafka_version: KafkaVersion) -> Mapping[str, ParsedValue]:
    """Every absent key takes its default. Kafka re-parses and re-validates the defaults on each call; they are
    constant and valid for 3.4 (a catalogue test checks it), so they are parsed once per version and not
    validated again: validating 3.4's ``message.format.version`` default against an older cluster's version
    list would refuse every config of that cluster."""
    return MappingProxyType(
        {
            name: parse_topic_config_value(definition, definition.default)
            for name, definition in _defined_for(kafka_version).items()
        }
    )


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


def _parse_and_check(
    definition: TopicConfigDef, props: Mapping[str, object], kafka_version: KafkaVersion
) -> ParsedValue:
    """``ConfigDef.parseValue``: the given value or the default, parsed, then validated (defaults too)."""
    if definition.name in props:
        raw = _raw_text(definition.name, definition.type, props[definition.name])
    else:
        raw = definition.default
    value = parse_topic_config_value(definition, raw)
    validator = _validator_for(definition, kafka_version)
    if validator is not None:
        validator.check(definition.name, value)
    return value


def _validator_for(definition: TopicConfigDef, kafka_version: KafkaVersion) -> Validator | None:
    """The catalogue holds 3.4's validators; only the version list of ``message.format.version`` depends on the
    cluster, since an older broker refuses the versions of newer releases."""
    if isinstance(definition.validator, MetadataVersionValidator):
        return MetadataVersionValidator(min(kafka_version, KAFKA_3_4))
    return definition.validator


def _check_compaction_lags(parsed: Mapping[str, ParsedValue]) -> None:
    """``LogConfig.validateValues``: the one cross-field rule 3.4's ``validate`` has."""
    min_lag = _expect_number(_MIN_COMPACTION_LAG, parsed[_MIN_COMPACTION_LAG])
    max_lag = _expect_number(_MAX_COMPACTION_LAG, parsed[_MAX_COMPACTION_LAG])
    if min_lag > max_lag:
        raise InvalidConfigurationError(
            f"conflict topic config setting {_MIN_COMPACTION_LAG} ({min_lag}) > {_MAX_COMPACTION_LAG} ({max_lag})",
            field="config",
        )


# --------------------------------------------------------------------------------------------------------------
# Small helpers.
# --------------------------------------------------------------------------------------------------------------


_LOCAL_RETENTIONS: Final = (
    ("local.retention.ms", "retention.ms"),
    ("local.retention.bytes", "retention.bytes"),
)
_INHERIT: Final = -2
"""A local retention of -2 follows the total retention: nothing to compare."""


def _local_retention_problems(
    parsed: Mapping[str, ParsedValue], props: Mapping[str, object]
) -> list[ConfigError]:
    """The broker's ``LogConfig`` constructor (3.4, ``RemoteLogConfig``): a local retention must not be -1 while
    the total retention is not -1, and must not be above it. Kafka's comparison includes a total of -1
    (unlimited): in 3.4 any local retention other than -2 and -1 is then "more than" it.

    What the broker compares with is the topic's total retention, or the broker's own default when the topic has
    none (``log.retention.ms``/``minutes``/``hours``, ``log.retention.bytes``), which kto cannot see offline. The
    comparison is then made with Kafka's default (7 days, and -1 bytes), and the message says so: refusing a
    config that a broker with longer default retention would take costs declaring ``retention.ms`` on the topic;
    accepting one the brokers refuse would leave a topic whose config every broker fails to apply.
    """
    problems: list[ConfigError] = []
    for local_key, total_key in _LOCAL_RETENTIONS:
        if local_key not in props or local_key not in parsed:
            continue
        local, total = (
            _expect_number(local_key, parsed[local_key]),
            _expect_number(total_key, parsed[total_key]),
        )
        if local == _INHERIT:
            continue
        if local == -1 and total != -1:
            reason = f"Value must not be -1 as {total_key} value is set as {total}."
        elif local > total:
            reason = f"Value must not be more than property: {total_key} value."
        else:
            continue
        note = (
            ""
            if total_key in props
            else f" ({total_key} is not set on the topic: compared with Kafka's default, {total}, as the brokers' "
            f"default may differ; declare {total_key} on the topic to decide)"
        )
        problems.append(
            ConfigError(
                f"Invalid value {local} for configuration {local_key}: {reason}{note}",
                field=f"config.{local_key}",
                stricter_than_kafka=True,
            )
        )
    return problems


def _config_error(key: str, value_text: str, reason: str) -> ConfigError:
    """``new ConfigException(name, value, message)``: Kafka's "Invalid value <v> for configuration <k>: <why>"."""
    return ConfigError(f"Invalid value {value_text} for configuration {key}: {reason}", field=f"config.{key}")


def _java_number(number: int | float) -> str:
    """``Integer/Long/Double.toString``, how Kafka prints a parsed number in a range message."""
    if isinstance(number, float):
        return java_lang.java_double_to_string(number)
    return str(number)


def _expect_number(key: str, value: ParsedValue) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise TypeError(f"{key}: a range validator needs a number, got {value!r}")


def _expect_str(key: str, value: ParsedValue) -> str:
    if isinstance(value, str):
        return value
    raise TypeError(f"{key}: a string validator needs a string, got {value!r}")


def _expect_list(key: str, value: ParsedValue) -> tuple[str, ...]:
    if isinstance(value, tuple):
        return value
    raise TypeError(f"{key}: a list validator needs a list, got {value!r}")
