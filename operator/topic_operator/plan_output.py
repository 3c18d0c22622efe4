"""A plan as people and programs read it: terraform-like text, JSON with a stable schema, and Markdown for a
pull-request comment.

The JSON form is shared by ``kto plan -o json``, the operator's ``status.plan`` and the Spark drift job's
``plans/<cluster>.json``, so that the same plan always serialises to the same document (keys sorted, partitions
in order, replica lists as given). The Markdown form (``kto plan -o markdown``) is as stable, so that CI can
edit its earlier comment rather than add another, and fits GitHub's comment limit.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import orjson

from topic_operator.kafka.cluster_release import release_report
from topic_operator.kafka.errors import KafkaError
from topic_operator.kafka.reassignment import PartitionMove
from topic_operator.kafka.releases import KafkaVersion
from topic_operator.message_text import one_line
from topic_operator.model import ClusterState
from topic_operator.plan import (
    Action,
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    Plan,
    Reassign,
    TopicPlan,
    TopicStatus,
)

__all__ = [
    "GITHUB_COMMENT_LIMIT",
    "action_to_dict",
    "cluster_problems",
    "error_to_dict",
    "plan_json",
    "plan_to_dict",
    "render_plan_markdown",
    "render_plan_text",
    "status_counts",
    "writes_to_dict",
]

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
                **_older_format(action.topic_znode_format),
            }
        case AddPartitions():
            return {
                "type": "add_partitions",
                "topic": action.topic,
                "new_partitions": _partitions(action.new_partitions),
                "expected_version": action.expected_version,
                **_older_format(action.topic_znode_format),
            }
        case AlterConfig():
            altered: dict[str, Any] = {
                "type": "alter_config",
                "topic": action.topic,
                "config": dict(sorted(action.config.items())),
                "expected_version": action.expected_version,
            }
            if action.clear_broker_throttles:
                altered["clear_broker_throttles"] = list(action.clear_broker_throttles)
            return altered
        case DeleteTopic():
            return {"type": "delete", "topic": action.topic}
        case Reassign():
            return {
                "type": "reassign",
                "topic": action.topic,
                "moves": [_move_to_dict(m) for m in action.moves],
                "expected_version": action.expected_version,
                "throttle_bytes_per_second": action.throttle_bytes_per_second,
                "throttled_brokers": list(action.brokers) if action.throttle_bytes_per_second else [],
                "config": None if action.config is None else dict(sorted(action.config.items())),
                "config_expected_version": action.config_expected_version,
            }


def _older_format(version: int) -> dict[str, int]:
    """``topic_znode_format`` when a topic znode is written in a format older than 2.8's (version 3): shown for
    clusters before 2.8, absent otherwise, so a 2.8+ plan reads as it always has."""
    return {} if version == 3 else {"topic_znode_format": version}


def _move_to_dict(move: PartitionMove) -> dict[str, Any]:
    return {
        "partition": move.partition,
        "current": list(move.current),
        "target": list(move.target),
        "adding": list(move.adding),
        "removing": list(move.removing),
    }


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
        **(
            {"reassigning": [_move_to_dict(m) for m in topic.reassigning]}
            if topic.reassigning is not None
            else {}
        ),
        **({"left_alone": [f"config.{key}" for key in topic.left_alone]} if topic.left_alone else {}),
    }


def status_counts(plan: Plan) -> dict[TopicStatus, int]:
    """Topics per status, every status present."""
    return {status: sum(1 for t in plan.topics if t.status is status) for status in TopicStatus}


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "cluster": plan.cluster,
        "summary": {status.value: count for status, count in status_counts(plan).items()},
        "topics": [_topic_to_dict(t) for t in plan.topics],
        "unmanaged": list(plan.unmanaged),
    }


def cluster_problems(state: ClusterState, kafka_version: KafkaVersion | None) -> dict[str, Any]:
    """What the cluster holds that kto cannot read or must not write, and what ZooKeeper shows of its release
    against ``kafka_version``: the keys ``kto plan -o json`` and the drift job's plan files add to the plan."""
    return {
        "unreadable_topics": dict(state.unreadable_topics),
        "unreadable_znodes": dict(state.unreadable_znodes),
        "kraft_migration": state.kraft_migration,
        "kraft_migration_stage": state.kraft_migration_stage,
        "kafka_release": None
        if state.release_evidence is None
        else release_report(kafka_version, state.release_evidence),
    }


