"""The Arrow forms of the drift job's tables, declared without pyspark.

``schema`` declares the Spark schemas every Spark stage reads and writes; the process engine (``processes``) and
the writing of the outputs (``results``) need only their Arrow forms, and importing pyspark (with pandas) would
cost them a second of start-up for nothing. The tests hold each form here equal to what pyspark derives from the
Spark schema (``to_arrow_schema``), so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs

from topic_operator.drift.kinds import FINDING_COLUMNS

__all__ = ["CLUSTER_DRIFT_ARROW", "DESIRED_ARROW", "FINDINGS_ARROW"]

_NULLABLE_FINDING_COLUMNS: Final = frozenset({"topic", "desired", "actual", "message"})

_FINDING: Final = pa.struct([pa.field(name, pa.string()) for name in FINDING_COLUMNS])

FINDINGS_ARROW: Final = pa.schema(
    [pa.field(name, pa.string(), nullable=name in _NULLABLE_FINDING_COLUMNS) for name in FINDING_COLUMNS]
)
"""``schema.FINDINGS_SCHEMA``: the rows of ``drift.parquet``."""

CLUSTER_DRIFT_ARROW: Final = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("observed", pa.bool_()),
        pa.field("declared", pa.int64()),
        pa.field("topics", pa.int64()),
        pa.field("brokers", pa.int32()),
        pa.field("racks", pa.int32()),
        pa.field("taken_at", pa.string()),
        pa.field("read_through", pa.string()),
        pa.field("migration_stage", pa.string()),
        pa.field("kafka_release", pa.string()),
        pa.field("document", pa.string()),
        pa.field("plan", pa.map_(pa.string(), pa.int64())),
        pa.field("micros", pa.int64()),
        pa.field("findings", pa.list_(_FINDING)),
        pa.field("sample", pa.list_(_FINDING)),
        pa.field(
            "loads",
            pa.list_(
                pa.struct(
                    [
                        pa.field("broker", pa.int32()),
                        pa.field("rack", pa.string()),
                        pa.field("registered", pa.bool_()),
                        pa.field("replicas", pa.int64()),
                        pa.field("leaders", pa.int64()),
                    ]
                )
            ),
        ),
        pa.field(
            "problems",
            pa.list_(
                pa.struct(
                    [
                        pa.field("problem", pa.string()),
                        pa.field("file", pa.string()),
                        pa.field("detail", pa.string()),
                    ]
                )
            ),
        ),
    ]
)
"""``schema.CLUSTER_DRIFT_SCHEMA``: what the Python stage returns for each cluster."""

DESIRED_ARROW: Final = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partitions", pa.int32(), nullable=False),
        pa.field("replicas", pa.int32(), nullable=False),
        pa.field("config", pa.map_(pa.string(), pa.string())),
        pa.field("replica_assignment", pa.map_(pa.string(), pa.list_(pa.int32()))),
        pa.field("rack_aware_mode", pa.string()),
        pa.field("deletion_policy", pa.string()),
        pa.field("mode", pa.string()),
        pa.field("source", pa.string()),
        pa.field("unmanaged_config", pa.list_(pa.string())),
    ]
)
"""``schema.DESIRED_SCHEMA``: the declared-topic rows of ``desired_rows``."""
