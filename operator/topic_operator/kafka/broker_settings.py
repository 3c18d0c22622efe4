"""The brokers' own settings that Kafka's checks of a topic's config read, and what they are when not given.

From 3.0 no Kafka tool writes topics to ZooKeeper: the broker does, with ``AdminZkClient`` built from its own
``KafkaConfig`` (kafka-versions.md c.1). Its checks then read broker settings besides the topic's overrides: the
tiered-storage rules of 3.6+ combine the topic's config with the broker's log defaults
(``KafkaConfig.extractLogConfigMap``) and need ``remote.log.storage.system.enable``; the brokers of 3.0-3.5 compare a
local retention with the retention the broker gives a topic that sets none. kto cannot read a broker's settings
from ZooKeeper (they are its ``server.properties``), so a KafkaCluster may state the few that matter
(``spec.brokerConfig``); an unset one is Kafka's default, as on a broker that does not set it.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from topic_operator.kafka import java_lang

__all__ = [
    "BROKER_SETTING_NAMES",
    "REMOTE_LOG_STORAGE_SYSTEM_ENABLE",
    "BrokerSettings",
    "broker_setting_problem",
]

REMOTE_LOG_STORAGE_SYSTEM_ENABLE: Final = "remote.log.storage.system.enable"

_MINUTE_MS: Final = 60_000
_HOUR_MS: Final = 60 * _MINUTE_MS


def _long(text: str) -> int:
    return java_lang.parse_java_long(java_lang.java_trim(text))


def _int(text: str) -> int:
    return java_lang.parse_java_int(java_lang.java_trim(text))


def _boolean(text: str) -> bool:
    return java_lang.parse_java_boolean(java_lang.java_trim(text))


def _policy(text: str) -> list[str]:
    items = java_lang.split_config_list(text)
    if any(item not in ("compact", "delete") for item in items):
        raise ValueError("each item must be compact or delete")
    return items


_PARSERS: Final[Mapping[str, tuple[Callable[[str], object], str]]] = {
    REMOTE_LOG_STORAGE_SYSTEM_ENABLE: (_boolean, "true or false"),
    "log.retention.ms": (_long, "a number of type LONG"),
    "log.retention.minutes": (_int, "a number of type INT"),
    "log.retention.hours": (_int, "a number of type INT"),
    "log.retention.bytes": (_long, "a number of type LONG"),
    "log.local.retention.ms": (_long, "a number of type LONG"),
    "log.local.retention.bytes": (_long, "a number of type LONG"),
    "log.cleaner.min.compaction.lag.ms": (_long, "a number of type LONG"),
    "log.cleaner.max.compaction.lag.ms": (_long, "a number of type LONG"),
    "log.cleanup.policy": (_policy, "a list of compact and delete"),
}

BROKER_SETTING_NAMES: Final[tuple[str, ...]] = tuple(_PARSERS)
"""The broker settings Kafka's topic config checks read (3.6.2:core/src/main/scala/kafka/server/KafkaConfig.scala:2495-2516
``extractLogConfigMap``; ``logRetentionTimeMillis`` :2101-2114), and ``remote.log.storage.system.enable``."""


def broker_setting_problem(name: str, value: object) -> str | None:
    """Why ``name: value`` cannot be a broker setting kto uses, or None."""
    if name not in _PARSERS:
        return (
            f"not a broker setting kafka-topic-operator reads (it reads only those Kafka's topic config checks "
            f"use: {', '.join(BROKER_SETTING_NAMES)})"
        )
    if not isinstance(value, str):
        return 'must be a string, as in server.properties (quote it in YAML: "true", "604800000")'
    parse, expected = _PARSERS[name]
    try:
        parse(value)
    except ValueError:
        return f"must be {expected}"
    return None


@dataclass(frozen=True, slots=True)
class BrokerSettings:
    """The brokers' settings as stated (broker setting name -> value, as in ``server.properties``), each valid
    (``broker_setting_problem``). Hashable, so that checks remembered per config can be remembered per cluster."""

    items: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, settings: Mapping[str, str]) -> BrokerSettings:
        for name, value in settings.items():
            problem = broker_setting_problem(name, value)
            if problem is not None:
                raise ValueError(f"broker setting {name} = {value!r}: {problem}")
        return cls(tuple(sorted(settings.items())))

    @property
    def _given(self) -> dict[str, str]:
        return dict(self.items)

    @property
    def remote_log_storage_system_enable(self) -> bool:
        """Whether the brokers run tiered storage at all; Kafka's default is false."""
        value = self._given.get(REMOTE_LOG_STORAGE_SYSTEM_ENABLE)
        return value is not None and _boolean(value)

    def topic_defaults(self) -> dict[str, str]:
        """What the stated settings give a topic that sets none of its own, under topic config names (as
        ``extractLogConfigMap`` hands them to ``LogConfig.validate``). Settings not stated are left out: the
        topic configs' own defaults are Kafka's broker defaults for them."""
        given = self._given
        defaults: dict[str, str] = {}
        retention = _retention_ms(given)
        if retention is not None:
            defaults["retention.ms"] = str(retention)
        for broker_key, topic_key in (
            ("log.retention.bytes", "retention.bytes"),
            ("log.local.retention.ms", "local.retention.ms"),
            ("log.local.retention.bytes", "local.retention.bytes"),
            ("log.cleaner.min.compaction.lag.ms", "min.compaction.lag.ms"),
            ("log.cleaner.max.compaction.lag.ms", "max.compaction.lag.ms"),
            ("log.cleanup.policy", "cleanup.policy"),
        ):
            if broker_key in given:
                defaults[topic_key] = java_lang.java_trim(given[broker_key])
        return defaults


def _retention_ms(given: Mapping[str, str]) -> int | None:
    """``KafkaConfig.logRetentionTimeMillis``: ms, else minutes, else hours; any negative is -1 (unlimited).
    None when none of the three is stated."""
    if "log.retention.ms" in given:
        millis = _long(given["log.retention.ms"])
    elif "log.retention.minutes" in given:
        millis = _int(given["log.retention.minutes"]) * _MINUTE_MS
    elif "log.retention.hours" in given:
        millis = _int(given["log.retention.hours"]) * _HOUR_MS
    else:
        return None
    return -1 if millis < 0 else millis
