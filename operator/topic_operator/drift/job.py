"""The drift job: declared topics against snapshots of many clusters, in one Spark job with one Python stage.

1. **Per cluster, in Python** (``cogroup(...).applyInArrow`` by cluster): the snapshot lines, read as text and
   keyed by their ``cluster`` field, meet the cluster's declared topics (typed Arrow columns), and one task runs
   ``cluster_drift.cluster_drift`` on them (``arrow_stage``): orjson reads and checks every line, the engine's
   ``plan`` plans the cluster exactly as ``kto plan`` does, and the rules classify it and count its broker
   load. Out comes one Arrow row per cluster (``CLUSTER_DRIFT_SCHEMA``): its findings, plan document, broker
   load, summary counts, and any problem with its lines. The driver collects the rows as Arrow (``toArrow``).
2. **Write, on the driver**: the problems of every cluster are checked first (any stops the run, with the files
   named, before anything is written); then ``plans/<cluster>.json``, ``drift.parquet`` (the findings, already
   Arrow, sorted and written by pyarrow as one part file), ``summary.json`` and ``report.html``.

The earlier design ran each rule natively (Spark's JSON source, health with higher-order functions, a full outer
join, an explode per replica for broker load, Spark writing the Parquet): about ten Spark jobs, each paying the
JVM's cold generated code, which cost more than all the Python work below a million topics. What is left of
Spark here is what only it does: reading the files in parallel, bringing each cluster's lines together, and
running the clusters' Python tasks on every core (or every executor).

Partitioning: snapshot lines are split by Spark's file source, then hash-partitioned by cluster with the declared
rows into a few tasks per core; a cluster is one group, so its lines must fit one Python worker (a 100k-topic
cluster is about 90 MB of text). What reaches the driver is proportional to the drift (findings) and to the
fleet's topic count only through the plan documents (about 200 bytes a topic).
"""

from __future__ import annotations

import datetime
import functools
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - the conventional alias
from pyspark.sql.pandas.types import to_arrow_schema

from topic_operator.drift.arrow_stage import run_cluster
from topic_operator.drift.cluster_drift import InputProblem, Problem, snapshot_error
from topic_operator.drift.inputs import DESIRED_COLUMNS, SnapshotError
from topic_operator.drift.kinds import FINDING_COLUMNS, Finding, Severity
from topic_operator.drift.outputs import (
    DRIFT_TABLE,
    PLANS_DIR,
    REPORT,
    SUMMARY,
    ClusterSummary,
    plan_file_name,
    summary_document,
    summary_text,
    write_text_atomically,
)
from topic_operator.drift.progress import Progress
from topic_operator.drift.rules import BrokerLoad, unobserved_finding
from topic_operator.drift.schema import CLUSTER_DRIFT_SCHEMA, FINDINGS_SCHEMA
from topic_operator.model import ClusterSpec

__all__ = ["CLUSTER_PHASE", "DriftInputs", "DriftResult", "drift_by_cluster", "run_drift"]


@dataclass(frozen=True, slots=True)
class DriftInputs:
    desired: DataFrame
    """Declared topics (``DESIRED_SCHEMA``'s columns)."""
    snapshots: DataFrame
    """``inputs.read_snapshots``'s frame: one row per snapshot line, keyed by its cluster."""
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
    """What went in (paths, mode), as ``summary.json`` records it."""


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


# ---------------------------------------------------------------------------------------------------------------
# The Python stage.


def _tasks(spark: SparkSession) -> int:
    """Python tasks of the cluster stage: a few per core, so that large and small clusters even out."""
    return 4 * spark.sparkContext.defaultParallelism


def drift_by_cluster(spark: SparkSession, inputs: DriftInputs, seed: int, sample_size: int) -> DataFrame:
    """``CLUSTER_DRIFT_SCHEMA`` rows: one per cluster that has snapshot lines or declared topics (and one for
    the lines without a readable cluster, whose ``cluster`` is null)."""
    tasks = _tasks(spark)
    declared = inputs.desired.select(*DESIRED_COLUMNS).repartition(tasks, "cluster")
    lines = inputs.snapshots.select("cluster", "value", "file").repartition(tasks, "cluster")
    grouped = declared.groupBy("cluster").cogroup(lines.groupBy("cluster"))
    function = functools.partial(
        run_cluster,
        settings=dict(inputs.clusters),
        unreachable=dict(inputs.unreachable),
        seed=seed,
        sample_size=sample_size,
        schema=to_arrow_schema(CLUSTER_DRIFT_SCHEMA),
    )
    return grouped.applyInArrow(function, schema=CLUSTER_DRIFT_SCHEMA)


