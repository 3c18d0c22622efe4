"""A cluster snapshot as JSON lines: a header row with what the cluster's topics share, then one row per topic.

This is what ``kto snapshot`` writes and the Spark drift job reads, so the rows hold everything the planner
needs: with them, ``plan`` gives the same plan from a file as from the live cluster (znode versions included).

Schema version 2 (written). The header row, one per cluster and snapshot, has ``topic`` null:

    {"schema": 2, "cluster": str, "taken_at": str (ISO 8601), "topic": null, "cluster_id": str|null,
     "controller": int|null, "brokers": [{"id": int, "rack": str|null}], "marked_for_deletion": [str],
     "orphan_configs": {str: int}, "unreadable_topics": {str: str},
     "unreadable_znodes": {str: str}, "kraft_migration": str|null,
     "kraft_migration_stage": str|null, "kafka_release": {...}|null,
     "backend": "kraft", "broker_release": str|null, "metadata_version": str|null,
     "writes": {"stage": str, "through": str, "reason": str}}

``unreadable_znodes`` (path -> problem: broker registrations, ``/controller``, ``/cluster/id``, partition states,
``/admin/reassign_partitions``, ``/migration``), ``kraft_migration`` (why the cluster must not be written, or
null), ``kraft_migration_stage`` (where the migration stands, in words) and ``kafka_release`` (what the znodes tell of the brokers' release: ``ReleaseEvidence.to_dict``, or null)
were added later within version 2: readers that do not know them ignore them, and files without them read as
none found. So were ``backend``, ``broker_release`` and ``metadata_version``, written only for a cluster read
through the Admin protocol (absent: read through ZooKeeper), and ``writes`` (``{"stage", "through", "reason"}``:
where a migration to KRaft stands and which path writes), written only when the rest does not imply it. They are not among ``HEADER_FIELDS``, which readers compare to tell two snapshots apart.

and each topic row carries the header's ``taken_at``, which ties it to its header:

    {"schema": 2, "cluster": str, "taken_at": str, "topic": str, "partitions": {"<p>": [int]},
     "topic_id": str|null, "config": {str: str}, "topic_znode_version": int, "config_znode_version": int|null,
     "topic_marked_for_deletion": bool, "reassignment_in_progress": bool,
     "partition_states": {"<p>": {"leader": int, "isr": [int]}}|null}

Schema version 1 (still read) repeated the header's fields on every topic row, and had a header row only for a
cluster without topics. Repeating them doubled a fleet's snapshot bytes (a dozen brokers and the deletion markers
on every line) and most of the time a reader spends parsing them, so version 2 writes them once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from topic_operator.kafka.cluster_release import ReleaseEvidence
from topic_operator.kafka.kraft_migration import WriterChoice, choose_writer
from topic_operator.model import Backend, Broker, ClusterState, PartitionState, TopicState

__all__ = [
    "ADDED_HEADER_FIELDS",
    "HEADER_FIELDS",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "cluster_from_rows",
    "is_header_row",
    "rows_from_cluster",
    "rows_to_clusters",
    "topic_state_from_row",
]

SCHEMA_VERSION: Final = 2
READABLE_VERSIONS: Final = (1, 2)

HEADER_FIELDS: Final = (
    "cluster_id",
    "controller",
    "taken_at",
    "brokers",
    "marked_for_deletion",
    "orphan_configs",
    "unreadable_topics",
)
"""What a cluster's topics share, written once in its header row (and on every row by version 1)."""

ADDED_HEADER_FIELDS: Final = (
    "unreadable_znodes",
    "kraft_migration",
    "kraft_migration_stage",
    "kafka_release",
)
"""Header fields added within version 2 (see the module's docstring): read when present, absent meaning none."""


