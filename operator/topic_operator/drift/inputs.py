"""What the drift job reads: declared topics, and snapshots from files or straight from the clusters' ZooKeepers.

- Declared topics come from manifests (files or directories of KafkaTopic/KafkaCluster, Strimzi KafkaTopic, or
  a ``kubectl get kafkatopics -A -o json`` export), read by the same loader as ``kto plan`` on the driver, or
  from Parquet tables of ``desired_rows`` (a generated or exported fleet too large for YAML), read by Spark.
- Snapshots are ``kto snapshot``'s JSON lines: every file under a directory (Spark skips names starting with
  ``.`` or ``_``), read as text and keyed by each line's ``cluster`` field, with the file it came from. The
  lines are parsed and checked in the job's Python stage (``cluster_drift``): a line that is not a snapshot row
  stops the run with its file named, as ``rows_to_clusters`` would refuse it.
- Live: Spark tasks read the clusters of KafkaCluster documents, one task per cluster, each with its own
  ZooKeeper session (read-only), and write the same rows as ``kto snapshot`` under ``out/snapshots/``; the run
  then reads those files like any others, so a live run can be repeated offline on exactly what it saw.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - the conventional alias

from topic_operator.drift.desired_rows import spec_to_row
from topic_operator.drift.schema import DESIRED_SCHEMA, LIVE_SCHEMA
from topic_operator.model import ClusterSpec, TopicSpec

__all__ = [
    "DesiredInput",
    "SnapshotError",
    "check_snapshot_files",
    "collect_live",
    "desired_columns",
    "desired_frame",
    "load_desired",
    "load_inventory",
    "read_snapshots",
]

DESIRED_COLUMNS: Final = tuple(f.name for f in DESIRED_SCHEMA.fields)


class SnapshotError(ValueError):
    """Snapshot input that cannot be planned from: unparseable lines, another schema, two snapshots of one
    cluster. The message names the files."""


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
    from topic_operator.manifests import load_manifests

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


def load_inventory(paths: Sequence[str]) -> tuple[list[ClusterSpec], list[str]]:
    """KafkaCluster documents (``--clusters``): which clusters to read live and how to reach them."""
    from topic_operator.manifests import load_manifests

    manifests = load_manifests(paths)
    return list(manifests.clusters), [str(e) for e in manifests.errors]


# -- snapshots ----------------------------------------------------------------------------------------------------


_LEADING_CLUSTER: Final = r'^\{"cluster":"([^"\\]*)"'
"""A line whose first key is ``cluster`` with a plain string value (no escape), as ``kto snapshot`` writes every
topic row (its keys sorted, and no topic field sorts before ``cluster``): the value is the group key as it
stands, read without parsing the rest of the line."""


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
    leading = F.col("value").rlike(_LEADING_CLUSTER)
    return lines.select(
        F.when(leading, F.regexp_extract("value", _LEADING_CLUSTER, 1))
        .otherwise(F.get_json_object("value", "$.cluster"))
        .alias("cluster"),
        "value",
        F.col("_metadata.file_path").alias("file"),
    )


def check_snapshot_files(directory: str | Path) -> None:
    """Fail early, naming the directory, when there is nothing to read."""
    root = Path(directory)
    if not root.is_dir():
        raise SnapshotError(f"snapshot directory {root} does not exist")
    visible = [
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
    ]
    if not visible:
        raise SnapshotError(f"snapshot directory {root} has no files (write them with kto snapshot)")


# -- live collection ------------------------------------------------------------------------------------------------


def _collect_cluster(name: str, connect: str, timeout: float) -> Iterator[tuple[str, str | None, str | None]]:
    """Runs in a Spark task: read one cluster as ``kto snapshot`` does and yield its rows as JSON text, or one
    row carrying the reason the cluster could not be read."""
    from topic_operator.snapshot_rows import rows_from_cluster
    from topic_operator.zookeeper.connection import ZooKeeperSettings, connected
    from topic_operator.zookeeper.snapshot import read_cluster

    try:
        settings = ZooKeeperSettings(
            connect=connect, read_only=True, connection_timeout=timeout, session_timeout=max(timeout, 4.0)
        )
        with connected(settings) as client:
            state = read_cluster(client, partition_states=True)
    except Exception as error:  # every failure becomes a finding; one cluster must not stop the fleet
        yield name, None, f"{type(error).__name__}: {error}"
        return
    if state.cluster_id is None and not state.brokers:
        yield (
            name,
            None,
            f"{connect} has no /cluster/id and no brokers: not a Kafka cluster (check the chroot)",
        )
        return
    taken_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    for row in rows_from_cluster(name, state, taken_at):
        yield name, json.dumps(row, separators=(",", ":"), sort_keys=True), None


def collect_live(
    spark: SparkSession, clusters: Sequence[ClusterSpec], directory: str | Path, *, timeout: float = 15.0
) -> dict[str, str]:
    """Read ``clusters`` in parallel, one Spark task each, and write their rows under ``directory``
    (``cluster=<name>/part-*``). Returns the clusters that could not be read, with the reason."""
    targets = [(c.name, c.zookeeper_connect) for c in clusters]

    def collect(partition: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str | None, str | None]]:
        for name, connect in partition:
            yield from _collect_cluster(name, connect, timeout)

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
