"""Spark schemas of what the drift job reads and writes, declared once so every stage reads the same types.

``SNAPSHOT_SCHEMA`` is ``snapshot_rows``'s JSON-lines schema (version 1) as Spark parses it; ``DESIRED_SCHEMA``
the declared-topic rows of ``desired_rows``; ``FACTS_SCHEMA`` what the Python stage returns per cluster;
``FINDINGS_SCHEMA`` the rows of ``drift.parquet``.
"""

from __future__ import annotations

from typing import Final

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from topic_operator.drift.kinds import FINDING_COLUMNS

__all__ = ["DESIRED_SCHEMA", "FACTS_SCHEMA", "FINDINGS_SCHEMA", "LIVE_SCHEMA", "SNAPSHOT_SCHEMA"]

_REPLICAS = ArrayType(IntegerType())
_PARTITION_MAP = MapType(StringType(), _REPLICAS)
_STRING_MAP = MapType(StringType(), StringType())

SNAPSHOT_SCHEMA: Final = StructType(
    [
        StructField("schema", IntegerType()),
        StructField("cluster", StringType()),
        StructField("cluster_id", StringType()),
        StructField("controller", IntegerType()),
        StructField("taken_at", StringType()),
        StructField(
            "brokers",
            ArrayType(StructType([StructField("id", IntegerType()), StructField("rack", StringType())])),
        ),
        StructField("marked_for_deletion", ArrayType(StringType())),
        StructField("orphan_configs", MapType(StringType(), IntegerType())),
        StructField("unreadable_topics", _STRING_MAP),
        StructField("topic", StringType()),
        StructField("partitions", _PARTITION_MAP),
        StructField("topic_id", StringType()),
        StructField("config", _STRING_MAP),
        StructField("topic_znode_version", IntegerType()),
        StructField("config_znode_version", IntegerType()),
        StructField("topic_marked_for_deletion", BooleanType()),
        StructField("reassignment_in_progress", BooleanType()),
        StructField(
            "partition_states",
            MapType(
                StringType(),
                StructType([StructField("leader", IntegerType()), StructField("isr", _REPLICAS)]),
            ),
        ),
    ]
)

DESIRED_SCHEMA: Final = StructType(
    [
        StructField("cluster", StringType(), nullable=False),
        StructField("topic", StringType(), nullable=False),
        StructField("partitions", IntegerType(), nullable=False),
        StructField("replicas", IntegerType(), nullable=False),
        StructField("config", _STRING_MAP),
        StructField("replica_assignment", _PARTITION_MAP),
        StructField("rack_aware_mode", StringType()),
        StructField("deletion_policy", StringType()),
        StructField("mode", StringType()),
        StructField("source", StringType()),
    ]
)

FACTS_SCHEMA: Final = StructType(
    [
        StructField("cluster", StringType()),
        StructField("topic", StringType()),
        StructField("status", StringType()),
        StructField("actions", ArrayType(StringType())),
        StructField(
            "rejections",
            ArrayType(
                StructType(
                    [
                        StructField("field", StringType()),
                        StructField("kafka_class", StringType()),
                        StructField("message", StringType()),
                    ]
                )
            ),
        ),
        StructField(
            "config_diffs",
            ArrayType(
                StructType(
                    [
                        StructField("key", StringType()),
                        StructField("desired", StringType()),
                        StructField("actual", StringType()),
                    ]
                )
            ),
        ),
        StructField("document", StringType()),
        StructField("plan_summary", StringType()),
        StructField("python_micros", LongType()),
    ]
)
"""Per topic the plan acts on: status, action types, rejections, config keys that differ; per cluster one row
with ``topic`` null carrying the plan document, its status counts (JSON) and the microseconds the stage
spent on the cluster."""

LIVE_SCHEMA: Final = StructType(
    [
        StructField("cluster", StringType()),
        StructField("value", StringType()),
        StructField("error", StringType()),
    ]
)
"""What a live-collection task returns: snapshot rows as JSON text, or one row with the reason it failed."""

FINDINGS_SCHEMA: Final = StructType(
    [
        StructField(name, StringType(), nullable=name in ("topic", "desired", "actual", "message"))
        for name in FINDING_COLUMNS
    ]
)
