"""The drift job: declared topics against snapshots of many clusters, in five stages.

1. **Headers** (native, one aggregation): per cluster its shared snapshot fields (brokers, deletion markers...),
   how many snapshots it has (one is allowed) and any line that is not a snapshot row.
2. **Actual topics** (native, per row, no shuffle): the select contract of ``actual_topics`` -- counts, config,
   and the partition health computed with higher-order functions over each row's partition and state maps
   (under-replicated, offline, rack-narrow partitions), plus the fields the planner reads as JSON text. Cached:
   the three later stages read it.
3. **Plan** (Python, ``cogroup(...).applyInPandas`` by cluster): the engine's ``plan`` for each cluster, exactly
   as ``kto plan`` runs it (``planning.plan_cluster``). It returns each cluster's plan document and the facts of
   the topics the plan acts on; unchanged topics return nothing. Cached: documents and facts are read apart.
4. **Classify** (native): declared and actual topics joined on ``['cluster', 'topic']`` with ``how='full_outer'``,
   the plan's facts joined on, and each joined row turned into an array of findings by named predicates, then
   exploded. Broker load is an explode of replica and leader ids and one aggregation; skew compares each
   broker with its cluster's totals.
5. **Write**: ``drift.parquet`` (sorted), ``plans/<cluster>.json``, ``summary.json``, ``report.html``.

Partitioning: the snapshot files are split by Spark's file source; the plan stage hash-partitions by cluster (a
cluster is one pandas group, so a cluster's topics must fit one Python worker); the join shuffles by
(cluster, topic). Every rule here has a plain-Python twin in ``rules``, and the tests hold the two equal.
"""

from __future__ import annotations

import datetime
import gc
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Observation, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - the conventional alias
from pyspark.sql.types import ArrayType, IntegerType

from topic_operator.drift.desired_rows import spec_from_row
from topic_operator.drift.inputs import DESIRED_COLUMNS, SnapshotError, bad_rows_message, is_header_row
from topic_operator.drift.kinds import (
    DECLARED_AT,
    FINDING_COLUMNS,
    KIND_INFO,
    LISTED_PARTITIONS,
    MARKED,
    MORE,
    OFFLINE_MESSAGE,
    PRESENT,
    RACK_MESSAGE,
    SHAPE,
    SKEW_MESSAGE,
    SKEW_MIN_DIFFERENCE,
    SKEW_RANGE,
    SKEW_TOLERANCE,
    UNDER_REPLICATED_MESSAGE,
    Action,
    Finding,
    Kind,
    Severity,
)
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
from topic_operator.drift.planning import PLANNED_TOPIC_FIELDS, plan_cluster
from topic_operator.drift.progress import Progress
from topic_operator.drift.report import ReportData, render_report
from topic_operator.drift.rules import DECLARATION_KINDS, PLANNED_ACTION, BrokerLoad, unobserved_finding
from topic_operator.drift.schema import FACTS_SCHEMA, FINDINGS_SCHEMA
from topic_operator.model import ClusterSpec
from topic_operator.plan import TopicStatus
from topic_operator.snapshot_rows import HEADER_FIELDS, cluster_from_rows

__all__ = [
    "DriftInputs",
    "DriftResult",
    "actual_topics",
    "broker_loads",
    "cluster_brokers",
    "count_topics",
    "header_metrics",
    "headers_from",
    "plan_facts",
    "run_drift",
    "skew_findings",
    "snapshot_topics",
    "topic_findings",
]


@dataclass(frozen=True, slots=True)
class DriftInputs:
    desired: DataFrame
    """Declared topics (``DESIRED_SCHEMA``'s columns)."""
    snapshots: DataFrame
    """``inputs.read_snapshots``'s frame."""
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
# Small column helpers.


def _text(value: Column | str | None) -> Column:
    return value if isinstance(value, Column) else F.lit(value).cast("string")


def _finding(
    kind: Kind,
    field: Column | str,
    desired: Column | str | None,
    actual: Column | str | None,
    action: Column | str,
    severity: Column | str,
    message: Column | str | None,
) -> Column:
    return F.struct(
        F.lit(kind.value).alias("kind"),
        _text(field).alias("field"),
        _text(desired).alias("desired"),
        _text(actual).alias("actual"),
        _text(action).alias("action"),
        _text(severity).alias("severity"),
        _text(message).alias("message"),
    )


def _sorted_ids(partitions: Column) -> Column:
    """The partition ids of a partition map (string keys, as in the snapshot) as sorted integers."""
    return F.array_sort(F.transform(F.map_keys(partitions), lambda key: key.cast("int")))


def _partition_list(ids: Column) -> Column:
    """``kinds.partition_list`` natively: at most ``LISTED_PARTITIONS`` sorted ids, then "and N more"."""
    listed = F.array_join(F.transform(F.slice(ids, 1, LISTED_PARTITIONS), lambda p: p.cast("string")), ", ")
    extra = F.size(ids) - LISTED_PARTITIONS
    return F.concat(listed, F.when(extra > 0, F.format_string(MORE, extra)).otherwise(F.lit("")))