def _header_row(cluster: str, state: ClusterState, taken_at: str) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "cluster": cluster,
        "taken_at": taken_at,
        "topic": None,
        "cluster_id": state.cluster_id,
        "controller": state.controller,
        "brokers": [{"id": b.id, "rack": b.rack} for b in (state.brokers[i] for i in sorted(state.brokers))],
        "marked_for_deletion": sorted(state.marked_for_deletion),
        "orphan_configs": dict(sorted(state.orphan_configs.items())),
        "unreadable_topics": dict(sorted(state.unreadable_topics.items())),
        "unreadable_znodes": dict(sorted(state.unreadable_znodes.items())),
        "kraft_migration": state.kraft_migration,
        "kraft_migration_stage": state.kraft_migration_stage,
        "kafka_release": state.release_evidence.to_dict() if state.release_evidence is not None else None,
        **_admin_fields(state),
        **_writes_field(state),
    }


def _default_writer(backend: Backend, kraft_migration: str | None) -> WriterChoice | None:
    """The writer a snapshot without ``writes`` implies: the only one its backend has, with no migration seen
    (None when a migration was seen: its stage is not in the file)."""
    if backend is Backend.KRAFT:
        return choose_writer(None, zookeeper=False, brokers=True)
    return choose_writer(None, zookeeper=True, brokers=False) if kraft_migration is None else None


def _writes_field(state: ClusterState) -> dict[str, Any]:
    """``writes`` (the migration's stage and writer) when it is not what the rest of the header implies, so that
    the snapshots of clusters not migrating stay as they were."""
    choice = state.writer
    if choice is None or choice == _default_writer(state.backend, state.kraft_migration):
        return {}
    return {"writes": choice.to_dict()}


def _writer(header: Mapping[str, Any], backend: Backend) -> WriterChoice | None:
    """The header's ``writes``, or what the rest of the header implies; one not in the form written is None."""
    written = header.get("writes")
    if written is None:
        return _default_writer(backend, header.get("kraft_migration"))
    try:
        return WriterChoice.from_dict(written)
    except (KeyError, TypeError, ValueError):
        return None


def _admin_fields(state: ClusterState) -> dict[str, Any]:
    """What a read through the Admin protocol adds to the header: the backend, and the release and metadata
    version the brokers report. Absent for a ZooKeeper read, so that its snapshots stay as they were."""
    if state.backend is Backend.ZOOKEEPER:
        return {}
    release = state.broker_release
    return {
        "backend": state.backend.value,
        "broker_release": f"{release[0]}.{release[1]}" if release is not None else None,
        "metadata_version": state.metadata_version,
    }