def writes_to_dict(state: ClusterState) -> dict[str, str] | None:
    """The ``writes`` key of ``kto plan -o json`` and ``kto apply -o json``: the migration's stage, the path a
    write takes at it (ZooKeeper, AdminProtocol or None) and why; None when not decided (a snapshot file)."""
    return None if state.writer is None else state.writer.to_dict()


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
            if isinstance(action, Reassign):
                throttle = action.throttle_bytes_per_second
                how = (
                    f"throttled at {throttle} B/s on brokers {list(action.brokers)}"
                    if throttle
                    else "unthrottled"
                )
                lines.append(f"    reassign {len(action.moves)} partitions ({how}):")
                lines.extend(f"      {m.describe()}" for m in action.moves[:max_partitions])
                if len(action.moves) > max_partitions:
                    lines.append(
                        f"      ... and {len(action.moves) - max_partitions} more (-o json shows all)"
                    )
            if isinstance(action, AlterConfig) and action.clear_broker_throttles:
                lines.append(
                    f"    the finished reassignment's throttle rates removed from brokers "
                    f"{list(action.clear_broker_throttles)}"
                )
        if topic.reassigning is not None:
            moving = "; ".join(m.describe() for m in topic.reassigning[:max_partitions]) or "requested"
            lines.append(
                f"    reassignment in progress ({len(topic.reassigning)} partitions moving: {moving}); "
                "a replica change waits for it"
            )
        for error in topic.rejections:
            lines.append(f"    {error.kafka_class.rsplit('.', 1)[-1]}: {error.message}")
        if topic.left_alone:
            lines.append(f"    left alone (not owned by the declarations): {_left_alone(topic)}")
    lines.append(f"plan: {_summary(plan)} in the cluster")
    return "\n".join(lines) + "\n"


def _summary(plan: Plan) -> str:
    counts = status_counts(plan)
    return (
        f"{counts[TopicStatus.CREATE]} to create, {counts[TopicStatus.CHANGE]} to change, "
        f"{counts[TopicStatus.DELETE]} to delete, {counts[TopicStatus.REJECTED]} rejected, "
        f"{counts[TopicStatus.UNCHANGED]} unchanged; {len(plan.unmanaged)} unmanaged topics"
    )


# -- Markdown ----------------------------------------------------------------------------------------------------

GITHUB_COMMENT_LIMIT: Final = 65_536
"""Characters GitHub takes in one issue or pull-request comment (GitLab takes more)."""

_CUT_RESERVE: Final = 400
"""Characters kept free for the line that says what a cut left out."""
_MARKDOWN_SPECIAL: Final = re.compile(r"([\\`*_\[\]|~])")
"""What Markdown reads as formatting inside a line (no line of the comment starts with text from a plan, so a
``#`` or a ``-`` there is plain)."""
_TABLE_STATUSES: Final = (TopicStatus.CREATE, TopicStatus.CHANGE, TopicStatus.DELETE, TopicStatus.RETAINED)
_LEFT_OUT: Final = {
    "error": "manifest errors",
    "warning": "warnings",
    "rejection": "rejections",
    "row": "rows of the table of changes",
    "details": "topics' details",
}