# ---------------------------------------------------------------------------------------------------------------
# The outputs, on the driver.


_FINDINGS_ARROW = to_arrow_schema(FINDINGS_SCHEMA)


def _problems(rows: Sequence[dict[str, Any]]) -> list[InputProblem]:
    return [
        InputProblem(Problem(p["problem"]), row["cluster"], p["file"], p["detail"])
        for row in rows
        for p in row["problems"] or ()
    ]


def _write_plans(rows: Sequence[dict[str, Any]], directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    for row in rows:
        if row["document"] is not None:
            write_text_atomically(directory / plan_file_name(row["cluster"]), row["document"])


def _cluster_summaries(
    rows: Sequence[dict[str, Any]], inputs: DriftInputs
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
            summary.plan_file = plan_file_name(name)
            summary.plan = dict(row["plan"])
        for kind, severity in row["kinds"]:
            summary.findings[kind] = summary.findings.get(kind, 0) + 1
            summary.severities[severity] = summary.severities.get(severity, 0) + 1
        summaries[name] = summary
    unseen: list[Finding] = []
    for name in sorted((set(inputs.expected_clusters) | set(inputs.unreachable)) - set(summaries)):
        finding = unobserved_finding(name, 0, inputs.unreachable.get(name))
        summaries[name] = ClusterSummary(name, observed=False)
        summaries[name].findings = {finding.kind: 1}
        summaries[name].severities = {finding.severity: 1}
        unseen.append(finding)
    for name, reason in inputs.unreachable.items():
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
    tables = [pa.Table.from_struct_array(found).cast(_FINDINGS_ARROW)] if len(found) else []
    columns = {name: pa.array([getattr(f, name) for f in unseen], pa.string()) for name in FINDING_COLUMNS}
    tables.append(pa.table(columns).cast(_FINDINGS_ARROW))
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


CLUSTER_PHASE = "reading, planning and classifying (Python tasks by cluster)"
"""The progress phase of the Python stage: everything but writing the outputs."""


def run_drift(
    spark: SparkSession,
    inputs: DriftInputs,
    out: Path,
    *,
    seed: int = 0,
    progress: Progress | None = None,
    report_rows_per_cluster: int = 50,
) -> DriftResult:
    """Run the stage (one Spark job) and write ``out``; nothing is written when a snapshot line is unreadable."""
    progress = progress if progress is not None else Progress(None)
    results = drift_by_cluster(spark, inputs, seed, report_rows_per_cluster)
    kinds = F.transform(
        "findings", lambda f: F.struct(f["kind"].alias("kind"), f["severity"].alias("severity"))
    )
    with progress.phase(CLUSTER_PHASE):
        table = results.select("*", kinds.alias("kinds")).toArrow()
    rows = table.select([name for name in table.column_names if name != "findings"]).to_pylist()
    for row in rows:
        row["kinds"] = [(k["kind"], k["severity"]) for k in row["kinds"] or ()]
    message = snapshot_error(_problems(rows))
    if message is not None:
        raise SnapshotError(message)
    out.mkdir(parents=True, exist_ok=True)
    rows = sorted((r for r in rows if r["cluster"] is not None), key=lambda r: r["cluster"])
    summaries, unseen = _cluster_summaries(rows, inputs)
    with progress.phase("writing plans"):
        _write_plans(rows, out / PLANS_DIR)
    with progress.phase("writing drift.parquet"):
        _write_findings(_finding_table(table, unseen), out / DRIFT_TABLE)
    python_seconds = round(sum(int(r["micros"]) for r in rows) / 1e6, 3)
    with progress.phase("rendering the report"):
        from topic_operator.drift.report import ReportData, render_report  # matplotlib: only when needed

        summary = _summary(summaries, inputs, seed, python_seconds, progress.timings)
        sample = _sample(rows) + unseen
        write_text_atomically(
            out / REPORT, render_report(ReportData(summary, summaries, sample, _loads(rows)))
        )
    summary = _summary(summaries, inputs, seed, python_seconds, progress.timings)
    write_text_atomically(out / SUMMARY, summary_text(summary))
    return DriftResult(out, summary, summaries, dict(progress.timings))


def _summary(
    clusters: Sequence[ClusterSummary],
    inputs: DriftInputs,
    seed: int,
    python_seconds: float,
    timings: Mapping[str, float],
) -> dict[str, Any]:
    return summary_document(
        clusters,
        generated_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        seed=seed,
        inputs={**inputs.described, "python_plan_seconds": python_seconds},
        manifest_errors=inputs.manifest_errors,
        warnings=inputs.warnings,
        timings=timings,
    )