def _rejection_text(rejections: Column) -> Column:
    """``kinds.rejection_text`` natively: ``ShortKafkaClass: message`` joined by ``; ``."""
    texts = F.transform(
        rejections,
        lambda r: F.concat(F.substring_index(r["kafka_class"], ".", -1), F.lit(": "), r["message"]),
    )
    return F.array_join(texts, "; ")


# ---------------------------------------------------------------------------------------------------------------
# Stage 1: headers.


def header_metrics() -> list[Column]:
    """What the one pass over the snapshot lines observes besides caching them: every distinct header (the
    fields all rows of a cluster share, from the rows that carry them; maps as entry lists, which Spark can
    compare), and the lines that are not snapshot rows. Distinct headers are few: one per cluster when each
    cluster has one snapshot. Schema 2 writes one header row per cluster, so the other rows add nothing here;
    schema 1 rows all carry the header, and are all compared."""
    valid = F.col("_valid")
    header = F.struct(
        "cluster",
        *(F.col(name) for name in HEADER_FIELDS if name not in ("orphan_configs", "unreadable_topics")),
        F.map_entries("orphan_configs").alias("orphan_configs"),
        F.map_entries("unreadable_topics").alias("unreadable_topics"),
    )
    bad = F.struct("_file", "schema", "cluster", "topic", "_corrupt")
    return [
        F.collect_set(F.when(valid & is_header_row(), header)).alias("headers"),
        F.count(F.when(~valid, F.lit(1))).alias("bad"),
        F.first(F.when(~valid, bad), ignorenulls=True).alias("bad_example"),
        F.collect_set(F.when(~valid, F.col("_file"))).alias("bad_files"),
    ]


