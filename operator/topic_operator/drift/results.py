"""The drift run's outputs, written on the driver from every cluster's row, whichever engine computed the rows.

Both engines (Spark's grouped Python stage in ``job``, and the pool of processes in ``processes``) run the same
per-cluster function (``arrow_stage.cluster_table``) and hand this module the same Arrow table: one row of
``CLUSTER_DRIFT_ARROW`` per cluster, in any order. From it, ``write_results`` checks the problems of every cluster
first (any stops the run, with the files named, before anything is written), then writes ``plans/<cluster>.json``,
``drift.parquet`` (the findings, sorted, one part file written by pyarrow), ``report.html`` and ``summary.json``.

No pyspark here: the process engine would pay a second of imports for nothing.
"""

from __future__ import annotations

import datetime
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from topic_operator.drift.arrow_schemas import FINDINGS_ARROW
from topic_operator.drift.cluster_drift import InputProblem, Problem, SnapshotError, snapshot_error
from topic_operator.drift.history import History
from topic_operator.drift.kinds import FINDING_COLUMNS, Finding, Severity
from topic_operator.drift.outputs import (
    DRIFT_TABLE,
    PLANS_DIR,
    REPORT,
    SUMMARY,
    ClusterSummary,
    new_run_id,
    plan_file_name,
    summary_document,
    summary_text,
    write_text_atomically,
)
from topic_operator.drift.progress import Progress
from topic_operator.drift.rules import BrokerLoad, unobserved_finding
from topic_operator.model import ClusterSpec

__all__ = ["DriftResult", "FleetFacts", "SnapshotError", "write_results"]


@dataclass(frozen=True, slots=True)
class FleetFacts:
    """What a run knows besides the rows: the clusters' policies, the inventory, what failed, what went in."""

    clusters: Mapping[str, ClusterSpec] = field(default_factory=dict)
    """Each cluster's policy, from its KafkaCluster document; a cluster without one is planned as ``kto plan``
    plans it: ``ClusterSpec(name, "")`` (no prefix limit, Kafka 3.4)."""
    expected_clusters: Sequence[str] = ()
    """Clusters that must be observed even with nothing declared (the live inventory)."""
    unreachable: Mapping[str, str] = field(default_factory=dict)
    """Clusters a live read failed on, with the reason."""
    manifest_errors: Sequence[str] = ()
    warnings: Sequence[str] = ()
    described: Mapping[str, Any] = field(default_factory=dict)
    """What went in (paths, mode, engine), as ``summary.json`` records it."""
    history: History | None = None
    """Earlier runs (``--history``), for the report's trend; None: no trend section."""


@dataclass(frozen=True, slots=True)
class DriftResult:
    out: Path
    summary: dict[str, Any]
    clusters: list[ClusterSummary]
    timings: dict[str, float]

    @property
    def findings(self) -> int:
        return int(self.summary["totals"]["findings"])

    def count(self, severity: Severity) -> int:
        return int(self.summary["totals"]["by_severity"].get(severity.value, 0))


def _problems(rows: Sequence[dict[str, Any]]) -> list[InputProblem]:
    return [
        InputProblem(Problem(p["problem"]), row["cluster"], p["file"], p["detail"])
        for row in rows
        for p in row["problems"] or ()
    ]


def _kinds(table: Any) -> list[list[tuple[str, str]]]:
    """Each row's findings as (kind, severity) pairs: only these two columns are turned into Python objects."""
    findings = table.column("findings").combine_chunks()
    flat = findings.flatten()
    kinds, severities = flat.field("kind").to_pylist(), flat.field("severity").to_pylist()
    offsets = findings.offsets.to_pylist()
    valid = findings.is_valid().to_pylist()
    return [
        list(zip(kinds[start:end], severities[start:end], strict=True)) if ok else []
        for start, end, ok in zip(offsets, offsets[1:], valid, strict=False)
    ]


def _write_plans(rows: Sequence[dict[str, Any]], directory: Path, staged: Path | None) -> None:
    """``plans/``, replaced whole: from the rows' documents, or by ``staged``, the directory where the process
    engine's workers wrote them (its rows carry none), renamed over it."""
    if directory.exists():
        shutil.rmtree(directory)
    if staged is not None:
        staged.rename(directory)
        return
    directory.mkdir(parents=True)
    for row in rows:
        if row["document"] is not None:
            write_text_atomically(directory / plan_file_name(row["cluster"]), row["document"])


def _cluster_summaries(
    rows: Sequence[dict[str, Any]], facts: FleetFacts
) -> tuple[list[ClusterSummary], list[Finding]]:
    """Every cluster's summary, and the findings of the clusters no task saw (in the inventory or a failed live
    read, with nothing declared): ``cluster_unobserved``, made here."""
    summaries: dict[str, ClusterSummary] = {}
    for row in rows:
        name = row["cluster"]
        summary = ClusterSummary(name, observed=row["observed"], declared=int(row["declared"]))
        if row["observed"]:
            summary.topics, summary.brokers, summary.racks = row["topics"], row["brokers"], row["racks"]
            summary.taken_at = row["taken_at"]
            summary.kafka_release = row["kafka_release"]
            summary.read = {
                "from": "live" if name in facts.expected_clusters else "snapshot",
                "through": row["read_through"],
                "stage": row["migration_stage"],
            }
            summary.plan_file = plan_file_name(name)
            summary.plan = dict(row["plan"])
        for kind, severity in row["kinds"]:
            summary.findings[kind] = summary.findings.get(kind, 0) + 1
            summary.severities[severity] = summary.severities.get(severity, 0) + 1
        summaries[name] = summary
    unseen: list[Finding] = []
    for name in sorted((set(facts.expected_clusters) | set(facts.unreachable)) - set(summaries)):
        finding = unobserved_finding(name, 0, facts.unreachable.get(name))
        summaries[name] = ClusterSummary(name, observed=False)
        summaries[name].findings = {finding.kind: 1}
        summaries[name].severities = {finding.severity: 1}
        unseen.append(finding)
    for name, reason in facts.unreachable.items():
        summaries[name].unobserved_reason = reason
    return [summaries[name] for name in sorted(summaries)], unseen