def _broker_release(text: object) -> tuple[int, int] | None:
    if not isinstance(text, str) or text.count(".") != 1:
        return None
    major, minor = text.split(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


def _topic_row(cluster: str, topic: TopicState, taken_at: str) -> dict[str, Any]:
    states = topic.partition_states
    return {
        "schema": SCHEMA_VERSION,
        "cluster": cluster,
        "taken_at": taken_at,
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
    """The header row, then one row per topic (sorted by name)."""
    header = _header_row(cluster, state, taken_at)
    return [header, *(_topic_row(cluster, state.topics[name], taken_at) for name in sorted(state.topics))]


def is_header_row(row: Mapping[str, Any]) -> bool:
    """A row that carries the cluster's shared fields: every version 1 row, and version 2's topic-less row."""
    return row.get("schema") == 1 or row.get("topic") is None


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
    return topic_state_from_row(
        row, _partition_map(row["partitions"]), _partition_states(row.get("partition_states"))
    )


def topic_state_from_row(
    row: Mapping[str, Any],
    partitions: Mapping[int, tuple[int, ...]],
    partition_states: Mapping[int, PartitionState] | None = None,
) -> TopicState:
    """A topic row's state, its partitions (and states) read by the caller: the drift job's one-pass reader
    reads them together with the topic's health."""
    return TopicState(
        name=row["topic"],
        partitions=partitions,
        topic_id=row.get("topic_id"),
        config=dict(row.get("config") or {}),
        topic_znode_version=int(row.get("topic_znode_version", 0)),
        config_znode_version=row.get("config_znode_version"),
        marked_for_deletion=bool(row.get("topic_marked_for_deletion", False)),
        pending_reassignment=bool(row.get("reassignment_in_progress", False)),
        partition_states=partition_states,
    )


def cluster_from_rows(header: Mapping[str, Any], topic_rows: Iterable[Mapping[str, Any]]) -> ClusterState:
    """One cluster's ``ClusterState`` from its header fields and its topic rows (only their topic fields are
    read, so version 1 rows and version 2 rows give the same state)."""
    topics = {row["topic"]: _topic_from_row(row) for row in topic_rows}
    return ClusterState(
        cluster_id=header.get("cluster_id"),
        brokers={b["id"]: Broker(b["id"], b.get("rack")) for b in header.get("brokers") or []},
        topics=topics,
        controller=header.get("controller"),
        orphan_configs=dict(header.get("orphan_configs") or {}),
        marked_for_deletion=frozenset(header.get("marked_for_deletion") or ()),
        unreadable_topics=dict(header.get("unreadable_topics") or {}),
        unreadable_znodes=dict(header.get("unreadable_znodes") or {}),
        kraft_migration=header.get("kraft_migration"),
        kraft_migration_stage=header.get("kraft_migration_stage"),
        release_evidence=_release_evidence(header.get("kafka_release")),
        backend=(backend := Backend(header.get("backend", Backend.ZOOKEEPER.value))),
        broker_release=_broker_release(header.get("broker_release")),
        metadata_version=header.get("metadata_version"),
        writer=_writer(header, backend),
    )


def _release_evidence(value: object) -> ReleaseEvidence | None:
    """The header's ``kafka_release``; absent (an older file) or not in the form written is None: the release
    was not read, which is not the same as read and telling nothing."""
    if not isinstance(value, Mapping):
        return None
    try:
        return ReleaseEvidence.from_dict(value)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


_SOMETIMES_WRITTEN: Final = ("backend", "broker_release", "metadata_version", "writes")
"""Header fields written only when they say something (see the module's docstring): kept when present."""


def _shared(row: Mapping[str, Any]) -> dict[str, Any]:
    shared = {key: row.get(key) for key in (*HEADER_FIELDS, *ADDED_HEADER_FIELDS)}
    shared.update((key, row[key]) for key in _SOMETIMES_WRITTEN if key in row)
    return shared


def rows_to_clusters(rows: Iterable[Mapping[str, Any]]) -> dict[str, ClusterState]:
    """Rows (of one or many clusters, versions 1 and 2) back to one ClusterState per cluster name.

    Refused, with the cluster named, rather than misread: a row of another schema; topic rows without a header
    row; two header rows of one cluster that disagree (two snapshots mixed); a topic row whose ``taken_at`` is
    not its header's.
    """
    headers: dict[str, dict[str, Any]] = {}
    topic_rows: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("schema") not in READABLE_VERSIONS:
            raise ValueError(
                f"snapshot row for cluster {row.get('cluster')!r}, topic {row.get('topic')!r} has schema "
                f"{row.get('schema')!r}; this version of kto reads schemas 1 and 2"
            )
        cluster = row["cluster"]
        if row.get("topic") is not None:
            topic_rows.setdefault(cluster, []).append(row)
        if not is_header_row(row):
            continue
        shared = _shared(row)
        first = headers.setdefault(cluster, shared)
        if row.get("schema") == 2 and first is not shared and first != shared:
            raise ValueError(
                f"cluster {cluster!r} has two snapshot headers (taken at {first['taken_at']!r} and "
                f"{shared['taken_at']!r}): keep one snapshot per cluster"
            )
    for cluster, listed in topic_rows.items():
        header = headers.get(cluster)
        if header is None:
            raise ValueError(
                f"snapshot rows of cluster {cluster!r} have no header row (the row whose topic is null, which "
                "kto snapshot writes first): the snapshot is incomplete"
            )
        stray = next((r for r in listed if r.get("taken_at") != header["taken_at"]), None)
        if stray is not None:
            raise ValueError(
                f"snapshot row of cluster {cluster!r}, topic {stray['topic']!r} was taken at "
                f"{stray.get('taken_at')!r}, its header at {header['taken_at']!r}: keep one snapshot per cluster"
            )
    return {name: cluster_from_rows(header, topic_rows.get(name, ())) for name, header in headers.items()}
