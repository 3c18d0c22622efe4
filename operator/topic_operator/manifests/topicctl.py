"""topicctl topic files -> the body of a kto.dev KafkaTopic, so teams that manage topics with topicctl keep their files.

A topicctl topic file is a YAML document with ``meta`` (``name``, ``cluster``, and descriptive fields) and ``spec``
(``partitions``, ``replicationFactor``, ``retentionMinutes``, ``settings``, ``placement``, ``migration``), and no
``apiVersion`` or ``kind``. topicctl reads it strictly (an unknown field is an error), and so does this module.
What it means for the cluster is carried over exactly as topicctl would write it:

- ``retentionMinutes`` (when positive) is ``retention.ms``, in milliseconds; giving both is refused, as topicctl
  refuses it.
- ``settings`` are the config overrides. topicctl turns each value into Kafka's string as follows, and so does
  this module: a list is its items joined with commas (``follower.replication.throttled.replicas: [0:1, 1:2]``),
  a boolean ``true``/``false``, a whole number its digits, another number two decimals, null the empty string.
- ``placement.strategy``: ``any`` and ``cross-rack`` are Kafka's own rack-aware placement (which puts a partition's
  replicas in distinct racks whenever there are enough); ``static`` is ``replicaAssignment``, from
  ``staticAssignments``. ``in-rack``, ``static-in-rack`` and ``balanced-leaders`` have no equivalent in Kafka's
  placement, and are refused with what they would need. The ``picker`` only breaks ties in topicctl's own
  placement; kto places new topics as Kafka does and never re-places existing ones, so it is not used.
- ``migration`` (topicctl's throttles for its own replica moves) changes nothing in the topic, and is not used.

Pure: a body in, a body and the problems out. Problems name topicctl's fields (``spec.settings.retention.ms``);
``FIELD_NAMES`` maps the converted body's fields back to them for the checks that run on the converted body.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from topic_operator.manifests.schema import API_VERSION, MISSING

__all__ = ["TOPICCTL_KIND", "TopicctlTopic", "field_names", "is_topicctl_topic", "read_topicctl_topic"]

TOPICCTL_KIND: Final = "topicctl topic"
"""How messages name such a document (it has no ``kind``)."""

META_FIELDS: Final = ("name", "cluster", "region", "environment", "description", "labels", "consumers")
SPEC_FIELDS: Final = (
    "partitions",
    "replicationFactor",
    "retentionMinutes",
    "settings",
    "placement",
    "migration",
)
PLACEMENT_FIELDS: Final = ("strategy", "picker", "staticAssignments", "staticRackAssignments")
PICKERS: Final = ("cluster-use", "lowest-index", "randomized")
RACK_AWARE: Final = ("any", "cross-rack")
STATIC: Final = "static"
NO_EQUIVALENT: Final = {
    "in-rack": "keeps every replica of a partition in its leader's rack",
    "static-in-rack": "picks each partition's replicas within a rack listed per partition",
    "balanced-leaders": "balances the leaders of the partitions across racks",
}
"""topicctl placement strategies that Kafka's placement cannot express, with what each does."""

_MINUTE_MS: Final = 60_000


@dataclass(slots=True)
class TopicctlTopic:
    """The converted KafkaTopic body (None when the document is not usable at all) and what is wrong."""

    body: dict[str, Any] | None
    problems: list[tuple[str, object, str]] = field(default_factory=list)
    """(topicctl field path, value or MISSING, rule)."""
    notes: list[str] = field(default_factory=list)
    """Things carried over that a reader may not expect (not errors)."""
    retention_from_minutes: bool = False


def is_topicctl_topic(body: object) -> bool:
    """A document with ``meta`` and a ``spec`` giving partitions or a replication factor, and no ``apiVersion``
    or ``kind``: topicctl's cluster, ACL and user files have ``meta`` and ``spec`` too, but neither of those."""
    if not isinstance(body, Mapping) or "apiVersion" in body or "kind" in body:
        return False
    spec = body.get("spec")
    return (
        isinstance(body.get("meta"), Mapping)
        and isinstance(spec, Mapping)
        and ("partitions" in spec or "replicationFactor" in spec)
    )


def field_names(*, retention_from_minutes: bool) -> dict[str, str]:
    """Converted KafkaTopic field -> the topicctl field it came from, for messages about the converted body."""
    names = {
        "metadata.name": "meta.name",
        "spec.topicName": "meta.name",
        "spec.cluster": "meta.cluster",
        "spec.replicas": "spec.replicationFactor",
        "spec.config": "spec.settings",
        "spec.replicaAssignment": "spec.placement.staticAssignments",
    }
    if retention_from_minutes:
        names["spec.config.retention.ms"] = "spec.retentionMinutes"
    return names


