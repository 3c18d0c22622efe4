"""Topic config cases for a release line, to set Kafka's own verdict beside the product's: for every key the
line defines, values of its type at and around its bounds, spellings Java reads differently from Python, and
invalid forms; then combinations across keys whose rules involve two of them.

The values are drawn from the catalogue's types and bounds, but the verdict each case is held to is the real
broker's: a bound the catalogue has wrong shows as a disagreement on its neighbour.
"""

from __future__ import annotations

from topic_operator.kafka.config_validators import GzipLevelValidator, Range, ValidList, ValidString
from topic_operator.kafka.releases import KafkaVersion
from topic_operator.kafka.topic_configs import ConfigType, TopicConfigDef, topic_configs_at

__all__ = ["cases_for"]

_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1

_CROSS_KEY: dict[str, dict[str, str]] = {
    "compaction-lags-crossed": {"min.compaction.lag.ms": "2000", "max.compaction.lag.ms": "1000"},
    "compaction-lags-equal": {"min.compaction.lag.ms": "1000", "max.compaction.lag.ms": "1000"},
    "local-retention-above-total": {"local.retention.ms": "1000", "retention.ms": "500"},
    "local-bytes-above-total": {"local.retention.bytes": "1000", "retention.bytes": "500"},
    "local-retention-unlimited-total": {"local.retention.ms": "1000", "retention.ms": "-1"},
    "remote-storage-on": {"remote.storage.enable": "true"},  # tiered storage is off on the test brokers
    "remote-storage-off": {"remote.storage.enable": "false"},
    "remote-copy-disable": {"remote.log.copy.disable": "true"},
    "remote-delete-on-disable": {"remote.log.delete.on.disable": "true"},
    "remote-both-disable": {"remote.log.copy.disable": "true", "remote.log.delete.on.disable": "true"},
    "remote-compact": {"remote.storage.enable": "true", "cleanup.policy": "compact"},
    "gzip-level-with-gzip": {"compression.type": "gzip", "compression.gzip.level": "9"},
    "gzip-level-with-zstd": {"compression.type": "zstd", "compression.gzip.level": "9"},
    "timestamps-both": {"message.timestamp.before.max.ms": "1000", "message.timestamp.after.max.ms": "1000"},
    "throttled-both": {
        "leader.replication.throttled.replicas": "0:1",
        "follower.replication.throttled.replicas": "*",
    },
    "unknown-key": {"no.such.config": "1"},
    "broker-key": {"log.retention.ms": "1000"},
}


def cases_for(line: KafkaVersion) -> dict[str, dict[str, str]]:
    """Case name -> config, for every key of ``line`` and the cross-key combinations that name only keys the
    line defines (a key it does not define is still tried once, by ``unknown-key`` and the removed keys)."""
    definitions = topic_configs_at(line)
    cases: dict[str, dict[str, str]] = {}
    for definition in definitions.values():
        for number, value in enumerate(_values(definition)):
            cases[f"{definition.name}-{number}"] = {definition.name: value}
    for name, config in _CROSS_KEY.items():
        if all(key in definitions for key in config) or name in ("unknown-key", "broker-key"):
            cases[name] = dict(config)
    for removed in (
        "message.format.version",
        "message.timestamp.difference.max.ms",
        "message.downconversion.enable",
    ):
        if removed not in definitions:
            cases[f"removed-{removed}"] = {removed: "1" if "ms" in removed else "true"}
    return cases


def _values(definition: TopicConfigDef) -> list[str]:
    """Values of the key's type: its default, its bounds and their neighbours, Java's spellings, invalid forms."""
    values = [definition.default]
    kind = definition.type
    validator = definition.validator
    if kind in (ConfigType.INT, ConfigType.LONG):
        top = _INT_MAX if kind is ConfigType.INT else _LONG_MAX
        values += [
            "0",
            "1",
            "-1",
            "+5",
            " 7",
            "7 ",
            "0x10",
            "1.5",
            "1e3",
            "abc",
            "",
            "٣",
            str(top),
            str(top + 1),
        ]
        if isinstance(validator, Range):
            for bound in (validator.minimum, validator.maximum):
                if bound is not None:
                    values += [str(bound - 1), str(bound), str(bound + 1)]
        if isinstance(validator, GzipLevelValidator):
            values += [str(v) for v in (validator.minimum - 1, validator.minimum, validator.maximum,
                                        validator.maximum + 1, validator.default)]  # fmt: skip
    elif kind is ConfigType.DOUBLE:
        values += [
            "0",
            "0.5",
            "1",
            "1.01",
            "-0.1",
            "NaN",
            "Infinity",
            "1e-3",
            "0x1p-3",
            "5f",
            "abc",
            "",
            " 0.5",
        ]
        if isinstance(validator, Range):
            for bound in (validator.minimum, validator.maximum):
                if bound is not None:
                    values += [str(bound), f"{bound - 0.001}", f"{bound + 0.001}"]
    elif kind is ConfigType.BOOLEAN:
        values += ["true", "false", "TRUE", "False", " true", "yes", "1", ""]
    elif kind is ConfigType.STRING:
        if isinstance(validator, ValidString):
            values += list(validator.allowed)
            values += [validator.allowed[0].upper(), validator.allowed[0].lower(), f" {validator.allowed[0]}"]
        values += ["bogus", ""]
        if definition.name == "message.format.version":
            values += ["3.0", "3.0-IV1", "0.10.0", "9.9", "2.8.", "3.8-IV0"]
    elif kind is ConfigType.LIST:
        if isinstance(validator, ValidList):
            values += list(validator.allowed)
            values += [",".join(validator.allowed), f" {validator.allowed[0]} ", f"{validator.allowed[0]},"]
            values += [",", "bogus", f"{validator.allowed[0]},{validator.allowed[0]}"]
        else:  # the throttled-replica lists
            values += ["*", " * ", "0:1,1:2", "0:1, 1:2", "0-1", "0:1,*", "*,0:1", "a:b", "-1:0"]
        values += [""]
    return list(dict.fromkeys(values))
