"""Kafka's validators of topic config values, one class each, as every release line from 2.0 to 3.9 has them.

Each validator carries what it checks, prints Kafka's "Valid Values" (``description``) and raises Kafka's
``ConfigException`` text (``Invalid value <v> for configuration <k>: <why>``). Where a release line's validator
lets through a value its own brokers then fail on, the check here refuses it anyway and marks the error
``stricter_than_kafka``: writing it would leave a topic whose config no broker can apply.

Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Final

from topic_operator.kafka import java_lang
from topic_operator.kafka.errors import ConfigError
from topic_operator.kafka.releases import (
    FORMAT_VERSION_VALIDATED,
    METADATA_VERSION_PARSER,
    SHORT_FORMS_PRODUCTION_ONLY,
    KafkaVersion,
    format_version,
    release_line,
)

__all__ = [
    "ALL_METADATA_VERSIONS",
    "KAFKA_3_4",
    "METADATA_VERSIONS",
    "GzipLevelValidator",
    "MetadataVersionValidator",
    "ParsedValue",
    "Range",
    "ThrottledReplicaListValidator",
    "ValidList",
    "ValidString",
    "Validator",
    "config_error",
    "expect_list",
    "expect_number",
    "expect_str",
    "java_number",
]

KAFKA_3_4: Final[KafkaVersion] = (3, 4)
"""The release whose rules the project first ported (semantics §7), and still the default."""

ParsedValue = bool | int | float | str | tuple[str, ...]
"""A config value after Kafka's ``ConfigDef.parseType``: Boolean, Integer/Long, Double, String or List."""


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
        number = expect_number(key, value)
        if isinstance(number, float) and math.isnan(number):
            raise ConfigError(
                f"Invalid value NaN for configuration {key}: Value must be a number {self._bounds} "
                "(Kafka's range check lets NaN through; rejected here)",
                field=f"config.{key}",
                stricter_than_kafka=True,
            )
        if self.minimum is not None and float(number) < self.minimum:
            raise config_error(key, java_number(number), f"Value must be at least {self.minimum}")
        if self.maximum is not None and float(number) > self.maximum:
            raise config_error(key, java_number(number), f"Value must be no more than {self.maximum}")


@dataclass(frozen=True)
class GzipLevelValidator:
    """3.8's ``GzipCompression.LevelValidator``: 1 to 9 (``Deflater``'s levels), or -1 for the default
    (3.8.0:clients/src/main/java/org/apache/kafka/common/compress/GzipCompression.java:124-140)."""

    minimum: int = 1
    maximum: int = 9
    default: int = -1

    @property
    def description(self) -> str:
        return f"[{self.minimum},...,{self.maximum}] or {self.default}"

    def check(self, key: str, value: ParsedValue) -> None:
        level = expect_number(key, value)
        if level > self.maximum or (level < self.minimum and level != self.default):
            raise config_error(
                key,
                java_number(level),
                f"Value must be between {self.minimum} and {self.maximum} or equal to {self.default}",
            )


@dataclass(frozen=True)
class ValidString:
    """``ConfigDef.ValidString``: one of a fixed, case-sensitive set, listed in Kafka's order."""

    allowed: tuple[str, ...]

    @property
    def description(self) -> str:
        return java_lang.java_list_to_string(self.allowed)

    def check(self, key: str, value: ParsedValue) -> None:
        self.check_item(key, expect_str(key, value))

    def check_item(self, key: str, item: str) -> None:
        if item not in self.allowed:
            raise config_error(key, item, f"String must be one of: {', '.join(self.allowed)}")


@dataclass(frozen=True)
class ValidList:
    """``ConfigDef.ValidList``: every item one of a fixed set; the empty list passes. Duplicates are kept."""

    allowed: tuple[str, ...]

    @property
    def description(self) -> str:
        return java_lang.java_list_to_string(self.allowed)

    def check(self, key: str, value: ParsedValue) -> None:
        items = expect_list(key, value)
        each = ValidString(self.allowed)
        for item in items:
            each.check_item(key, item)


