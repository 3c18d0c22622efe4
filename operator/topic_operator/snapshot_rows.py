"""A cluster snapshot as JSON lines: one row per topic, each row self-contained (it carries the brokers too).

This is what ``kto snapshot`` writes and the Spark drift job reads, so a row holds everything the planner needs:
with it, ``plan`` gives the same plan from a file as from the live cluster (znode versions included). A cluster
with no topics is one row whose ``topic`` is null, so its brokers are not lost. Schema version 1:

    {"schema": 1, "cluster": str, "cluster_id": str|null, "controller": int|null, "taken_at": str (ISO 8601),
     "brokers": [{"id": int, "rack": str|null}], "marked_for_deletion": [str], "topic": str|null,
     "partitions": {"<p>": [int]}, "topic_id": str|null, "config": {str: str},
     "topic_znode_version": int, "config_znode_version": int|null, "topic_marked_for_deletion": bool,
     "reassignment_in_progress": bool, "partition_states": {"<p>": {"leader": int, "isr": [int]}}|null,
     "orphan_configs": {str: int}, "unreadable_topics": {str: str}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from topic_operator.model import Broker, ClusterState, PartitionState, TopicState

__all__ = ["SCHEMA_VERSION", "rows_from_cluster", "rows_to_clusters"]

SCHEMA_VERSION = 1


def _cluster_fields(cluster: str, state: ClusterState, taken_at: str) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "cluster": cluster,
        "cluster_id": state.cluster_id,
        "controller": state.controller,
        "taken_at": taken_at,
        "brokers": [{"id": b.id, "rack": b.rack} for b in (state.brokers[i] for i in sorted(state.brokers))],
        "marked_for_deletion": sorted(state.marked_for_deletion),
        "orphan_configs": dict(sorted(state.orphan_configs.items())),
        "unreadable_topics": dict(sorted(state.unreadable_topics.items())),
    }


def _topic_fields(topic: TopicState) -> dict[str, Any]:
    states = topic.partition_states
    return {
        "topic": topic.name,
        "partitions": {str(p): list(topic.partitions[p]) for p in sorted(topic.partitions)},
        "topic_id": topic.topic_id,
        "config": dict(sorted(topic.config.items())),
        "topic_znode_version": topic.topic_znode_version,
        "config_znode_version": topic.config_znode_version,
        "topic_marked_for_deletion": topic.marked_for_deletion,
        "reassignment_in_progress": topic.reassignment_in_progress,
        "partition_states": None
        if states is None
        else {str(p): {"leader": s.leader, "isr": list(s.isr)} for p, s in sorted(states.items())},
    }


def rows_from_cluster(cluster: str, state: ClusterState, taken_at: str) -> list[dict[str, Any]]:
    """One row per topic (sorted), or one topic-less row for a cluster without topics."""
    shared = _cluster_fields(cluster, state, taken_at)
    if not state.topics:
        return [{**shared, "topic": None}]
    return [{**shared, **_topic_fields(state.topics[name])} for name in sorted(state.topics)]


def _partition_map(raw: Mapping[str, Any]) -> dict[int, tuple[int, ...]]:
    return {int(p): tuple(replicas) for p, replicas in raw.items()}


def _partition_states(raw: Mapping[str, Any] | None) -> dict[int, PartitionState] | None:
    """Rows keep what describe and the drift job use (leader, ISR); epochs are not carried."""
    if raw is None:
        return None
    return {
        int(p): PartitionState(leader=s["leader"], isr=tuple(s["isr"]), leader_epoch=0, controller_epoch=0)
        for p, s in raw.items()
    }


def _topic_from_row(row: Mapping[str, Any]) -> TopicState:
    return TopicState(
        name=row["topic"],
        partitions=_partition_map(row["partitions"]),
        topic_id=row.get("topic_id"),
        config=dict(row.get("config") or {}),
        topic_znode_version=int(row.get("topic_znode_version", 0)),
        config_znode_version=row.get("config_znode_version"),
        marked_for_deletion=bool(row.get("topic_marked_for_deletion", False)),
        pending_reassignment=bool(row.get("reassignment_in_progress", False)),
        partition_states=_partition_states(row.get("partition_states")),
    )


def rows_to_clusters(rows: Iterable[Mapping[str, Any]]) -> dict[str, ClusterState]:
    """Rows (of one or many clusters) back to one ClusterState per cluster name.

    A row whose ``schema`` is not ours is refused, naming the cluster and topic, rather than misread.
    """
    shared: dict[str, Mapping[str, Any]] = {}
    topics: dict[str, dict[str, TopicState]] = {}
    for row in rows:
        if row.get("schema") != SCHEMA_VERSION:
            raise ValueError(
                f"snapshot row for cluster {row.get('cluster')!r}, topic {row.get('topic')!r} has schema "
                f"{row.get('schema')!r}; this version of kto reads schema {SCHEMA_VERSION}"
            )
        cluster = row["cluster"]
        shared.setdefault(cluster, row)
        cluster_topics = topics.setdefault(cluster, {})
        if row.get("topic") is not None:
            cluster_topics[row["topic"]] = _topic_from_row(row)
    return {
        cluster: ClusterState(
            cluster_id=first.get("cluster_id"),
            brokers={b["id"]: Broker(b["id"], b.get("rack")) for b in first.get("brokers", [])},
            topics=topics[cluster],
            controller=first.get("controller"),
            orphan_configs=dict(first.get("orphan_configs") or {}),
            marked_for_deletion=frozenset(first.get("marked_for_deletion") or ()),
            unreadable_topics=dict(first.get("unreadable_topics") or {}),
        )
        for cluster, first in shared.items()
    }
