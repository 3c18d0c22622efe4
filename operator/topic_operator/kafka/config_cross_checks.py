"""The rules of a topic's config that look at several keys at once, as each release line applies them.

They run once every value has parsed and passed its own validator (``ConfigDef.parse`` first, then
``validateValues``), in Kafka's order (kafka-versions.md c.3):

* 2.3+: ``min.compaction.lag.ms`` must not exceed ``max.compaction.lag.ms``;
* 3.0-3.5: the brokers' ``LogConfig`` constructor refuses a local retention above the total one (or -1 while the
  total is bounded). ``LogConfig.validate`` does not, so AdminZkClient writes such a config and every broker then
  fails to apply it: refused here, in the broker's words, ``stricter_than_kafka``;
* 3.6+: the broker's own ``LogConfig.validate`` combines the topic's overrides with the brokers' settings and
  checks tiered storage: the brokers must run it, a compacted topic cannot use it, local retention within total;
* 3.9 in ZooKeeper mode: ``remote.log.copy.disable`` and ``remote.log.delete.on.disable`` may not be true, and
  (``remote_storage_turned_off``) remote storage cannot be turned off;
* on a KRaft controller (3.9 in KRaft mode, and 4.0+, ``ZOOKEEPER_MODE_REMOVED``, which has no other mode): those
  ZooKeeper-mode refusals are gone. The controller runs the KRaft path of the same checks (``fromZK=false``): with
  ``remote.log.copy.disable`` the local retentions must equal the total ones, and remote storage may be turned
  off only with ``remote.log.delete.on.disable``. Read at 3.9.0-rc3 and unchanged on trunk@1eb76443 (2024-10-25,
  on the way to 4.0); 3.9.0's KRaft controller accepts both keys set to true (CreateTopics with
  ``validate_only``), and ZooKeeper-mode 3.9.0 brokers refuse them.

Which path judges is the writer's: ``kraft`` is true where the write goes to a KRaft controller (a cluster read
through its brokers, or a migration whose stage writes through them), false where it goes to ZooKeeper.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from topic_operator.kafka import java_lang
from topic_operator.kafka.broker_settings import REMOTE_LOG_STORAGE_SYSTEM_ENABLE, BrokerSettings
from topic_operator.kafka.config_validators import ParsedValue, expect_list, expect_number
from topic_operator.kafka.errors import ConfigError, InvalidConfigurationError
from topic_operator.kafka.releases import (
    COMPACTION_LAG_CHECK,
    LOCAL_RETENTION_IN_CONSTRUCTOR,
    REMOTE_STORAGE_BROKER_CHECKS,
    ZK_REMOTE_LOG_DISABLE_REFUSED,
    ZOOKEEPER_MODE_REMOVED,
    KafkaVersion,
)

__all__ = ["cross_field_problems", "remote_storage_turned_off"]

_MIN_COMPACTION_LAG: Final = "min.compaction.lag.ms"
_MAX_COMPACTION_LAG: Final = "max.compaction.lag.ms"
_REMOTE_STORAGE: Final = "remote.storage.enable"
_COPY_DISABLE: Final = "remote.log.copy.disable"
_DELETE_ON_DISABLE: Final = "remote.log.delete.on.disable"
_LOCAL_RETENTIONS: Final = (
    ("local.retention.ms", "retention.ms"),
    ("local.retention.bytes", "retention.bytes"),
)
_INHERIT: Final = -2
"""A local retention of -2 follows the total retention: nothing to compare."""


def cross_field_problems(
    parsed: Mapping[str, ParsedValue],
    props: Mapping[str, object],
    kafka_version: KafkaVersion,
    broker: BrokerSettings | None,
    *,
    kraft: bool = False,
) -> list[InvalidConfigurationError]:
    """Every rule across keys ``kafka_version`` has that the config breaks, in Kafka's order (the first is the
    one Kafka reports). ``parsed``: every key of the line, absent ones at their starting value; ``props``: the
    keys the topic sets; ``kraft``: judged by a KRaft controller (always so from 4.0)."""
    problems: list[InvalidConfigurationError] = []
    if kafka_version >= COMPACTION_LAG_CHECK:
        lag = _compaction_lag_problem(parsed)
        if lag is not None:
            problems.append(lag)
    first, last = LOCAL_RETENTION_IN_CONSTRUCTOR
    if first <= kafka_version < last:
        problems.extend(_constructor_local_retention(parsed, props, kafka_version, broker))
    if kafka_version >= REMOTE_STORAGE_BROKER_CHECKS:
        problems.extend(
            _tiered_storage(parsed, kafka_version, broker, kraft=_on_a_kraft_controller(kafka_version, kraft))
        )
    return problems


def _on_a_kraft_controller(kafka_version: KafkaVersion, kraft: bool) -> bool:
    """Whether a KRaft controller judges: said so, or a line that has no ZooKeeper mode."""
    return kraft or kafka_version >= ZOOKEEPER_MODE_REMOVED


def _compaction_lag_problem(parsed: Mapping[str, ParsedValue]) -> InvalidConfigurationError | None:
    """``LogConfig.validateValues`` (2.3.1:core/src/main/scala/kafka/log/LogConfig.scala:313-319)."""
    min_lag = expect_number(_MIN_COMPACTION_LAG, parsed[_MIN_COMPACTION_LAG])
    max_lag = expect_number(_MAX_COMPACTION_LAG, parsed[_MAX_COMPACTION_LAG])
    if min_lag <= max_lag:
        return None
    return InvalidConfigurationError(
        f"conflict topic config setting {_MIN_COMPACTION_LAG} ({min_lag}) > {_MAX_COMPACTION_LAG} ({max_lag})",
        field="config",
    )


def _constructor_local_retention(
    parsed: Mapping[str, ParsedValue],
    props: Mapping[str, object],
    kafka_version: KafkaVersion,
    broker: BrokerSettings | None,
) -> list[InvalidConfigurationError]:
    """The brokers' ``LogConfig`` constructor of 3.0-3.5 (3.0.2:core/src/main/scala/kafka/log/LogConfig.scala:110-150;
    3.5.2:storage/.../LogConfig.java:110-148, whose -1 message drops the final period): a local retention must
    not be -1 while the total is not -1, and must not be above it. Kafka's comparison includes a total of -1
    (unlimited): any local retention other than -2 and -1 is then "more than" it.

    What the broker compares with is the topic's total retention, or the broker's own when the topic has none:
    ``broker`` when it states it, otherwise Kafka's default (7 days, -1 bytes), and the message says so:
    refusing a config a broker with longer retention would take costs declaring ``retention.ms`` on the topic;
    accepting one the brokers refuse would leave a topic whose config every broker fails to apply.
    """
    stated = broker.topic_defaults() if broker is not None else {}
    period = "" if kafka_version >= (3, 5) else "."
    problems: list[InvalidConfigurationError] = []
    for local_key, total_key in _LOCAL_RETENTIONS:
        if local_key not in props or local_key not in parsed:
            continue
        local = expect_number(local_key, parsed[local_key])
        from_broker = total_key not in props and total_key in stated
        total = int(stated[total_key]) if from_broker else expect_number(total_key, parsed[total_key])
        if local == _INHERIT:
            continue
        if local == -1 and total != -1:
            reason = f"Value must not be -1 as {total_key} value is set as {total}{period}"
        elif local > total:
            reason = f"Value must not be more than property: {total_key} value."
        else:
            continue
        note = ""
        if total_key not in props and not from_broker:
            note = (
                f" ({total_key} is not set on the topic: compared with Kafka's default, {total}, as the brokers' "
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


def _tiered_storage(
    parsed: Mapping[str, ParsedValue],
    kafka_version: KafkaVersion,
    broker: BrokerSettings | None,
    *,
    kraft: bool,
) -> list[InvalidConfigurationError]:
    """The broker's ``validateTopicLogConfigValues`` (3.6.2:storage/src/main/java/org/apache/kafka/storage/internals/
    log/LogConfig.java:550-614; 3.9.0-rc3:...:625-700), on the topic's overrides over the brokers' settings."""
    problems: list[InvalidConfigurationError] = []
    if kafka_version >= ZK_REMOTE_LOG_DISABLE_REFUSED and not kraft:
        set_true = [key for key in (_DELETE_ON_DISABLE, _COPY_DISABLE) if parsed.get(key) is True]
        if set_true:
            problems.append(
                InvalidConfigurationError(
                    "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` under "
                    "Zookeeper's mode.",
                    field=f"config.{set_true[0]}",
                )
            )
    if parsed.get(_REMOTE_STORAGE) is not True:
        return problems
    system_enabled = broker is not None and broker.remote_log_storage_system_enable
    if not system_enabled:
        stated = broker is not None and REMOTE_LOG_STORAGE_SYSTEM_ENABLE in dict(broker.items)
        note = (
            ""
            if stated
            else f" (kafka-topic-operator takes the brokers' {REMOTE_LOG_STORAGE_SYSTEM_ENABLE} from the "
            "KafkaCluster's spec.brokerConfig; it is not set there, so it is false, Kafka's default)"
        )
        problems.append(
            ConfigError(
                "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote "
                f"log storage.{note}",
                field=f"config.{_REMOTE_STORAGE}",
            )
        )
    if any("compact" in item.lower() for item in expect_list("cleanup.policy", parsed["cleanup.policy"])):
        problems.append(
            ConfigError(
                "Remote log storage is unsupported for the compacted topics", field="config.cleanup.policy"
            )
        )
    for local_key, total_key in reversed(_LOCAL_RETENTIONS):  # Kafka checks the size first, then the time
        local = expect_number(local_key, parsed[local_key])
        total = expect_number(total_key, parsed[total_key])
        bounded = total > -1 if total_key == "retention.bytes" else total != -1
        if not bounded or local == _INHERIT:
            continue
        if local == -1:
            reason = f"Value must not be -1 as {total_key} value is set as {total}."
        elif local > total:
            reason = f"Value must not be more than {total_key} property value: {total}"
        else:
            continue
        problems.append(
            ConfigError(
                f"Invalid value {local} for configuration {local_key}: {reason}", field=f"config.{local_key}"
            )
        )
    if kraft and kafka_version >= ZK_REMOTE_LOG_DISABLE_REFUSED:
        problems.extend(_retention_when_copy_disabled(parsed))
    return problems


def _retention_when_copy_disabled(parsed: Mapping[str, ParsedValue]) -> list[InvalidConfigurationError]:
    """``validateRetentionConfigsWhenRemoteCopyDisabled`` on the KRaft path (3.9.0-rc3:storage/.../LogConfig.java:
    657-673, called at :640 once remote storage is on; the ZooKeeper path refuses the key before it): a topic that
    stops copying to remote storage must keep locally what it keeps in total, size first."""
    if parsed.get(_COPY_DISABLE) is not True:
        return []
    for local_key, total_key in reversed(_LOCAL_RETENTIONS):
        local = expect_number(local_key, parsed[local_key])
        if local not in (_INHERIT, expect_number(total_key, parsed[total_key])):
            return [
                InvalidConfigurationError(
                    f"When `{_COPY_DISABLE}` is set to true, the `{local_key}` and `{total_key}` must be set to "
                    "the identical value because there will be no more logs copied to the remote storage.",
                    field=f"config.{local_key}",
                )
            ]
    return []


def _is_true(raw: str | None) -> bool:
    if raw is None:
        return False
    try:
        return java_lang.parse_java_boolean(java_lang.java_trim(raw))
    except ValueError:
        return False


_TURNING_OFF: Final = (
    "It is invalid to disable remote storage without deleting remote data. If you want to keep the remote "
    "data and turn to read only, please set `remote.storage.enable=true,remote.log.copy.disable=true`. If you "
    "want to disable remote storage and delete all remote data, please set "
    "`remote.storage.enable=false,remote.log.delete.on.disable=true`."
)


def remote_storage_turned_off(
    before: Mapping[str, str], after: Mapping[str, str], *, kafka_version: KafkaVersion, kraft: bool = False
) -> InvalidConfigurationError | None:
    """3.9's brokers refuse to apply a config that turns ``remote.storage.enable`` from true to false without
    ``remote.log.delete.on.disable`` (3.9.0-rc3:core/src/main/scala/kafka/log/LogManager.scala:978-984), which in
    ZooKeeper mode cannot be set either; AdminZkClient would write it (it passes no existing config). So on 3.9
    remote storage, once on, stays on: refused, ``stricter_than_kafka``.

    On a KRaft controller (``kraft``, and every 4.0+ line) the controller itself refuses it, given the topic's
    existing config (``validateTurningOffRemoteStorageWithDelete``, 3.9.0-rc3:storage/.../LogConfig.java:642-655 on the KRaft path;
    not checked on 4.x): Kafka's own rule, and ``remote.log.delete.on.disable=true`` is the way to turn it off."""
    if kafka_version < ZK_REMOTE_LOG_DISABLE_REFUSED:
        return None
    if not _is_true(before.get(_REMOTE_STORAGE)) or _is_true(after.get(_REMOTE_STORAGE)):
        return None
    if _is_true(after.get(_DELETE_ON_DISABLE)):
        return None
    if _on_a_kraft_controller(kafka_version, kraft):
        return InvalidConfigurationError(_TURNING_OFF, field=f"config.{_REMOTE_STORAGE}")
    return InvalidConfigurationError(
        f"{_TURNING_OFF} (Kafka's brokers refuse to apply it; in ZooKeeper mode neither of those two keys may be "
        "true, so remote storage stays on.)",
        field=f"config.{_REMOTE_STORAGE}",
        stricter_than_kafka=True,
    )