def _loads(rows: Sequence[dict[str, Any]]) -> list[BrokerLoad]:
    return [
        BrokerLoad(row["cluster"], load["broker"], load["rack"], load["registered"], load["replicas"],
                   load["leaders"])
        for row in rows
        for load in row["loads"] or ()
    ]  # fmt: skip


def _sample(rows: Sequence[dict[str, Any]]) -> list[Finding]:
    return [Finding(*(f[c] for c in FINDING_COLUMNS)) for row in rows for f in row["sample"] or ()]


def _finding_table(results: Any, unseen: Sequence[Finding]) -> Any:
    """Every finding as one Arrow table in ``drift.parquet``'s order: cluster, topic (cluster-wide findings
    first), kind, field, desired; nulls first, as Spark sorts ascending."""
    found = results.column("findings").combine_chunks().flatten()
    tables = [pa.Table.from_struct_array(found).cast(FINDINGS_ARROW)] if len(found) else []
    columns = {name: pa.array([getattr(f, name) for f in unseen], pa.string()) for name in FINDING_COLUMNS}
    tables.append(pa.table(columns).cast(FINDINGS_ARROW))
    keys = ("cluster", "topic", "kind", "field", "desired")
    table = pa.concat_tables(tables)
    if int(pa.__version__.split(".")[0]) >= 25:  # null placement per key; the one for all is deprecated
        return table.sort_by([(name, "ascending", "at_start") for name in keys])
    return table.sort_by([(name, "ascending") for name in keys], null_placement="at_start")


def _write_findings(table: Any, directory: Path) -> None:
    """``drift.parquet`` laid out as Spark lays out a table (a directory of part files and ``_SUCCESS``),
    replaced whole: written beside it, then renamed over it."""
    partial = directory.with_name(f".{directory.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    pq.write_table(table, partial / f"part-00000-{uuid.uuid4()}-c000.snappy.parquet", compression="snappy")
    (partial / "_SUCCESS").touch()
    if directory.exists():
        shutil.rmtree(directory)
    partial.rename(directory)


def write_results(
    table: Any,
    facts: FleetFacts,
    out: Path,
    *,
    seed: int,
    progress: Progress,
    staged_plans: Path | None = None,
) -> DriftResult:
    """Write ``out`` from the clusters' rows (``table``, ``CLUSTER_DRIFT_ARROW``); nothing is written when a
    snapshot line is unreadable (``SnapshotError``, naming the files). ``staged_plans``: the plans were already
    written there, one file per observed cluster (the rows' documents are then None), and are moved into place."""
    rows = table.select([name for name in table.column_names if name != "findings"]).to_pylist()
    for row, kinds in zip(rows, _kinds(table), strict=True):
        row["kinds"] = kinds
    message = snapshot_error(_problems(rows))
    if message is not None:
        raise SnapshotError(message)
    out.mkdir(parents=True, exist_ok=True)
    rows = sorted((r for r in rows if r["cluster"] is not None), key=lambda r: r["cluster"])
    summaries, unseen = _cluster_summaries(rows, facts)
    with progress.phase("writing plans"):
        _write_plans(rows, out / PLANS_DIR, staged_plans)
    with progress.phase("writing drift.parquet"):
        _write_findings(_finding_table(table, unseen), out / DRIFT_TABLE)
    python_seconds = round(sum(int(r["micros"]) for r in rows) / 1e6, 3)
    now = datetime.datetime.now(datetime.UTC)
    run = (new_run_id(now), now.isoformat(timespec="seconds"))
    with progress.phase("rendering the report"):
        from topic_operator.drift.report import ReportData, render_report  # matplotlib: only when needed

        summary = _summary(summaries, facts, seed, python_seconds, progress.timings, run)
        sample = _sample(rows) + unseen
        data = ReportData(summary, summaries, sample, _loads(rows), facts.history)
        write_text_atomically(out / REPORT, render_report(data))
    summary = _summary(summaries, facts, seed, python_seconds, progress.timings, run)
    write_text_atomically(out / SUMMARY, summary_text(summary))
    return DriftResult(out, summary, summaries, dict(progress.timings))


def _summary(
    clusters: Sequence[ClusterSummary],
    facts: FleetFacts,
    seed: int,
    python_seconds: float,
    timings: Mapping[str, float],
    run: tuple[str, str],
) -> dict[str, Any]:
    return summary_document(
        clusters,
        run_id=run[0],
        generated_at=run[1],
        seed=seed,
        inputs={**facts.described, "python_plan_seconds": python_seconds},
        manifest_errors=facts.manifest_errors,
        warnings=facts.warnings,
        timings=timings,
    )