def headers_from(metrics: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per cluster its shared fields (``snapshot_rows.HEADER_FIELDS``) from ``header_metrics``' values. Raises
    ``SnapshotError`` on lines that are not snapshot rows, or headers of one cluster that disagree (two
    snapshots of it, or hand-edited files)."""
    if metrics["bad"]:
        example = metrics["bad_example"].asDict()
        files = sorted(metrics["bad_files"])
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more files" if len(files) > 5 else "")
        raise SnapshotError(bad_rows_message([example], int(metrics["bad"])) + f" (in {shown})")
    headers: dict[str, dict[str, Any]] = {}
    doubled: set[str] = set()
    for row in metrics["headers"]:
        fields = row.asDict(recursive=True)
        name = fields["cluster"]
        if name in headers:
            doubled.add(name)
        headers[name] = {
            **fields,
            "brokers": fields.get("brokers") or [],
            "marked_for_deletion": fields.get("marked_for_deletion") or [],
            "orphan_configs": {e["key"]: e["value"] for e in fields.get("orphan_configs") or []},
            "unreadable_topics": {e["key"]: e["value"] for e in fields.get("unreadable_topics") or []},
        }
    if doubled:
        raise SnapshotError(
            f"the rows of clusters {', '.join(sorted(doubled))} disagree on the cluster's shared fields "
            "(brokers, taken_at, deletion markers...): keep one snapshot per cluster, or the plan would mix "
            "two moments"
        )
    return headers


def snapshot_topics(snapshots: DataFrame) -> DataFrame:
    """The select contract of what is cached from the snapshot lines: ``cluster, taken_at, topic, partitions,
    partition_states, config, marked, planned`` for every valid row (``topic`` null for a header row).
    ``planned`` is the JSON the plan stage rebuilds the ``TopicState`` from."""
    planned = F.when(F.col("topic").isNotNull(), F.to_json(F.struct(*PLANNED_TOPIC_FIELDS)))
    return snapshots.where(F.col("_valid")).select(
        "cluster",
        "taken_at",
        "topic",
        "partitions",
        "partition_states",
        "config",
        F.coalesce(F.col("topic_marked_for_deletion"), F.lit(False)).alias("marked"),
        planned.alias("planned"),
    )


def count_topics(
    headers: Mapping[str, dict[str, Any]], counts: Sequence[tuple[str, str | None, int]]
) -> None:
    """Record each cluster's topic count in its header, from ``(cluster, taken_at, topic rows)``. Raises
    ``SnapshotError``, as ``rows_to_clusters`` refuses them, on topic rows without their cluster's header row
    or taken at another time than it (two snapshots of one cluster mixed)."""
    headless = sorted({cluster for cluster, _, _ in counts if cluster not in headers})
    if headless:
        raise SnapshotError(
            f"the snapshot rows of clusters {', '.join(headless)} have no header row (the row whose topic is "
            "null, which kto snapshot writes first): their snapshots are incomplete"
        )
    stray = sorted({c for c, taken_at, _ in counts if taken_at != headers[c].get("taken_at")})
    if stray:
        raise SnapshotError(
            f"clusters {', '.join(stray)} have topic rows taken at another time than their header: keep one "
            "snapshot per cluster, or the plan would mix two moments"
        )
    for cluster, _, count in counts:
        headers[cluster]["topics"] = count


# ---------------------------------------------------------------------------------------------------------------
# Stage 2: actual topics.


DENSE_RACK_SPAN = 1024
"""Clusters whose rack-bearing broker ids span at most this many ids get an array lookup from broker to rack
(O(1) per replica); wider id ranges fall back to a map lookup. The array is copied onto every topic row."""


def cluster_brokers(spark: SparkSession, headers: Mapping[str, Mapping[str, Any]]) -> DataFrame:
    """Per cluster, from the headers: a cluster number (``_cluster_no``, its rank by name), registered broker
    ids, each rack as a number, and the number of racks. Racks are looked up per replica, so they are numbers
    (``_rack_no`` maps broker ``_rack_base + i`` to element ``i``, -1 without a rack; when the ids span more
    than ``DENSE_RACK_SPAN`` it is null, and ``_rack_of`` maps broker to rack number instead).

    Joined to every topic row, so that the per-row lambdas read plain columns: an expression computed in a
    projection would be inlined into the lambda by the optimizer and rebuilt per partition."""
    rows = []
    for number, name in enumerate(sorted(headers)):
        brokers = headers[name]["brokers"]
        racks = {int(b["id"]): b["rack"] for b in brokers if b.get("rack") is not None}
        rack_numbers = {rack: n for n, rack in enumerate(sorted(set(racks.values())))}
        rack_of = {broker: rack_numbers[rack] for broker, rack in racks.items()}
        base = min(rack_of, default=0)
        span = max(rack_of, default=-1) - base + 1
        dense = [rack_of.get(base + i, -1) for i in range(span)] if span <= DENSE_RACK_SPAN else None
        ids = [int(b["id"]) for b in brokers]
        rows.append((name, number, ids, rack_of if dense is None else None, base, dense, len(rack_numbers)))
    schema = (
        "cluster string, _cluster_no int, _broker_ids array<int>, _rack_of map<int,int>, _rack_base int, "
        "_rack_no array<int>, _racks int"
    )
    return spark.createDataFrame(rows, schema)


def _rack_number(replica: Column) -> Column:
    """The rack number of a replica's broker, -1 when it has no rack or is not registered. One array lookup
    (an id outside the array reads past its end, which is null), or the map's when there is no array."""
    index = replica - F.col("_rack_base") + 1
    past_the_end = F.lit(2**31 - 1)  # index 0 or below would be an error or count from the end
    in_array = F.try_element_at(F.col("_rack_no"), F.when(index >= 1, index).otherwise(past_the_end))
    return F.coalesce(in_array, F.try_element_at(F.col("_rack_of"), replica), F.lit(-1))


def actual_topics(topics: DataFrame, brokers: DataFrame) -> DataFrame:
    """The select contract of the cluster side, one row per snapshot row (``topic`` null for a header row):
    ``cluster, cluster_no, topic, partition_count, replication_factor, config, marked, lagging, offline,
    narrow, rack_count, replica_brokers, leader_brokers``, from ``snapshot_topics``' rows and
    ``cluster_brokers``' frame.

    Health is computed per row with higher-order functions, as ``describe`` defines it (the partition lists
    are sorted ids), behind guards that settle healthy topics without a lambda.
    """
    partitions, states = F.col("partitions"), F.col("partition_states")
    broker_ids, racks = F.col("_broker_ids"), F.col("_racks")
    no_ids = F.array().cast(ArrayType(IntegerType()))

    def state(key: Column) -> Column:
        return F.try_element_at(states, key)

    def rack_count(replicas: Column) -> Column:
        return F.size(F.array_distinct(F.filter(F.transform(replicas, _rack_number), lambda rack: rack >= 0)))

    lagging = F.map_filter(
        partitions, lambda k, v: F.coalesce(F.size(state(k)["isr"]) < F.size(v), F.lit(False))
    )
    offline = F.map_filter(
        partitions,
        lambda k, _: (
            state(k).isNull() | (state(k)["leader"] < 0) | ~F.array_contains(broker_ids, state(k)["leader"])
        ),
    )
    narrow = F.map_filter(partitions, lambda _, v: rack_count(v) < F.least(F.size(v), racks))
    preferred = F.transform(
        F.filter(F.map_values(partitions), lambda r: F.size(r) > 0), lambda r: F.get(r, 0)
    )
    leaders = F.map_values(states)["leader"]
    every_leader_live = (F.array_min(leaders) >= 0) & (F.size(F.array_except(leaders, broker_ids)) == 0)
    current = F.when(every_leader_live, leaders).otherwise(F.filter(leaders, lambda leader: leader >= 0))
    has_states = states.isNotNull()
    # Guards without lambdas, true only for topics that certainly have no such partition: most topics are
    # healthy, and a lambda over every partition of every topic is most of this stage's cost.
    every_state = F.coalesce(F.map_keys(states) == F.map_keys(partitions), F.lit(False))
    fully_in_sync = every_state & F.coalesce(
        F.map_values(states)["isr"] == F.map_values(partitions), F.lit(False)
    )
    all_led = every_state & F.coalesce(every_leader_live, F.lit(False))
    rows = topics.join(F.broadcast(brokers), on="cluster", how="left")
    return rows.select(
        "cluster",
        F.col("_cluster_no").alias("cluster_no"),
        "topic",
        F.size(partitions).alias("partition_count"),
        F.when(F.try_element_at(partitions, F.lit("0")).isNull(), F.lit(0))
        .otherwise(F.size(F.try_element_at(partitions, F.lit("0"))))
        .alias("replication_factor"),
        "config",
        "marked",
        F.when(~has_states | fully_in_sync, no_ids).otherwise(_sorted_ids(lagging)).alias("lagging"),
        F.when(~has_states | all_led, no_ids).otherwise(_sorted_ids(offline)).alias("offline"),
        F.when(F.coalesce(racks, F.lit(0)) == 0, no_ids)
        .otherwise(F.coalesce(_sorted_ids(narrow), no_ids))
        .alias("narrow"),
        F.coalesce(racks, F.lit(0)).alias("rack_count"),
        F.coalesce(F.flatten(F.map_values(partitions)), no_ids).alias("replica_brokers"),
        F.coalesce(F.when(has_states, current).otherwise(preferred), no_ids).alias("leader_brokers"),
    )


# ---------------------------------------------------------------------------------------------------------------
# Stage 3: the plan, in Python.


def _plan_group_function(
    headers: Mapping[str, Mapping[str, Any]], clusters: Mapping[str, ClusterSpec], seed: int
) -> Callable[[tuple[Any, ...], pd.DataFrame, pd.DataFrame], pd.DataFrame]:
    """The function each plan task runs on one cluster's rows; ``headers`` and ``clusters`` travel with it."""
    columns = [f.name for f in FACTS_SCHEMA.fields]

    def plan_group(key: tuple[Any, ...], declared: pd.DataFrame, actual: pd.DataFrame) -> pd.DataFrame:
        # Planning allocates millions of small, acyclic objects, freed by reference counting; the cyclic
        # collector would scan the worker's whole heap (pandas, pyarrow, pyspark) again and again while they
        # are alive: about a third of this function's time. Off for the call, back on after.
        gc.disable()
        try:
            return _plan_group(key, declared, actual)
        finally:
            gc.enable()

    def _plan_group(key: tuple[Any, ...], declared: pd.DataFrame, actual: pd.DataFrame) -> pd.DataFrame:
        started = time.perf_counter()
        name = str(key[0])
        header = headers.get(name)
        if header is None:  # declared for a cluster nobody observed: reported natively, never planned
            return pd.DataFrame({c: [] for c in columns})
        specs = [spec_from_row(orjson.loads(text)) for text in declared["spec"]]
        topics = [orjson.loads(text) for text in actual["planned"] if isinstance(text, str)]
        state = cluster_from_rows(header, topics)
        result = plan_cluster(specs, state, clusters.get(name) or ClusterSpec(name, ""), seed=seed)
        rows: list[dict[str, Any]] = [
            {
                "cluster": name,
                "topic": facts.topic,
                "status": facts.status,
                "actions": list(facts.actions),
                "rejections": [
                    {"field": r.field, "kafka_class": r.kafka_class, "message": r.message}
                    for r in facts.rejections
                ],
                "config_diffs": [
                    {"key": d.key, "desired": d.desired, "actual": d.actual} for d in facts.config_diffs
                ],
                "document": None,
                "plan_summary": None,
                "python_micros": None,
            }
            for facts in result.facts
        ]
        summary = {s.value: sum(1 for t in result.plan.topics if t.status is s) for s in TopicStatus}
        rows.append(
            {
                "cluster": name,
                "topic": None,
                "status": None,
                "actions": None,
                "rejections": None,
                "config_diffs": None,
                "document": result.document,
                "plan_summary": json.dumps(summary),
                "python_micros": int((time.perf_counter() - started) * 1e6),
            }
        )
        return pd.DataFrame(rows, columns=columns)

    return plan_group


def plan_facts(
    desired: DataFrame,
    topics: DataFrame,
    headers: Mapping[str, Mapping[str, Any]],
    clusters: Mapping[str, ClusterSpec],
    seed: int,
) -> DataFrame:
    """``FACTS_SCHEMA`` rows: the plan stage over every observed cluster (clusters with nothing declared too,
    whose plans list their unmanaged topics)."""
    tasks = _plan_tasks(desired.sparkSession, len(headers))
    declared = desired.select("cluster", F.to_json(F.struct(*DESIRED_COLUMNS)).alias("spec"))
    observed = topics.select("cluster", "planned")
    grouped = (
        declared.repartition(tasks, "cluster")
        .groupBy("cluster")
        .cogroup(observed.repartition(tasks, "cluster").groupBy("cluster"))
    )
    return grouped.applyInPandas(_plan_group_function(headers, clusters, seed), schema=FACTS_SCHEMA)


def _plan_tasks(spark: SparkSession, clusters: int) -> int:
    """Python tasks for the plan stage: a few per core so that large and small clusters even out, but never
    more than there are clusters (an empty task still starts a Python worker)."""
    return max(1, min(clusters, 4 * spark.sparkContext.defaultParallelism))


# ---------------------------------------------------------------------------------------------------------------
# Stage 4: classification. Named predicates over the joined row.


def _flag(name: str) -> Column:
    return F.coalesce(F.col(name), F.lit(False))


def is_declared() -> Column:
    return _flag("declared")


def exists() -> Column:
    return _flag("exists")


def in_both() -> Column:
    return is_declared() & exists()


def is_missing() -> Column:
    return is_declared() & ~exists()


def is_unmanaged() -> Column:
    return exists() & ~is_declared()


def partitions_behind() -> Column:
    return in_both() & (F.col("d_partitions") > F.col("partition_count"))


def partitions_ahead() -> Column:
    return in_both() & (F.col("d_partitions") < F.col("partition_count"))


def replication_factor_differs() -> Column:
    return in_both() & (F.col("d_replicas") != F.col("replication_factor"))


def marked_for_deletion() -> Column:
    return exists() & F.col("marked")


def plan_rejects() -> Column:
    return is_declared() & F.coalesce(F.col("status") == "rejected", F.lit(False))


def under_replicated() -> Column:
    return exists() & (F.size("lagging") > 0)


def offline_partitions() -> Column:
    return exists() & (F.size("offline") > 0)


def rack_violated() -> Column:
    return exists() & (F.size("narrow") > 0)


def _declared_finding(
    kind: Kind,
    field: Column | str,
    desired: Column | str | None,
    actual: Column | str | None,
    message: Column | None = None,
) -> Column:
    """A declaration kind: the plan's verdict is its action, and its rejections the message when it rejects."""
    rejected = plan_rejects()
    action = F.when(rejected, F.lit(Action.REJECTED.value)).otherwise(F.lit(PLANNED_ACTION[kind].value))
    text = F.when(rejected, _rejection_text(F.col("rejections"))).otherwise(_text(message))
    return _finding(kind, field, desired, actual, action, KIND_INFO[kind].severity.value, text)


def _health_finding(when: Column, kind: Kind, field: str, partitions: str, message: Column) -> Column:
    """A partition-health kind: how many partitions of the ``partitions`` id list are affected (0 is the
    desired count), left to an operator."""
    affected = F.size(partitions).cast("string")
    severity = KIND_INFO[kind].severity.value
    return F.when(when, _finding(kind, field, "0", affected, Action.MANUAL.value, severity, message))


def _topic_level_findings() -> Column:
    """Every finding of one joined (cluster, topic) row, as an array (empty when in sync)."""
    count, factor = F.col("partition_count"), F.col("replication_factor")
    declared, wanted = F.col("d_partitions"), F.col("d_replicas")
    source = F.coalesce(F.col("d_source"), F.lit(""))
    declared_at = F.when(source != "", F.format_string(DECLARED_AT, source))
    marked_severity = F.when(is_declared(), Severity.WARNING.value).otherwise(Severity.INFO.value)
    marked_action = F.when(is_declared(), Action.REJECTED.value).otherwise(Action.NONE.value)
    marked_message = F.when(plan_rejects(), _rejection_text(F.col("rejections")))
    config = F.transform(
        F.coalesce(F.col("config_diffs"), F.array().cast(FACTS_SCHEMA["config_diffs"].dataType)),
        lambda d: _declared_finding(
            Kind.CONFIG_DIFFERS, F.concat(F.lit("config."), d["key"]), d["desired"], d["actual"]
        ),
    )
    found = F.array_compact(
        F.concat(
            F.array(
                F.when(is_missing(), _declared_finding(Kind.MISSING, "topic", F.format_string(SHAPE, declared, wanted), None, declared_at)),
                F.when(
                    is_unmanaged(),
                    _finding(Kind.UNMANAGED, "topic", None, F.format_string(SHAPE, count, factor), Action.NONE.value, Severity.INFO.value, None),
                ),
                F.when(partitions_behind(), _declared_finding(Kind.PARTITIONS_BEHIND, "partitions", declared.cast("string"), count.cast("string"))),
                F.when(partitions_ahead(), _declared_finding(Kind.PARTITIONS_AHEAD, "partitions", declared.cast("string"), count.cast("string"))),
                F.when(
                    replication_factor_differs(),
                    _declared_finding(Kind.REPLICATION_FACTOR_DIFFERS, "replicas", wanted.cast("string"), factor.cast("string")),
                ),
            ),
            config,
            F.array(
                F.when(
                    marked_for_deletion(),
                    _finding(
                        Kind.MARKED_FOR_DELETION,
                        "topic",
                        F.when(is_declared(), F.lit(PRESENT)),
                        MARKED,
                        marked_action,
                        marked_severity,
                        marked_message,
                    ),
                ),
                _health_finding(
                    under_replicated(), Kind.UNDER_REPLICATED, "isr", "lagging",
                    F.format_string(UNDER_REPLICATED_MESSAGE, _partition_list(F.col("lagging"))),
                ),
                _health_finding(
                    offline_partitions(), Kind.OFFLINE, "leader", "offline",
                    F.format_string(OFFLINE_MESSAGE, _partition_list(F.col("offline"))),
                ),
                _health_finding(
                    rack_violated(), Kind.RACK_VIOLATION, "racks", "narrow",
                    F.format_string(RACK_MESSAGE, _partition_list(F.col("narrow")), F.col("rack_count")),
                ),
            ),
        )
    )  # fmt: skip
    declaration_kinds = F.array(*(F.lit(k.value) for k in sorted(DECLARATION_KINDS)))
    explained = F.exists(found, lambda f: F.array_contains(declaration_kinds, f["kind"]))
    first_field = F.get(F.col("rejections"), 0)["field"]
    rejected_field = F.when(first_field.isNull() | (first_field == ""), F.lit("topic")).otherwise(first_field)
    rejected = F.when(
        plan_rejects() & ~explained,
        _finding(
            Kind.PLAN_REJECTED, rejected_field, None, None, Action.REJECTED.value,
            KIND_INFO[Kind.PLAN_REJECTED].severity.value, _rejection_text(F.col("rejections")),
        ),
    )  # fmt: skip
    return F.concat(found, F.array_compact(F.array(rejected)))


def topic_findings(desired: DataFrame, actual: DataFrame, facts: DataFrame) -> DataFrame:
    """Findings of every (cluster, topic): ``FINDING_COLUMNS``."""
    declared = desired.select(
        "cluster",
        "topic",
        F.col("partitions").alias("d_partitions"),
        F.col("replicas").alias("d_replicas"),
        F.col("source").alias("d_source"),
        F.lit(True).alias("declared"),
    )
    observed = actual.where(F.col("topic").isNotNull()).select(
        "cluster", "topic", "partition_count", "replication_factor", "marked", "lagging", "offline", "narrow",
        "rack_count", F.lit(True).alias("exists"),
    )  # fmt: skip
    planned = facts.where(F.col("topic").isNotNull()).select(
        "cluster", "topic", "status", "rejections", "config_diffs"
    )
    joined = declared.join(observed, on=["cluster", "topic"], how="full_outer")
    enriched = joined.join(planned, on=["cluster", "topic"], how="left")
    exploded = enriched.select("cluster", "topic", F.explode(_topic_level_findings()).alias("f"))
    return exploded.select(
        "cluster", "topic", *(F.col(f"f.{name}").alias(name) for name in FINDING_COLUMNS[2:])
    )


_BROKER_OFFSET = 2**31
"""Added to a broker id (a Java int) to make it non-negative in a load key."""


def broker_loads(actual: DataFrame, registered: DataFrame, brokers: DataFrame) -> DataFrame:
    """``cluster, broker, rack, registered, replicas, leaders`` for every registered broker and every id that
    replicas or leaders name (as ``rules.broker_loads``), from ``actual_topics``' rows, ``_registered_brokers``
    and ``cluster_brokers``' frame (for the cluster numbers).

    Tens of millions of replicas and leaders are counted at 1M topics, so each becomes one long key, its
    cluster's number, broker and whether it leads packed together (``cluster_no * 2^33 + (broker + 2^31) * 2
    + leads``): one explode of plain longs and a count per key, with no string or struct per value. The few
    thousand counts are then unpacked and folded per broker."""

    def keyed(ids: str, leads: int) -> Column:
        cluster = F.col("cluster_no").cast("long") * F.lit(2**33)
        return F.transform(ids, lambda b: cluster + (b.cast("long") + _BROKER_OFFSET) * 2 + leads)

    keys = actual.where(F.col("topic").isNotNull()).select(
        F.explode(F.concat(keyed("replica_brokers", 0), keyed("leader_brokers", 1))).alias("key")
    )
    counted = keys.groupBy("key").count()
    key = F.col("key")
    unpacked = counted.select(
        F.shiftright(key, 33).cast("int").alias("_cluster_no"),
        (F.shiftright(key, 1) % F.lit(2**32) - _BROKER_OFFSET).cast("int").alias("broker"),
        (key % 2 == 1).alias("leads"),
        "count",
    )
    named = unpacked.join(F.broadcast(brokers.select("cluster", "_cluster_no")), on="_cluster_no")
    folded = named.groupBy("cluster", "broker").agg(
        F.sum(F.when(~F.col("leads"), F.col("count"))).alias("replicas"),
        F.sum(F.when(F.col("leads"), F.col("count"))).alias("leaders"),
    )
    joined = registered.join(folded, on=["cluster", "broker"], how="full_outer")
    return joined.select(
        "cluster",
        "broker",
        "rack",
        F.coalesce(F.col("registered"), F.lit(False)).alias("registered"),
        F.coalesce(F.col("replicas"), F.lit(0)).cast("long").alias("replicas"),
        F.coalesce(F.col("leaders"), F.lit(0)).cast("long").alias("leaders"),
    )


def _skewed(count: str, total: str, kind: Kind, what: str) -> Column:
    """The skew finding of one broker for ``count`` against the cluster's ``total`` (``kinds.skew_bounds``)."""
    brokers = F.col("brokers")
    mean = F.col(total) / brokers
    tolerance = F.greatest(F.lit(SKEW_MIN_DIFFERENCE), F.lit(SKEW_TOLERANCE) * mean)
    low, high = F.ceil(mean - tolerance), F.floor(mean + tolerance)
    outside = (brokers >= 2) & (F.col(total) > 0) & ((F.col(count) < low) | (F.col(count) > high))
    return F.when(
        outside,
        _finding(
            kind,
            F.format_string(f"broker.%d.{what}", F.col("broker")),
            F.format_string(SKEW_RANGE, low, high),
            F.col(count).cast("string"),
            Action.MANUAL.value,
            KIND_INFO[kind].severity.value,
            F.format_string(SKEW_MESSAGE, F.col(total), F.lit(what), brokers),
        ),
    )


def skew_findings(loads: DataFrame) -> DataFrame:
    """Replica and leader skew of registered brokers against their cluster's totals: ``FINDING_COLUMNS``."""
    registered = loads.where(F.col("registered"))
    totals = registered.groupBy("cluster").agg(
        F.count("broker").alias("brokers"),
        F.sum("replicas").alias("replica_total"),
        F.sum("leaders").alias("leader_total"),
    )
    joined = registered.join(totals, on="cluster", how="inner")
    findings = F.array_compact(
        F.array(
            _skewed("replicas", "replica_total", Kind.REPLICA_SKEW, "replicas"),
            _skewed("leaders", "leader_total", Kind.LEADER_SKEW, "leaders"),
        )
    )
    exploded = joined.select("cluster", F.explode(findings).alias("f"))
    return exploded.select(
        "cluster",
        F.lit(None).cast("string").alias("topic"),
        *(F.col(f"f.{n}").alias(n) for n in FINDING_COLUMNS[2:]),
    )


# ---------------------------------------------------------------------------------------------------------------
# The run.


def _registered_brokers(spark: SparkSession, headers: Mapping[str, Mapping[str, Any]]) -> DataFrame:
    rows = [
        (name, int(b["id"]), b.get("rack"), True)
        for name, header in headers.items()
        for b in header["brokers"]
    ]
    return spark.createDataFrame(rows, "cluster string, broker int, rack string, registered boolean")


def _write_plans(
    facts: DataFrame, directory: Path, progress: Progress
) -> dict[str, tuple[str, dict[str, int], int]]:
    """Stream each cluster's document to the driver and write it; returns file name, status counts and the
    plan stage's microseconds per cluster. The documents come from the cached facts, a few partitions at a
    time (one Spark job per partition: never one per plan-stage task)."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    written: dict[str, tuple[str, dict[str, int], int]] = {}
    parallelism = facts.sparkSession.sparkContext.defaultParallelism
    documents = facts.where(F.col("topic").isNull()).select(
        "cluster", "document", "plan_summary", "python_micros"
    )
    for row in documents.coalesce(parallelism).toLocalIterator():
        name = plan_file_name(row["cluster"])
        write_text_atomically(directory / name, row["document"])
        written[row["cluster"]] = (name, json.loads(row["plan_summary"]), int(row["python_micros"]))
        if len(written) % 50 == 0:
            progress.say(f"  {len(written)} plans written")
    return written


def _sample_findings(findings: DataFrame, per_cluster: int) -> list[Finding]:
    """The first ``per_cluster`` findings of each cluster, errors first: what the report's tables show."""
    rank = (
        F.when(F.col("severity") == Severity.ERROR.value, 0)
        .when(F.col("severity") == Severity.WARNING.value, 1)
        .otherwise(2)
    )
    order = Window.partitionBy("cluster").orderBy(rank, F.col("topic").asc_nulls_first(), "kind", "field")
    ranked = findings.withColumn("n", F.row_number().over(order)).where(F.col("n") <= per_cluster)
    rows = ranked.select(*FINDING_COLUMNS).collect()
    return [Finding(*(row[c] for c in FINDING_COLUMNS)) for row in rows]


_RUN_SETTINGS: dict[str, Callable[[SparkSession], str]] = {
    # Adaptive execution may coalesce the shuffles under cached frames too (Spark keeps their 200 partitions by
    # default: hundreds of near-empty tasks for a small fleet).
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": lambda _: "true",
    # Split the snapshot files into a few tasks per core, so that no core idles through a long last wave.
    "spark.sql.files.minPartitionNum": lambda spark: str(4 * spark.sparkContext.defaultParallelism),
}
"""Session settings for the length of a run, restored afterwards (the session may be the caller's)."""

LOADS_SCHEMA = "cluster string, broker int, rack string, registered boolean, replicas long, leaders long"


def run_drift(
    spark: SparkSession,
    inputs: DriftInputs,
    out: Path,
    *,
    seed: int = 0,
    progress: Progress | None = None,
    report_rows_per_cluster: int = 50,
) -> DriftResult:
    """Run every stage and write ``out``. Caches are released before returning, also on failure."""
    progress = progress if progress is not None else Progress(None)
    out.mkdir(parents=True, exist_ok=True)
    cached: list[DataFrame] = []
    previous = {key: spark.conf.get(key, None) for key in _RUN_SETTINGS}
    for key, value in _RUN_SETTINGS.items():
        spark.conf.set(key, value(spark))
    try:
        observation = Observation("kto-drift-snapshots")
        topics = snapshot_topics(inputs.snapshots.observe(observation, *header_metrics()))
        cached.append(topics.persist(StorageLevel.MEMORY_AND_DISK))
        with progress.phase("reading snapshots"):
            topics.count()
            headers = headers_from(observation.get)
        with progress.phase("counting topics"):
            per_cluster = inputs.desired.groupBy("cluster").count().collect()
            declared_counts = {row["cluster"]: int(row["count"]) for row in per_cluster}
            topic_rows = topics.where(F.col("topic").isNotNull())
            observed_counts = topic_rows.groupBy("cluster", "taken_at").count().collect()
            count_topics(headers, [(r["cluster"], r["taken_at"], int(r["count"])) for r in observed_counts])
        observed = sorted(headers)
        desired = inputs.desired.where(F.col("cluster").isin(observed))
        brokers = cluster_brokers(spark, headers)
        actual = actual_topics(topics, brokers)
        facts = plan_facts(desired, topics, headers, inputs.clusters, seed)
        cached.append(facts.persist(StorageLevel.MEMORY_AND_DISK))
        with progress.phase("planning (the engine's plan, Python tasks by cluster)"):
            facts.count()
        with progress.phase("writing plans"):
            plans = _write_plans(facts, out / PLANS_DIR, progress)
        with progress.phase("counting broker load"):
            counted = broker_loads(actual, _registered_brokers(spark, headers), brokers).collect()
            loads = sorted(
                (BrokerLoad(**row.asDict()) for row in counted), key=lambda b: (b.cluster, b.broker)
            )
        with progress.phase("classifying drift and writing drift.parquet"):
            skew = skew_findings(spark.createDataFrame(counted, LOADS_SCHEMA))  # tiny: one row per broker
            unobserved = _unobserved(inputs, declared_counts, observed)
            local = spark.createDataFrame([f.as_tuple() for f in unobserved], FINDINGS_SCHEMA)
            findings = topic_findings(desired, actual, facts).unionByName(skew).unionByName(local)
            by_cluster = findings.repartition("cluster")
            ordered = by_cluster.sortWithinPartitions(*_finding_order())
            ordered.write.mode("overwrite").parquet(str(out / DRIFT_TABLE))
        with progress.phase("summarising"):
            written = spark.read.parquet(str(out / DRIFT_TABLE))
            counts = written.groupBy("cluster", "kind", "severity").count().collect()
            sample = _sample_findings(written, report_rows_per_cluster)
            clusters = _cluster_summaries(headers, declared_counts, plans, counts, inputs)
    finally:
        for frame in cached:
            frame.unpersist()
        for key, earlier in previous.items():
            if earlier is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, earlier)
    python_seconds = round(sum(p[2] for p in plans.values()) / 1e6, 3)
    with progress.phase("rendering the report"):
        summary = _summary(clusters, inputs, seed, python_seconds, progress.timings)
        report = ReportData(summary=summary, clusters=clusters, findings=sample, loads=loads)
        write_text_atomically(out / REPORT, render_report(report))
    summary = _summary(clusters, inputs, seed, python_seconds, progress.timings)
    write_text_atomically(out / SUMMARY, summary_text(summary))
    return DriftResult(out, summary, clusters, dict(progress.timings))


