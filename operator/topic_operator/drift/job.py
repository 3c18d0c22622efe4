"""The drift job: declared topics against snapshots of many clusters, in one Spark job with one Python stage.

1. **Per cluster, in Python** (``cogroup(...).applyInArrow`` by cluster): the snapshot lines, read as text and
   keyed by their ``cluster`` field, meet the cluster's declared topics (typed Arrow columns), and one task runs
   ``cluster_drift.cluster_drift`` on them (``arrow_stage``): orjson reads and checks every line, the engine's
   ``plan`` plans the cluster exactly as ``kto plan`` does, and the rules classify it and count its broker
   load. Out comes one Arrow row per cluster (``CLUSTER_DRIFT_SCHEMA``): its findings, plan document, broker
   load, summary counts, and any problem with its lines. The driver collects the rows as Arrow (``toArrow``).
2. **Write, on the driver** (``results.write_results``, shared with the process engine): the problems of every
   cluster are checked first (any stops the run, with the files named, before anything is written); then
   ``plans/<cluster>.json``, ``drift.parquet`` (the findings, already Arrow, sorted and written by pyarrow as
   one part file), ``summary.json`` and ``report.html``.

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

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from topic_operator.drift.arrow_schemas import CLUSTER_DRIFT_ARROW
from topic_operator.drift.arrow_stage import run_cluster
from topic_operator.drift.history import History
from topic_operator.drift.inputs import DESIRED_COLUMNS
from topic_operator.drift.progress import Progress
from topic_operator.drift.results import DriftResult, FleetFacts, write_results
from topic_operator.drift.schema import CLUSTER_DRIFT_SCHEMA
from topic_operator.model import ClusterSpec

__all__ = ["CLUSTER_PHASE", "DriftInputs", "DriftResult", "drift_by_cluster", "run_drift"]


@dataclass(frozen=True, slots=True)
class DriftInputs:
    desired: DataFrame
    """Declared topics (``DESIRED_SCHEMA``'s columns)."""
    snapshots: DataFrame
    """``inputs.read_snapshots``'s frame: one row per snapshot line, keyed by its cluster."""
    clusters: Mapping[str, ClusterSpec] = field(default_factory=dict)
    """Each cluster's policy (``FleetFacts.clusters``)."""
    expected_clusters: Sequence[str] = ()
    """Clusters that must be observed even with nothing declared (the live inventory)."""
    unreachable: Mapping[str, str] = field(default_factory=dict)
    """Clusters a live read failed on, with the reason."""
    manifest_errors: Sequence[str] = ()
    warnings: Sequence[str] = ()
    described: Mapping[str, Any] = field(default_factory=dict)
    """What went in (paths, mode), as ``summary.json`` records it."""
    history: History | None = None
    """Earlier runs (``--history``), for the report's trend."""

    @property
    def facts(self) -> FleetFacts:
        return FleetFacts(
            self.clusters,
            self.expected_clusters,
            self.unreachable,
            self.manifest_errors,
            self.warnings,
            self.described,
            self.history,
        )


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
        schema=CLUSTER_DRIFT_ARROW,
    )
    return grouped.applyInArrow(function, schema=CLUSTER_DRIFT_SCHEMA)


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
    with progress.phase(CLUSTER_PHASE):
        table = results.toArrow()
    return write_results(table, inputs.facts, out, seed=seed, progress=progress)