_REPLICA: Final = re.compile(r"(?:[0-9]+:[0-9]+)?")
_THROTTLED_FORMAT: Final = "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
_THROTTLED_FORMAT_2_0: Final = "[partitionId],[brokerId]:[partitionId],[brokerId]:..."


@dataclass(frozen=True)
class ThrottledReplicaListValidator:
    """Kafka's ``ThrottledReplicaListValidator`` (semantics §7.3, kafka-versions.md c.4): every item, trimmed, is
    empty or ``<partition>:<broker>``, or else the list is the wildcard.

    From 2.8 the wildcard is all the items run together and trimmed being the literal ``*`` (Kafka's
    ``mkString.trim == "*"``, which is why "*," and ",*" pass and "*,100:10" does not). Up to 2.7 a list whose
    *first* item is ``*`` passed whatever followed; brokers then split "*,100:10" on ':' and fail with an
    ``ArrayIndexOutOfBoundsException`` on the "*" (2.7.2:core/src/main/scala/kafka/server/ConfigHandler.scala:94-106),
    so such a list is refused here for every line, marked ``stricter_than_kafka`` where Kafka takes it.
    """

    wildcard_alone: bool = True
    """2.8+: only the whole list may be the wildcard. False: 2.0-2.7's first-item rule."""
    colon_format: bool = True
    """2.3+ spells the format ``[partitionId]:[brokerId],...`` in its message; 2.0-2.2 did not."""

    @property
    def description(self) -> str:
        return _THROTTLED_FORMAT if self.colon_format else _THROTTLED_FORMAT_2_0

    def check(self, key: str, value: ParsedValue) -> None:
        items = expect_list(key, value)
        if all(_REPLICA.fullmatch(java_lang.java_trim(item)) for item in items):
            return
        if java_lang.java_trim("".join(items)) == "*":
            return
        shown = java_lang.java_list_to_string(items)
        rule = (
            f"{key} must be the literal '*' or a list of replicas in the following format: {self.description}"
        )
        if not self.wildcard_alone and items and java_lang.java_trim(items[0]) == "*":
            raise ConfigError(
                f"Invalid value {shown} for configuration {key}: {rule} (this release's validator takes a list "
                "that starts with '*', but its brokers then fail to apply it: '*' must stand alone)",
                field=f"config.{key}",
                stricter_than_kafka=True,
            )
        raise config_error(key, shown, rule)


ALL_METADATA_VERSIONS: Final[tuple[str, ...]] = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0",
    "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0",
    "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2",
    "1.0-IV0", "1.1-IV0",
    "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1",
    "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1",
    "3.0-IV0", "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
    "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
    "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1",
)  # fmt: skip
"""Every ``ApiVersion``/``MetadataVersion.version()`` any line from 2.0 to 3.9 defines, oldest first (the 3.9.0-rc3
enum, server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java:48-221). Each line knows a
prefix of it, up to its ``ReleaseLine.newest_metadata_version``."""

METADATA_VERSIONS: Final[tuple[str, ...]] = ALL_METADATA_VERSIONS[
    : ALL_METADATA_VERSIONS.index("3.4-IV0") + 1
]
"""Every ``MetadataVersion.version()`` of Kafka 3.4, oldest first: "<release>" or "<release>-IV<n>"."""


def _release(version: str) -> str:
    """``shortVersion()``: the version without its "-IV<n>" part."""
    return version.split("-", 1)[0]


@cache
def _known_versions(line: KafkaVersion) -> tuple[str, ...]:
    newest = release_line(line).newest_metadata_version
    return ALL_METADATA_VERSIONS[: ALL_METADATA_VERSIONS.index(newest) + 1]


@cache
def _version_keys(line: KafkaVersion) -> frozenset[str]:
    """The line's look-up table: every full version, and the short form of each release, which from 3.7 only
    production versions get (so 3.7 takes "3.8-IV0" but not "3.8")."""
    versions = _known_versions(line)
    shortened = versions
    production = release_line(line).latest_production
    if line >= SHORT_FORMS_PRODUCTION_ONLY and production is not None:
        shortened = versions[: versions.index(production) + 1]
    return frozenset(versions) | frozenset(_release(v) for v in shortened)


