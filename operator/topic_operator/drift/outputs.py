"""Where the drift job's files go and what ``summary.json`` holds. Pure: the job hands over collected values.

``--out DIR`` receives ``drift.parquet`` (the findings), ``plans/<cluster>.json`` (each cluster's plan, as
``kto plan -o json`` prints it), ``summary.json`` (this module) and ``report.html`` (``report``); a live run adds
``snapshots/`` (what it read, as ``kto snapshot`` rows).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from topic_operator.drift.kinds import Kind, Severity
from topic_operator.plan import TopicStatus

__all__ = [
    "DRIFT_TABLE",
    "PLANS_DIR",
    "REPORT",
    "SNAPSHOTS_DIR",
    "SUMMARY",
    "ClusterSummary",
    "new_run_id",
    "plan_file_name",
    "summary_document",
    "write_text_atomically",
]

DRIFT_TABLE: Final = "drift.parquet"
PLANS_DIR: Final = "plans"
SUMMARY: Final = "summary.json"
REPORT: Final = "report.html"
SNAPSHOTS_DIR: Final = "snapshots"

_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def plan_file_name(cluster: str) -> str:
    """``<cluster>.json`` for names that are safe file names (every KafkaCluster name is); any other name a
    snapshot may carry is percent-encoded, so no name can reach outside ``plans/``."""
    if _PLAIN_NAME.fullmatch(cluster):
        return f"{cluster}.json"
    return quote(cluster, safe="").replace(".", "%2E") + ".json"


def write_text_atomically(path: Path, text: str) -> None:
    """Readers (a CI step, a browser) never see half a file: write beside it, then rename over it."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


@dataclass(slots=True)
class ClusterSummary:
    """One cluster as the summary and the report show it."""

    name: str
    observed: bool
    declared: int = 0
    topics: int = 0
    brokers: int = 0
    racks: int = 0
    taken_at: str | None = None
    kafka_release: str | None = None
    """The cluster's Kafka release, declared and as ZooKeeper shows it, with the warning when they disagree."""
    read: dict[str, str | None] | None = None
    """How the cluster was read: ``from`` (``live`` or ``snapshot``), ``through`` (the store: ``ZooKeeper`` or
    ``AdminProtocol``) and ``stage`` (its migration's, or None); None when not observed."""
    plan_file: str | None = None
    plan: dict[str, int] = field(default_factory=dict)
    """Topics per plan status (``create``, ``change``, ``rejected``...), as the plan document's summary."""
    findings: dict[str, int] = field(default_factory=dict)
    """Findings per kind."""
    severities: dict[str, int] = field(default_factory=dict)
    unobserved_reason: str | None = None

    @property
    def total(self) -> int:
        return sum(self.findings.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "observed": self.observed,
            "taken_at": self.taken_at,
            "kafka_release": self.kafka_release,
            "read": self.read,
            "brokers": self.brokers,
            "racks": self.racks,
            "declared_topics": self.declared,
            "topics": self.topics,
            "plan_file": self.plan_file,
            "plan": dict(self.plan),
            "findings": dict(sorted(self.findings.items())),
            "severities": dict(sorted(self.severities.items())),
            "unobserved_reason": self.unobserved_reason,
        }


def new_run_id(now: datetime.datetime) -> str:
    """A run's id, as ``summary.json`` records it and ``--history`` orders runs by: the UTC time to the second,
    sortable as text, then random hex digits that keep two runs started in one second apart."""
    return f"{now.astimezone(datetime.UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def _totals(counts: Sequence[Mapping[str, int]], keys: Sequence[str]) -> dict[str, int]:
    return {key: sum(c.get(key, 0) for c in counts) for key in keys}


def summary_document(
    clusters: Sequence[ClusterSummary],
    *,
    run_id: str,
    generated_at: str,
    seed: int,
    inputs: Mapping[str, Any],
    manifest_errors: Sequence[str],
    warnings: Sequence[str],
    timings: Mapping[str, float],
) -> dict[str, Any]:
    """``summary.json``: the run (its id and time, which order runs for ``--history``), fleet totals, then every
    cluster, then what went in and how long it took."""
    kinds = [k.value for k in Kind]
    statuses = [s.value for s in TopicStatus]
    return {
        "run_id": run_id,
        "generated_at": generated_at,
        "seed": seed,
        "totals": {
            "clusters": len(clusters),
            "observed_clusters": sum(1 for c in clusters if c.observed),
            "declared_topics": sum(c.declared for c in clusters),
            "topics": sum(c.topics for c in clusters),
            "findings": sum(c.total for c in clusters),
            "by_severity": _totals([c.severities for c in clusters], [s.value for s in Severity]),
            "by_kind": _totals([c.findings for c in clusters], kinds),
            "plan": _totals([c.plan for c in clusters], statuses),
        },
        "clusters": [c.as_dict() for c in clusters],
        "inputs": dict(inputs),
        "manifest_errors": list(manifest_errors),
        "warnings": list(warnings),
        "timings_seconds": {name: round(seconds, 3) for name, seconds in timings.items()},
    }


def summary_text(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"