def _md(text: object) -> str:
    """Text shown as written: one bounded line, HTML's and Markdown's special characters escaped, so that a
    config value or a Kafka message can neither format the comment nor close its tags."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(one_line(str(text)), quote=False))


def _md_value(value: object) -> str:
    return "(none)" if value is None else _md(value)


def _replicas(replicas: Iterable[int]) -> str:
    return ", ".join(str(b) for b in replicas) or "(none)"


def render_plan_markdown(
    plan: Plan,
    *,
    manifest_errors: Sequence[str] = (),
    warnings: Sequence[str] = (),
    limit: int = GITHUB_COMMENT_LIMIT,
    max_partitions: int = 100,
) -> str:
    """The plan as a pull-request comment: a hidden marker naming the cluster (which a CI step finds to edit its
    comment), a one-line summary, the manifest errors and rejections first (with Kafka's exception and message),
    a table of the topics that change, then each topic's details in a collapsible block: its changes before and
    after, where new partitions go, and the reassignment with its throttle.

    The same plan gives the same text. Longer than ``limit`` characters, the comment ends at the last whole item
    that fits, with a line saying how many of each were left out; it is never refused."""
    head = [
        f"<!-- kto plan: cluster {_md(plan.cluster)} -->",
        f"### kto plan: cluster `{plan.cluster}`",
        "",
        f"**{_md(plan.cluster)}**: {_summary(plan)}",
    ]
    blocks: list[tuple[str, str]] = [("", "\n".join(head))]
    if manifest_errors:
        blocks.append(("", "\n#### Manifest errors\n"))
        blocks.extend(("error", f"- {_md(error)}") for error in manifest_errors)
    if warnings:
        blocks.append(("", "\n#### Warnings\n"))
        blocks.extend(("warning", f"- {_md(warning)}") for warning in warnings)
    rejected = [t for t in plan.topics if t.rejections]
    if rejected:
        blocks.append(("", "\n#### Rejected\n"))
        blocks.extend(
            (
                "rejection",
                f"- `{t.topic}` ({_md(t.source)}): **{e.kafka_class.rsplit('.', 1)[-1]}**: {_md(e.message)}",
            )
            for t in rejected
            for e in t.rejections
        )
    changing = [t for t in plan.topics if t.status in _TABLE_STATUSES]
    if changing:
        blocks.append(
            ("", "\n#### Changes\n\n| | topic | status | changes | declared in |\n|---|---|---|---|---|")
        )
        blocks.extend(("row", _table_row(t)) for t in changing)
    shown = [t for t in plan.topics if t.status not in (TopicStatus.UNCHANGED,)]
    if shown:
        blocks.append(("", "\n#### Details\n"))
        blocks.extend(("details", _details(t, max_partitions)) for t in shown)
    return _fit(blocks, limit)


def _table_row(topic: TopicPlan) -> str:
    changes = "; ".join(
        f"{_md(c.field)}: {_md_value(c.before)} → {_md_value(c.after)}" for c in topic.changes
    )
    return (
        f"| `{_SYMBOL[topic.status]}` | `{topic.topic}` | {topic.status.value} | {changes or '-'} | "
        f"{_md(topic.source) or '-'} |"
    )


def _details(topic: TopicPlan, max_partitions: int) -> str:
    lines = [
        f"<details><summary><code>{_SYMBOL[topic.status]} {topic.topic}</code>: {topic.status.value}</summary>",
        "",
    ]
    if topic.source:
        lines += [f"Declared in {_md(topic.source)}.", ""]
    if topic.changes:
        lines += ["| field | before | after |", "|---|---|---|"]
        lines += [f"| {_md(c.field)} | {_md_value(c.before)} | {_md_value(c.after)} |" for c in topic.changes]
        lines.append("")
    for action in topic.actions:
        if isinstance(action, CreateTopic | AddPartitions):
            placed = action.assignment if isinstance(action, CreateTopic) else action.new_partitions
            lines += [
                "New partitions (replicas, the preferred leader first):",
                "",
                "| partition | replicas |",
                "|---|---|",
            ]
            lines += [f"| {p} | {_replicas(placed[p])} |" for p in sorted(placed)[:max_partitions]]
            lines += _more(len(placed), max_partitions, "partitions")
        if isinstance(action, Reassign):
            throttle = action.throttle_bytes_per_second
            how = (
                f"throttled at {throttle} B/s on brokers {_replicas(action.brokers)}"
                if throttle
                else "unthrottled"
            )
            lines += [
                f"Reassignment of {len(action.moves)} partitions, {how}:",
                "",
                "| partition | replicas now | target | adding | removing |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| {m.partition} | {_replicas(m.current)} | {_replicas(m.target)} | {_replicas(m.adding)} | "
                f"{_replicas(m.removing)} |"
                for m in action.moves[:max_partitions]
            ]
            lines += _more(len(action.moves), max_partitions, "partitions")
        if isinstance(action, AlterConfig) and action.clear_broker_throttles:
            lines += [
                "The finished reassignment's throttle rates are removed from brokers "
                f"{_replicas(action.clear_broker_throttles)}.",
                "",
            ]
    if topic.reassigning is not None:
        lines += [
            f"A reassignment is in progress ({len(topic.reassigning)} partitions moving); a replica change waits "
            "for it.",
            "",
        ]
    for error in topic.rejections:
        lines += [f"**{error.kafka_class.rsplit('.', 1)[-1]}**: {_md(error.message)}", ""]
    if topic.left_alone:
        lines += [f"Left alone, not owned by the declarations: {_md(_left_alone(topic))}.", ""]
    return "\n".join([*lines, "</details>"])


def _left_alone(topic: TopicPlan) -> str:
    return ", ".join(f"config.{key}" for key in topic.left_alone)


def _more(count: int, shown: int, what: str) -> list[str]:
    return (
        [f"... and {count - shown} more {what} (`kto plan -o json` lists every one).", ""]
        if count > shown
        else [""]
    )


def _fit(blocks: Sequence[tuple[str, str]], limit: int) -> str:
    """The blocks, one per line, up to ``limit`` characters; the rest counted by kind in a last line."""
    kept: list[str] = []
    used = 0
    for index, (kind, text) in enumerate(blocks):
        if used + len(text) + 1 > limit - _CUT_RESERVE and kind:
            left = Counter(later for later, _ in blocks[index:] if later)
            what = ", ".join(f"{left[name]} {words}" for name, words in _LEFT_OUT.items() if left[name])
            kept.append(
                f"\n**Cut at the comment limit ({limit:,} characters):** left out {what}. "
                "`kto plan -o json` has the whole plan."
            )
            break
        kept.append(text)
        used += len(text) + 1
    return "\n".join(kept) + "\n"
