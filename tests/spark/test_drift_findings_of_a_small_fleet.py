"""The hand-built fleet's findings, row by row: every drift kind where a reader expects it, nothing else."""

from __future__ import annotations

import json

from drift_fleets import FleetRun
from pyspark.sql import SparkSession

from topic_operator.drift.job import CLUSTER_PHASE
from topic_operator.drift.kinds import FINDING_COLUMNS, Kind

REJECTED_RF = (
    "InvalidReplicationFactorException: Changing the replication factor of topic audit from 2 to 3 is not "
    "supported: Kafka changes replicas only by partition reassignment; kafka-topic-operator does that through "
    "Kafka's partition reassignment once KafkaCluster east sets spec.reassignment.enabled: true."
)
DECREASE = (
    "InvalidPartitionsException: The number of partitions for a topic can only be increased. Topic clicks "
    "currently has 6 partitions, 3 would not be an increase."
)
PINNED = (
    "InvalidReplicaAssignmentException: replicaAssignment moves existing partitions [0] of topic pinned: "
    "changing the replicas of existing partitions needs a partition reassignment; kafka-topic-operator does "
    "that through Kafka's partition reassignment once KafkaCluster east sets spec.reassignment.enabled: true."
)

EXPECTED = [
    ("east", "audit", "replication_factor_differs", "replicas", "3", "2", "rejected", "error", REJECTED_RF),
    ("east", "billing", "config_differs", "config.retention.ms", "604800000", "86400000", "alter_config", "warning", None),
    ("east", "clicks", "partitions_ahead", "partitions", "3", "6", "rejected", "error", DECREASE),
    ("east", "dark", "offline", "leader", "0", "2", "manual", "error", "partitions 0, 4 have no leader on a live broker"),
    ("east", "dark", "under_replicated", "isr", "0", "2", "manual", "warning", "partitions 0, 4 have fewer in-sync replicas than replicas"),
    ("east", "doomed", "marked_for_deletion", "topic", "present", "marked for deletion", "rejected", "warning", "InvalidTopicException: The topic is queued for deletion."),
    ("east", "fresh", "missing", "topic", "partitions=6 replicas=3", None, "create", "warning", "declared at east/fresh.yaml#1"),
    ("east", "ghost", "missing", "topic", "partitions=3 replicas=3", None, "rejected", "warning", "TopicExistsException: Topic 'ghost' is marked for deletion."),
    ("east", "lagging", "under_replicated", "isr", "0", "1", "manual", "warning", "partitions 1 have fewer in-sync replicas than replicas"),
    ("east", "legacy", "unmanaged", "topic", None, "partitions=6 replicas=3", "none", "info", None),
    ("east", "narrow", "rack_violation", "racks", "0", "1", "manual", "warning", "partitions 2 span fewer racks than min(replicas, 3 racks)"),
    ("east", "old", "marked_for_deletion", "topic", None, "marked for deletion", "none", "info", None),
    ("east", "old", "unmanaged", "topic", None, "partitions=6 replicas=3", "none", "info", None),
    ("east", "payments", "partitions_behind", "partitions", "6", "3", "add_partitions", "warning", None),
    ("east", "pinned", "plan_rejected", "replicaAssignment", None, None, "rejected", "error", PINNED),
    ("north", None, "cluster_unobserved", "snapshot", "1 declared topics", None, "manual", "error", "no snapshot rows for this cluster"),
    ("west", None, "leader_skew", "broker.2.leaders", "1..3", "0", "manual", "info", "6 leaders over 3 registered brokers"),
    ("west", None, "replica_skew", "broker.0.replicas", "3..5", "6", "manual", "info", "12 replicas over 3 registered brokers"),
    ("west", None, "replica_skew", "broker.1.replicas", "3..5", "6", "manual", "info", "12 replicas over 3 registered brokers"),
    ("west", None, "replica_skew", "broker.2.replicas", "3..5", "0", "manual", "info", "12 replicas over 3 registered brokers"),
]  # fmt: skip


def test_every_finding_row_by_row(spark: SparkSession, small_fleet_run: FleetRun) -> None:
    table = spark.read.parquet(str(small_fleet_run.out / "drift.parquet"))
    assert tuple(table.columns) == FINDING_COLUMNS
    rows = [tuple(row) for row in table.collect()]
    assert sorted(rows, key=lambda r: tuple(v or "" for v in r)) == EXPECTED


def test_every_kind_appears(small_fleet_run: FleetRun) -> None:
    assert {row[2] for row in EXPECTED} == {kind.value for kind in Kind}


def test_files_are_in_cluster_topic_order(spark: SparkSession, small_fleet_run: FleetRun) -> None:
    for path in sorted((small_fleet_run.out / "drift.parquet").glob("part-*.parquet")):
        rows = [(r.cluster, r.topic or "", r.kind, r.field) for r in spark.read.parquet(str(path)).collect()]
        assert rows == sorted(rows)


def test_summary_counts_the_findings(small_fleet_run: FleetRun) -> None:
    summary = json.loads((small_fleet_run.out / "summary.json").read_text())
    totals = summary["totals"]
    assert totals["findings"] == len(EXPECTED)
    assert totals["by_severity"] == {"error": 5, "warning": 8, "info": 7}
    assert totals["observed_clusters"] == 2
    assert totals["clusters"] == 3
    by_name = {c["name"]: c for c in summary["clusters"]}
    assert by_name["north"]["observed"] is False
    assert by_name["east"]["plan"]["create"] == 1  # fresh (ghost is rejected)
    assert by_name["east"]["plan_file"] == "east.json"
    assert by_name["west"]["findings"] == {"leader_skew": 1, "replica_skew": 3}
    assert set(summary["timings_seconds"]) >= {CLUSTER_PHASE, "rendering the report"}
