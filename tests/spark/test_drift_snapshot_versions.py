"""Schema 1 snapshots (the header on every row) plan and classify as schema 2's; broken snapshot sets stop the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from drift_fleets import TAKEN_AT, FleetRun, run_fleet, small_fleet, write_snapshots
from pyspark.sql import SparkSession

from topic_operator.drift.inputs import SnapshotError, desired_frame, read_snapshots
from topic_operator.drift.job import DriftInputs, run_drift


def _findings(spark: SparkSession, out: Path) -> list[tuple[object, ...]]:
    return sorted(
        (tuple(row) for row in spark.read.parquet(str(out / "drift.parquet")).collect()),
        key=lambda r: tuple(str(v) for v in r),
    )


def test_schema_1_snapshots_give_the_same_findings_and_plans(
    spark: SparkSession, small_fleet_run: FleetRun, tmp_path: Path
) -> None:
    old = run_fleet(spark, small_fleet(), tmp_path, schema=1)
    assert '"brokers"' in (tmp_path / "snapshots" / "east.jsonl").read_text().splitlines()[1]
    assert _findings(spark, old.out) == _findings(spark, small_fleet_run.out)
    for plan in sorted((small_fleet_run.out / "plans").iterdir()):
        assert (old.out / "plans" / plan.name).read_text() == plan.read_text()


def _run(spark: SparkSession, snapshots: Path, out: Path) -> None:
    fleet = small_fleet()
    inputs = DriftInputs(
        desired=desired_frame(spark, fleet.specs), snapshots=read_snapshots(spark, snapshots)
    )
    run_drift(spark, inputs, out)


def test_topic_rows_without_their_header_stop_the_run(spark: SparkSession, tmp_path: Path) -> None:
    snapshots = write_snapshots(small_fleet(), tmp_path / "snapshots")
    east = snapshots / "east.jsonl"
    east.write_text("".join(east.read_text().splitlines(keepends=True)[1:]))
    with pytest.raises(SnapshotError, match="clusters east have no header row"):
        _run(spark, snapshots, tmp_path / "out")
    assert not (tmp_path / "out" / "drift.parquet").exists()


def test_topic_rows_of_another_snapshot_stop_the_run(spark: SparkSession, tmp_path: Path) -> None:
    snapshots = write_snapshots(small_fleet(), tmp_path / "snapshots")
    east = snapshots / "east.jsonl"
    header, first, *rest = east.read_text().splitlines(keepends=True)
    later = json.dumps({**json.loads(first), "taken_at": TAKEN_AT.replace("2026", "2027")}) + "\n"
    east.write_text("".join([header, later, *rest]))
    with pytest.raises(SnapshotError, match="clusters east have topic rows taken at another time"):
        _run(spark, snapshots, tmp_path / "out")
