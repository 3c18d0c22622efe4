"""What the drift job reads: declared topics, and snapshots from files or straight from the clusters' ZooKeepers.

- Declared topics come from manifests (files or directories of KafkaTopic/KafkaCluster, Strimzi KafkaTopic, or
  a ``kubectl get kafkatopics -A -o json`` export), read by the same loader as ``kto plan`` on the driver, or
  from Parquet tables of ``desired_rows`` (a generated or exported fleet too large for YAML), read by Spark.
- Snapshots are ``kto snapshot``'s JSON lines: every file under a directory (Spark skips names starting with
  ``.`` or ``_``), read as text and keyed by each line's ``cluster`` field, with the file it came from. The
  lines are parsed and checked in the job's Python stage (``cluster_drift``): a line that is not a snapshot row
  stops the run with its file named, as ``rows_to_clusters`` would refuse it.
- Live: Spark tasks read the clusters of KafkaCluster documents, one task per cluster, each through its own
  connection (a read-only ZooKeeper session, or an Admin client on its brokers: ``access``), and write the same rows as ``kto snapshot`` under ``out/snapshots/``; the run
  then reads those files like any others, so a live run can be repeated offline on exactly what it saw.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - the conventional alias

from topic_operator.access.address import ClusterAddress
from topic_operator.drift.cluster_drift import SnapshotError
from topic_operator.drift.declared_table import read_declared_table
from topic_operator.drift.desired_rows import spec_to_row
from topic_operator.drift.live import collect_cluster
from topic_operator.drift.schema import DESIRED_SCHEMA, LIVE_SCHEMA
from topic_operator.drift.snapshot_files import LEADING_CLUSTER
from topic_operator.model import ClusterSpec, TopicSpec

__all__ = [
    "DesiredInput",
    "SnapshotError",
    "collect_live",
    "desired_columns",
    "desired_frame",
    "load_desired",
    "read_snapshots",
]

DESIRED_COLUMNS: Final = tuple(f.name for f in DESIRED_SCHEMA.fields)


@dataclass(frozen=True, slots=True)
class DesiredInput:
    frame: DataFrame
    """Declared topics, ``DESIRED_SCHEMA``'s columns."""
    clusters: dict[str, ClusterSpec]
    """KafkaCluster documents found among the manifests: each cluster's policy (prefixes, Kafka version)."""
    errors: list[str] = field(default_factory=list)
    """Manifest errors; the topics they concern are left out, as ``kto plan`` leaves them out."""
    warnings: list[str] = field(default_factory=list)


def desired_columns(frame: DataFrame) -> DataFrame:
    """The select contract of declared topics: exactly ``DESIRED_SCHEMA``'s columns, in order."""
    return frame.select(*DESIRED_COLUMNS)


def _is_parquet(path: str) -> bool:
    return path.rstrip("/").endswith(".parquet")


def load_desired(spark: SparkSession, paths: Sequence[str]) -> DesiredInput:
    """Manifests through ``load_manifests`` on the driver, ``*.parquet`` paths through Spark."""
    from topic_operator.manifests.loader import load_manifests

    manifest_paths = [p for p in paths if not _is_parquet(p)]
    frames: list[DataFrame] = []
    clusters: dict[str, ClusterSpec] = {}
    errors: list[str] = []
    warnings: list[str] = []
    if manifest_paths:
        manifests = load_manifests(manifest_paths)
        clusters = {c.name: c for c in manifests.clusters}
        errors = [str(e) for e in manifests.errors]
        warnings = [str(w) for w in manifests.warnings]
        frames.append(desired_frame(spark, manifests.topics))
    for path in (p for p in paths if _is_parquet(p)):
        if (
            "://" not in path
        ):  # a local (or mounted) table is checked on the driver; a remote one by the tasks
            read_declared_table(path, columns=[])
        frames.append(desired_columns(spark.read.schema(DESIRED_SCHEMA).parquet(path)))
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return DesiredInput(frame, clusters, errors, warnings)


def desired_frame(spark: SparkSession, specs: Iterable[TopicSpec]) -> DataFrame:
    """Declared topics held by the driver, into Spark as ``desired_rows`` JSON through Arrow (one string column)
    and parsed natively: far faster than ``createDataFrame`` on a million nested Python rows."""
    texts = [json.dumps(spec_to_row(spec)) for spec in specs]
    local = spark.createDataFrame(pd.DataFrame({"json": pd.Series(texts, dtype=object)}), "json string")
    return desired_columns(local.select(F.from_json("json", DESIRED_SCHEMA).alias("row")).select("row.*"))


# -- snapshots ----------------------------------------------------------------------------------------------------


def read_snapshots(spark: SparkSession, directory: str | Path) -> DataFrame:
    """Every line of every file under ``directory`` as ``SNAPSHOT_LINES_SCHEMA``: the line's ``cluster`` field,
    its text and its file.

    Text, not Spark's JSON source: the lines are parsed once, by orjson in the Python stage that needs the rows
    anyway, instead of into Spark's columns first (most of a small run's time was the JSON source's and its
    generated code's warm-up). The ``cluster`` key is only what groups the lines: a line that starts with it
    gives it by an anchored regular expression; any other line (a header, whose ``brokers`` sort first, or
    another writer's key order or spacing) through ``get_json_object``, which tokenizes the whole line (at 1M
    topics, 8 s of the JVM's time for the topic rows alone). The Python stage reads every line again and
    refuses one whose ``cluster`` is not its group's, so a key read wrongly here cannot go unnoticed."""
    lines = spark.read.option("recursiveFileLookup", "true").text(str(directory))
    leading = F.col("value").rlike(LEADING_CLUSTER)
    return lines.select(
        F.when(leading, F.regexp_extract("value", LEADING_CLUSTER, 1))
        .otherwise(F.get_json_object("value", "$.cluster"))
        .alias("cluster"),
        "value",
        F.col("_metadata.file_path").alias("file"),
    )


# -- live collection ------------------------------------------------------------------------------------------------


def collect_live(
    spark: SparkSession,
    clusters: Sequence[tuple[str, ClusterAddress]],
    directory: str | Path,
    *,
    timeout: float = 15.0,
) -> dict[str, str]:
    """Read ``clusters`` (name, address) in parallel, one Spark task each, and write their rows under
    ``directory`` (``cluster=<name>/part-*``). Returns the clusters that could not be read, with the reason."""
    targets = list(clusters)

    def collect(
        partition: Iterable[tuple[str, ClusterAddress]],
    ) -> Iterator[tuple[str, str | None, str | None]]:
        for name, address in partition:
            yield from collect_cluster(name, address, timeout)

    rdd = spark.sparkContext.parallelize(targets, max(1, len(targets))).mapPartitions(collect)
    rows = spark.createDataFrame(rdd, LIVE_SCHEMA).persist()
    try:
        rows.where(F.col("value").isNotNull()).select("cluster", "value").write.mode("overwrite").partitionBy(
            "cluster"
        ).text(str(directory))
        failed = rows.where(F.col("error").isNotNull()).select("cluster", "error").collect()
    finally:
        rows.unpersist()
    return {row["cluster"]: row["error"] for row in failed}
