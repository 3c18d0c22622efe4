"""A plan as people and programs read it: terraform-like text, and JSON with a stable schema.

The JSON form is shared by ``kto plan -o json``, the operator's ``status.plan`` and the Spark drift job's
``plans/<cluster>.json``, so that the same plan always serialises to the same document (keys sorted, partitions
in order, replica lists as given).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from topic_operator.kafka.errors import KafkaError
from topic_operator.plan import (
    Action,
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    Plan,
    TopicPlan,
    TopicStatus,
)

__all__ = ["action_to_dict", "error_to_dict", "plan_json", "plan_to_dict", "render_plan_text"]

_SYMBOL = {
    TopicStatus.CREATE: "+",
    TopicStatus.CHANGE: "~",
    TopicStatus.DELETE: "-",
    TopicStatus.REJECTED: "!",
    TopicStatus.UNCHANGED: " ",
    TopicStatus.RETAINED: " ",
}


def _partitions(assignment: Mapping[int, tuple[int, ...]]) -> dict[str, list[int]]:
    return {str(p): list(assignment[p]) for p in sorted(assignment)}


def action_to_dict(action: Action) -> dict[str, Any]:
    match action:
        case CreateTopic():
            return {
                "type": "create",
                "topic": action.topic,
                "assignment": _partitions(action.assignment),
                "config": dict(sorted(action.config.items())),
                "orphan_config_version": action.orphan_config_version,
            }
        case AddPartitions():
            return {
                "type": "add_partitions",
                "topic": action.topic,
                "new_partitions": _partitions(action.new_partitions),
                "expected_version": action.expected_version,
            }
        case AlterConfig():
            return {
                "type": "alter_config",
                "topic": action.topic,
                "config": dict(sorted(action.config.items())),
                "expected_version": action.expected_version,
            }
        case DeleteTopic():
            return {"type": "delete", "topic": action.topic}


def error_to_dict(error: KafkaError) -> dict[str, Any]:
    return {
        "kafka_class": error.kafka_class,
        "error_code": error.error_code,
        "message": error.message,
        "field": error.field,
        "stricter_than_kafka": error.stricter_than_kafka,
    }


def _topic_to_dict(topic: TopicPlan) -> dict[str, Any]:
    return {
        "topic": topic.topic,
        "status": topic.status.value,
        "source": topic.source,
        "changes": [{"field": c.field, "before": c.before, "after": c.after} for c in topic.changes],
        "actions": [action_to_dict(a) for a in topic.actions],
        "rejections": [error_to_dict(e) for e in topic.rejections],
    }


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    counts = {status.value: sum(1 for t in plan.topics if t.status is status) for status in TopicStatus}
    return {
        "cluster": plan.cluster,
        "summary": counts,
        "topics": [_topic_to_dict(t) for t in plan.topics],
        "unmanaged": list(plan.unmanaged),
    }


def plan_json(plan: Plan, **extra: Any) -> str:
    """``plan_to_dict`` (plus ``extra`` keys) as indented JSON text ending in a newline: ``kto plan -o json``
    and the drift job's plan files. orjson writes what ``json.dumps(indent=2)`` writes, except that it leaves
    non-ASCII characters as UTF-8 rather than escaping them, at a twentieth of the cost, which counts for a
    fleet's plans."""
    return orjson.dumps({**plan_to_dict(plan), **extra}, option=orjson.OPT_INDENT_2).decode() + "\n"


def _value(value: object) -> str:
    return "(none)" if value is None else repr(value) if isinstance(value, str) else str(value)


def render_plan_text(plan: Plan, *, show_unchanged: bool = False, max_partitions: int = 6) -> str:
    """``+`` create, ``~`` change, ``-`` delete, ``!`` rejected (with Kafka's exception and message); the
    replicas of at most ``max_partitions`` new partitions per topic, for a reviewer (JSON has every one)."""
    lines: list[str] = [f"cluster {plan.cluster}:"]
    for topic in plan.topics:
        if topic.status in (TopicStatus.UNCHANGED, TopicStatus.RETAINED) and not show_unchanged:
            continue
        where = f"  ({topic.source})" if topic.source else ""
        lines.append(f"{_SYMBOL[topic.status]} topic {topic.topic}: {topic.status.value}{where}")
        for change in topic.changes:
            lines.append(f"    {change.field}: {_value(change.before)} -> {_value(change.after)}")
        for action in topic.actions:
            if isinstance(action, CreateTopic | AddPartitions):
                placed = action.assignment if isinstance(action, CreateTopic) else action.new_partitions
                shown = sorted(placed)[:max_partitions]
                lines.extend(f"    partition {p}: replicas {list(placed[p])}" for p in shown)
                if len(placed) > len(shown):
                    lines.append(
                        f"    ... and {len(placed) - len(shown)} more partitions (-o json shows all)"
                    )
        for error in topic.rejections:
            lines.append(f"    {error.kafka_class.rsplit('.', 1)[-1]}: {error.message}")
    counts = {s: sum(1 for t in plan.topics if t.status is s) for s in TopicStatus}
    lines.append(
        f"plan: {counts[TopicStatus.CREATE]} to create, {counts[TopicStatus.CHANGE]} to change, "
        f"{counts[TopicStatus.DELETE]} to delete, {counts[TopicStatus.REJECTED]} rejected, "
        f"{counts[TopicStatus.UNCHANGED]} unchanged; {len(plan.unmanaged)} unmanaged topics in the cluster"
    )
    return "\n".join(lines) + "\n"