def _finding_order() -> list[Column | str]:
    """``drift.parquet``'s order within a file: cluster, topic (cluster-wide findings first), kind, field."""
    return ["cluster", F.col("topic").asc_nulls_first(), "kind", "field", "desired"]


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


def _unobserved(inputs: DriftInputs, declared: Mapping[str, int], observed: Sequence[str]) -> list[Finding]:
    missing = (set(declared) | set(inputs.expected_clusters) | set(inputs.unreachable)) - set(observed)
    return [
        unobserved_finding(name, declared.get(name, 0), inputs.unreachable.get(name))
        for name in sorted(missing)
    ]


def _cluster_summaries(
    headers: Mapping[str, Mapping[str, Any]],
    declared: Mapping[str, int],
    plans: Mapping[str, tuple[str, dict[str, int], int]],
    counts: Sequence[Any],
    inputs: DriftInputs,
) -> list[ClusterSummary]:
    names = sorted(set(headers) | set(declared) | set(inputs.expected_clusters) | set(inputs.unreachable))
    summaries = {
        name: ClusterSummary(name, observed=name in headers, declared=declared.get(name, 0)) for name in names
    }
    for name, header in headers.items():
        summary = summaries[name]
        summary.topics = int(header.get("topics", 0))
        summary.brokers = len(header["brokers"])
        summary.racks = len({b.get("rack") for b in header["brokers"] if b.get("rack") is not None})
        summary.taken_at = header.get("taken_at")
        if name in plans:
            summary.plan_file, summary.plan, _ = plans[name]
    for row in counts:
        summary = summaries[row["cluster"]]
        summary.findings[row["kind"]] = summary.findings.get(row["kind"], 0) + int(row["count"])
        summary.severities[row["severity"]] = summary.severities.get(row["severity"], 0) + int(row["count"])
    for name, reason in inputs.unreachable.items():
        summaries[name].unobserved_reason = reason
    return [summaries[name] for name in names]