def read_topicctl_topic(body: Mapping[str, Any]) -> TopicctlTopic:
    """The KafkaTopic a topicctl topic file declares, with every problem in topicctl's field names."""
    result = TopicctlTopic(body=None)
    for unknown in sorted(set(body) - {"meta", "spec"}, key=str):
        result.problems.append(
            (str(unknown), body[unknown], "unknown field of a topicctl topic (known: meta, spec)")
        )
    meta, spec = body["meta"], body["spec"]
    _unknown(result, "meta", meta, META_FIELDS)
    _unknown(result, "spec", spec, SPEC_FIELDS)
    converted: dict[str, Any] = {}
    for source, target in (("name", "topicName"), ("cluster", "cluster")):
        if source not in meta:
            result.problems.append((f"meta.{source}", MISSING, "required field is missing"))
        elif meta[source] is not None:
            converted[target] = meta[source]
    for source, target in (("partitions", "partitions"), ("replicationFactor", "replicas")):
        if source in spec and spec[source] is not None:
            converted[target] = spec[source]
    config = _settings(result, spec.get("settings"))
    _retention(result, spec.get("retentionMinutes"), config)
    if config:
        converted["config"] = config
    assignment = _placement(result, spec.get("placement"))
    if assignment is not None:
        converted["replicaAssignment"] = assignment
    result.body = {
        "apiVersion": API_VERSION,
        "kind": "KafkaTopic",
        "metadata": {"name": "topicctl"},  # no object name in topicctl; the topic's name is spec.topicName
        "spec": converted,
    }
    return result


def _unknown(result: TopicctlTopic, where: str, mapping: Mapping[Any, Any], known: tuple[str, ...]) -> None:
    for name in sorted(set(mapping) - set(known), key=str):
        rule = f"unknown field of a topicctl topic (known: {', '.join(known)})"
        result.problems.append((f"{where}.{name}", mapping[name], rule))


def _settings(result: TopicctlTopic, settings: object) -> dict[str, str]:
    """Each setting as the string topicctl writes to Kafka."""
    if settings is None:
        return {}
    if not isinstance(settings, Mapping):
        result.problems.append(("spec.settings", settings, "must be a mapping of config names to values"))
        return {}
    config: dict[str, str] = {}
    for key, value in settings.items():
        text = _setting_text(value)
        if text is None:
            rule = "a topicctl setting is a string, a number, a boolean or a list of those"
            result.problems.append((f"spec.settings.{key}", value, rule))
        else:
            config[str(key)] = text
    return config


def _setting_text(value: object) -> str | None:
    """topicctl's conversion of a setting value to Kafka's string, or None for a value it refuses."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return f"{value:.2f}"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        items = [_setting_text(item) for item in value]
        if any(
            item is None or isinstance(original, list) for item, original in zip(items, value, strict=True)
        ):
            return None
        return ",".join(item for item in items if item is not None)
    return None


def _retention(result: TopicctlTopic, minutes: object, config: dict[str, str]) -> None:
    if minutes is None:
        return
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 0:
        rule = "must be a whole number of minutes, 0 or more (0: no retention override)"
        result.problems.append(("spec.retentionMinutes", minutes, rule))
        return
    if minutes == 0:
        return
    if "retention.ms" in config:
        rule = "cannot set both retentionMinutes and retention.ms in settings (topicctl refuses it too)"
        result.problems.append(("spec.retentionMinutes", minutes, rule))
        return
    config["retention.ms"] = str(minutes * _MINUTE_MS)
    result.retention_from_minutes = True


def _placement(result: TopicctlTopic, placement: object) -> object:
    """The replica assignment a static placement declares; None for Kafka's rack-aware placement or a problem."""
    strategies = ", ".join([*RACK_AWARE, STATIC, *NO_EQUIVALENT])
    if not isinstance(placement, Mapping):
        rule = f"a topicctl topic needs placement.strategy (one of {strategies})"
        result.problems.append(("spec.placement", MISSING if placement is None else placement, rule))
        return None
    _unknown(result, "spec.placement", placement, PLACEMENT_FIELDS)
    picker = placement.get("picker")
    if picker is not None and picker not in PICKERS:
        result.problems.append(("spec.placement.picker", picker, f"must be one of {', '.join(PICKERS)}"))
    strategy = placement.get("strategy")
    if strategy in RACK_AWARE:
        if placement.get("staticAssignments") is not None:
            result.notes.append(
                f"spec.placement.staticAssignments is used by the static strategy only, not {strategy}: not used"
            )
        return None
    if strategy == STATIC:
        assignment = placement.get("staticAssignments")
        if assignment is None:
            result.problems.append(
                ("spec.placement.staticAssignments", MISSING, "the static strategy needs staticAssignments")
            )
            return None
        return assignment
    if isinstance(strategy, str) and strategy in NO_EQUIVALENT:
        rule = (
            f"topicctl's {strategy} strategy {NO_EQUIVALENT[strategy]}; Kafka's placement has no equivalent, so "
            "kto cannot keep it: use any or cross-rack (Kafka's rack-aware placement), or static with "
            "staticAssignments listing each partition's brokers"
        )
        result.problems.append(("spec.placement.strategy", strategy, rule))
        return None
    path = "spec.placement.strategy"
    result.problems.append((path, MISSING if strategy is None else strategy, f"must be one of {strategies}"))
    return None
