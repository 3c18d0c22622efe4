"""Declared topics as flat rows, the form in which they travel through Spark and sit in Parquet.

A ``TopicSpec`` becomes one row of plain values (maps keyed by strings, enums by their manifest spelling) and
comes back unchanged, so the planner sees in a Spark task exactly what ``kto plan`` sees from the manifests.
Schema, as ``DESIRED_SCHEMA`` in ``drift.schema`` declares it for Spark:

    {"cluster": str, "topic": str, "partitions": int, "replicas": int, "config": {str: str},
     "replica_assignment": {"<p>": [int]} | null, "rack_aware_mode": "Enforced" | "Safe" | "Disabled",
     "deletion_policy": "Retain" | "Delete", "mode": "Apply" | "Plan", "source": str,
     "unmanaged_config": [str] | null}

Absent keys take the manifest defaults, since Spark's ``to_json`` leaves null fields out. ``config`` holds the
canonical strings the manifest loader produces (``validate_topic_config``'s output).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.model import ApplyMode, DeletionPolicy, TopicSpec

__all__ = ["spec_from_row", "spec_from_values", "spec_to_row"]


def spec_to_row(spec: TopicSpec) -> dict[str, Any]:
    assignment = spec.replica_assignment
    return {
        "cluster": spec.cluster,
        "topic": spec.name,
        "partitions": spec.partitions,
        "replicas": spec.replicas,
        "config": dict(spec.config),
        "replica_assignment": None
        if assignment is None
        else {str(p): list(assignment[p]) for p in sorted(assignment)},
        "rack_aware_mode": spec.rack_aware_mode.value,
        "deletion_policy": spec.deletion_policy.value,
        "mode": spec.mode.value,
        "source": spec.source,
        "unmanaged_config": sorted(spec.unmanaged_config) or None,
    }


def spec_from_row(row: Mapping[str, Any]) -> TopicSpec:
    return spec_from_values(
        row["cluster"],
        row["topic"],
        row["partitions"],
        row["replicas"],
        row.get("config"),
        row.get("replica_assignment"),
        row.get("rack_aware_mode"),
        row.get("deletion_policy"),
        row.get("mode"),
        row.get("source"),
        row.get("unmanaged_config"),
    )


_RACK_AWARE_MODES: Final = {m.value: m for m in RackAwareMode}
_DELETION_POLICIES: Final = {p.value: p for p in DeletionPolicy}
_APPLY_MODES: Final = {m.value: m for m in ApplyMode}


def spec_from_values(
    cluster: str,
    topic: str,
    partitions: Any,
    replicas: Any,
    config: Mapping[str, str] | Iterable[tuple[str, str]] | None,
    replica_assignment: Mapping[str, Iterable[int]] | Iterable[tuple[str, Iterable[int]]] | None,
    rack_aware_mode: str | None,
    deletion_policy: str | None,
    mode: str | None,
    source: str | None,
    unmanaged_config: Iterable[str] | None = None,
) -> TopicSpec:
    """A row's values in the schema's column order (``DESIRED_ARROW.names``, the parameters' order: a test holds
    them equal; maps as mappings or as Arrow's key-value pairs): what a
    Spark task converts a million times at 1M, so the enums are looked up in dicts (an unknown spelling still
    raises the enum's ``ValueError``)."""
    assignment = None if replica_assignment is None else dict(replica_assignment)
    return TopicSpec(
        cluster=cluster,
        name=topic,
        partitions=int(partitions),
        replicas=int(replicas),
        config=dict(config or {}),
        replica_assignment=None
        if assignment is None
        else {int(p): tuple(int(b) for b in replicas) for p, replicas in assignment.items()},
        rack_aware_mode=_RACK_AWARE_MODES.get(rack_aware_mode or RackAwareMode.ENFORCED.value)
        or RackAwareMode(rack_aware_mode),
        deletion_policy=_DELETION_POLICIES.get(deletion_policy or DeletionPolicy.RETAIN.value)
        or DeletionPolicy(deletion_policy),
        mode=_APPLY_MODES.get(mode or ApplyMode.APPLY.value) or ApplyMode(mode),
        source=source or "",
        unmanaged_config=frozenset(unmanaged_config or ()),
    )
