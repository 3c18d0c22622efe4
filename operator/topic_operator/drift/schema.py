"""Spark schemas of what the drift job reads and writes, declared once so every stage reads the same types.

``DESIRED_SCHEMA`` is the declared-topic rows of ``desired_rows``; ``SNAPSHOT_LINES_SCHEMA`` the snapshot lines
as the job reads them (text, keyed by cluster, with their file); ``CLUSTER_DRIFT_SCHEMA`` what the Python stage
returns per cluster; ``FINDINGS_SCHEMA`` the rows of ``drift.parquet``; ``LIVE_SCHEMA`` what a live read returns.
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

__all__ = [
    "CLUSTER_DRIFT_SCHEMA",
    "DESIRED_SCHEMA",
    "FINDINGS_SCHEMA",
    "LIVE_SCHEMA",
    "SNAPSHOT_LINES_SCHEMA",
]

_REPLICAS = ArrayType(IntegerType())
_PARTITION_MAP = MapType(StringType(), _REPLICAS)
_STRING_MAP = MapType(StringType(), StringType())

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
        StructField("unmanaged_config", ArrayType(StringType())),
    ]
)

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

SNAPSHOT_LINES_SCHEMA: Final = StructType(
    [
        StructField("cluster", StringType()),
        StructField("value", StringType()),
        StructField("file", StringType()),
    ]
)
"""One snapshot line: its ``cluster`` field as the grouping key (null when the line has none, or is not JSON),
the line's text, and the file it came from."""

_FINDING = StructType([StructField(name, StringType()) for name in FINDING_COLUMNS])

CLUSTER_DRIFT_SCHEMA: Final = StructType(
    [
        StructField("cluster", StringType()),
        StructField("observed", BooleanType()),
        StructField("declared", LongType()),
        StructField("topics", LongType()),
        StructField("brokers", IntegerType()),
        StructField("racks", IntegerType()),
        StructField("taken_at", StringType()),
        StructField("read_through", StringType()),
        StructField("migration_stage", StringType()),
        StructField("kafka_release", StringType()),
        StructField("document", StringType()),
        StructField("plan", MapType(StringType(), LongType())),
        StructField("micros", LongType()),
        StructField("findings", ArrayType(_FINDING)),
        StructField("sample", ArrayType(_FINDING)),
        StructField(
            "loads",
            ArrayType(
                StructType(
                    [
                        StructField("broker", IntegerType()),
                        StructField("rack", StringType()),
                        StructField("registered", BooleanType()),
                        StructField("replicas", LongType()),
                        StructField("leaders", LongType()),
                    ]
                )
            ),
        ),
        StructField(
            "problems",
            ArrayType(
                StructType(
                    [
                        StructField("problem", StringType()),
                        StructField("file", StringType()),
                        StructField("detail", StringType()),
                    ]
                )
            ),
        ),
    ]
)
"""One row per cluster from the Python stage (``cluster_drift.ClusterDrift``): counts for the summary, the plan
document, every finding (in ``drift.parquet``'s order), the report's sample of them, broker load, and the
problems of its snapshot lines (``cluster_drift.Problem``'s values) that stop the run."""
