"""Declared topics as flat rows, the form in which they travel through Spark and sit in Parquet.

A ``TopicSpec`` becomes one row of plain values (maps keyed by strings, enums by their manifest spelling) and
comes back unchanged, so the planner sees in a Spark task exactly what ``kto plan`` sees from the manifests.
Schema, as ``DESIRED_SCHEMA`` in ``drift.schema`` declares it for Spark:

    {"cluster": str, "topic": str, "partitions": int, "replicas": int, "config": {str: str},
     "replica_assignment": {"<p>": [int]} | null, "rack_aware_mode": "Enforced" | "Safe" | "Disabled",
     "deletion_policy": "Retain" | "Delete", "mode": "Apply" | "Plan", "source": str}

Absent keys take the manifest defaults, since Spark's ``to_json`` leaves null fields out. ``config`` holds the
canonical strings the manifest loader produces (``validate_topic_config``'s output).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.model import ApplyMode, DeletionPolicy, TopicSpec

__all__ = ["spec_from_row", "spec_to_row"]


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
    }


def spec_from_row(row: Mapping[str, Any]) -> TopicSpec:
    assignment = row.get("replica_assignment")
    return TopicSpec(
        cluster=row["cluster"],
        name=row["topic"],
        partitions=int(row["partitions"]),
        replicas=int(row["replicas"]),
        config=dict(row.get("config") or {}),
        replica_assignment=None
        if assignment is None
        else {int(p): tuple(int(b) for b in replicas) for p, replicas in assignment.items()},
        rack_aware_mode=RackAwareMode(row.get("rack_aware_mode") or RackAwareMode.ENFORCED.value),
        deletion_policy=DeletionPolicy(row.get("deletion_policy") or DeletionPolicy.RETAIN.value),
        mode=ApplyMode(row.get("mode") or ApplyMode.APPLY.value),
        source=row.get("source") or "",
    )
