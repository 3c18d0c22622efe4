"""``kto drift --master spark://...`` on a real Spark standalone cluster (a master and two worker processes on
127.0.0.1, each worker with its own executor and Python workers) gives exactly what the ``local[2]`` run gives:
the same ``drift.parquet`` rows, the same plans, the same summary. With ``--clusters``, the tasks that read the
ZooKeepers run on the workers.

``kto drift`` runs as a user runs it, a process of its own; the ``local[2]`` side is the test session's run of
the same command on the same inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from drift_fleets import small_fleet, write_snapshots
from kazoo.client import KazooClient
from pyspark.sql import SparkSession
from test_drift_live_collection import live_inputs, two_clusters  # noqa: F401 (a fixture)
from test_kto_drift_command import write_manifests

from harness.spark_standalone import StandaloneCluster, loopback_environment
from topic_operator.drift.command import main
from topic_operator.testing.local_server import LocalZooKeeper

pytestmark = [pytest.mark.spark, pytest.mark.slow]

RUN_TIMEOUT = 240.0


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    with StandaloneCluster(tmp_path_factory.mktemp("spark-standalone"), workers=2, cores=1) as cluster:
        yield cluster


def _kto_drift_on(
    cluster: StandaloneCluster, arguments: list[str], work: Path
) -> subprocess.CompletedProcess[str]:
    """``kto drift --master spark://...`` as a process of its own, the driver bound to 127.0.0.1."""
    command = [str(Path(sys.executable).parent / "kto"), "drift", "--master", cluster.url, *arguments,
               "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
               "--conf", "spark.ui.enabled=false", "--conf", "spark.executor.memory=1g",
               "--conf", "spark.sql.shuffle.partitions=2"]  # fmt: skip
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env=loopback_environment(work),
        check=False,
    )


def _outputs(spark: SparkSession, out: Path) -> dict[str, Any]:
    """What a run produced, without what differs by run (where, when, on which master, how long)."""
    rows = sorted(
        (json.dumps(row.asDict(recursive=True), sort_keys=True, default=str)
         for row in spark.read.parquet(str(out / "drift.parquet")).collect()),
    )  # fmt: skip
    plans = {p.name: json.loads(p.read_text()) for p in sorted((out / "plans").iterdir())}
    summary = json.loads((out / "summary.json").read_text())
    for run_specific in (
        "run_id",
        "generated_at",
        "inputs",
        "timings_seconds",
    ):  # when, from where, on which master
        del summary[run_specific]
    for cluster in summary["clusters"]:
        cluster.pop("taken_at", None)  # a live read's time
    return {"rows": rows, "plans": plans, "summary": summary}


def _executors_that_ran(standalone: StandaloneCluster) -> set[str]:
    """The workers that launched an executor for an application (each logs it)."""
    return {
        name
        for name in ("worker-0", "worker-1")
        if "Launching executor" in standalone.log(name) or "Asked to launch executor" in standalone.log(name)
    }


@pytest.mark.timeout(420)
def test_snapshots_on_the_cluster_equal_local(
    spark: SparkSession, standalone: StandaloneCluster, tmp_path: Path
) -> None:
    fleet = small_fleet()
    manifests = write_manifests(fleet, tmp_path / "manifests")
    snapshots = write_snapshots(fleet, tmp_path / "snapshots")
    inputs = ["--desired", str(manifests), "--snapshots", str(snapshots), "--seed", "3", "-q"]
    assert main([*inputs, "--out", str(tmp_path / "local")]) == 2

    remote = _kto_drift_on(standalone, [*inputs, "--out", str(tmp_path / "cluster")], tmp_path)
    assert remote.returncode == 2, remote.stderr[-3000:]
    assert "in 3 clusters -> " in remote.stdout
    assert _outputs(spark, tmp_path / "cluster") == _outputs(spark, tmp_path / "local")
    assert (
        json.loads((tmp_path / "cluster" / "summary.json").read_text())["inputs"]["master"] == standalone.url
    )
    assert _executors_that_ran(standalone) == {"worker-0", "worker-1"}


@pytest.mark.timeout(420)
def test_live_collection_runs_on_the_workers(
    spark: SparkSession,
    standalone: StandaloneCluster,
    two_clusters: dict[str, tuple[LocalZooKeeper, KazooClient]],  # noqa: F811
    tmp_path: Path,
) -> None:
    inventory, desired = live_inputs(two_clusters, tmp_path)
    inputs = ["--desired", str(desired), "--clusters", str(inventory), "--zookeeper-timeout", "2", "-q"]
    assert main([*inputs, "--out", str(tmp_path / "local")]) == 2

    remote = _kto_drift_on(standalone, [*inputs, "--out", str(tmp_path / "cluster")], tmp_path)
    assert remote.returncode == 2, remote.stderr[-3000:]
    cluster, local = _outputs(spark, tmp_path / "cluster"), _outputs(spark, tmp_path / "local")
    assert cluster == local
    kinds = {json.loads(row)["kind"] for row in cluster["rows"]}
    assert {"partitions_behind", "missing", "unmanaged", "cluster_unobserved"} <= kinds
