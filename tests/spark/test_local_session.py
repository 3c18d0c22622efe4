"""The shared SparkSession is a real ``local[2]`` Spark that runs Python workers from this interpreter."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - the conventional alias


def test_group_by_counts_and_sums(spark: SparkSession) -> None:
    topics = spark.createDataFrame(
        [
            ("prod", "orders", 12),
            ("prod", "payments", 6),
            ("stage", "orders", 3),
            ("prod", "audit", 1),
        ],
        ["cluster", "topic", "partitions"],
    )
    per_cluster = (
        topics.groupBy("cluster")
        .agg(F.count("topic").alias("topics"), F.sum("partitions").alias("partitions"))
        .orderBy("cluster")
        .collect()
    )
    assert [(row.cluster, row.topics, row.partitions) for row in per_cluster] == [
        ("prod", 3, 19),
        ("stage", 1, 3),
    ]


def test_session_is_local_and_small(spark: SparkSession) -> None:
    assert spark.sparkContext.master == "local[2]"
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    assert spark.conf.get("spark.driver.host") == "127.0.0.1"
    assert os.environ["PYSPARK_PYTHON"] == sys.executable


def test_python_workers_run_this_interpreter(spark: SparkSession) -> None:
    """A Python UDF runs in a worker process: it must be the venv's Python, or imports there would differ."""
    executables = (
        spark.sparkContext.parallelize(range(4), 2).map(lambda _: sys.executable).distinct().collect()
    )
    assert executables == [sys.executable]