def _scala_key(version: str) -> str:
    """``ApiVersion.apply``'s key (2.1-3.2): the first 3 dot-separated segments for "0.x" versions, 2 otherwise,
    joined again; Scala's ``split('.')`` drops trailing empty segments, so "2.8." reads as "2.8"."""
    kept = 3 if version.startswith("0.") else 2
    return ".".join(java_lang.java_split(version, ".")[:kept])


def _java_key(version: str) -> str:
    """``MetadataVersion.fromVersionString``'s key (3.3+): as ``_scala_key``, except that a string with no more
    segments than that is its own key ("2.8.1" -> "2.8", but "3.4." stays "3.4.")."""
    segments = java_lang.java_split(version, ".")
    kept = 3 if version.startswith("0.") else 2
    if kept >= len(segments):
        return version
    return ".".join(segments[:kept])


@dataclass(frozen=True)
class MetadataVersionValidator:
    """``message.format.version`` as a release line checks it (kafka-versions.md b): ``ApiVersionValidator`` in
    2.1-3.2 (message with back-quotes, Scala look-up), ``MetadataVersionValidator`` from 3.3, each over the
    versions the line defines. 2.0 has no validator: AdminZkClient stores any string and brokers fail when they
    parse it (2.0.1:core/src/main/scala/kafka/log/LogConfig.scala:95), so a string no 2.0 broker can parse is
    refused here in the broker's words, ``stricter_than_kafka``.

    From inter-broker protocol 3.0 brokers ignore the value, but they still refuse one they cannot look up.
    """

    known_up_to: KafkaVersion = KAFKA_3_4
    """The cluster's release line: the versions it defines, and how it looks them up."""

    @property
    def description(self) -> str:
        if self.known_up_to < FORMAT_VERSION_VALIDATED:
            return ""
        return java_lang.java_list_to_string(_known_versions(self.known_up_to))

    def check(self, key: str, value: ParsedValue) -> None:
        version = expect_str(key, value)
        line = self.known_up_to
        if line >= METADATA_VERSION_PARSER:
            if _java_key(version) not in _version_keys(line):
                raise config_error(key, version, f"Version {version} is not a valid version")
            return
        if _scala_key(version) in _version_keys(line):
            return
        reason = f"Version `{version}` is not a valid version"
        if line >= FORMAT_VERSION_VALIDATED:
            raise config_error(key, version, reason)
        raise ConfigError(
            f"Invalid value {version} for configuration {key}: {reason} (Kafka {format_version(line)} stores "
            "any string here, and its brokers then fail to parse it)",
            field=f"config.{key}",
            stricter_than_kafka=True,
        )


Validator = (
    Range
    | GzipLevelValidator
    | ValidString
    | ValidList
    | ThrottledReplicaListValidator
    | MetadataVersionValidator
)


def config_error(key: str, value_text: str, reason: str) -> ConfigError:
    """``new ConfigException(name, value, message)``: Kafka's "Invalid value <v> for configuration <k>: <why>"."""
    return ConfigError(f"Invalid value {value_text} for configuration {key}: {reason}", field=f"config.{key}")


def java_number(number: int | float) -> str:
    """``Integer/Long/Double.toString``, how Kafka prints a parsed number in a range message."""
    if isinstance(number, float):
        return java_lang.java_double_to_string(number)
    return str(number)


def expect_number(key: str, value: ParsedValue) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise TypeError(f"{key}: a range validator needs a number, got {value!r}")


def expect_str(key: str, value: ParsedValue) -> str:
    if isinstance(value, str):
        return value
    raise TypeError(f"{key}: a string validator needs a string, got {value!r}")


def expect_list(key: str, value: ParsedValue) -> tuple[str, ...]:
    if isinstance(value, tuple):
        return value
    raise TypeError(f"{key}: a list validator needs a list, got {value!r}")
