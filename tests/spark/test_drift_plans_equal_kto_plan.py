"""For every cluster of generated fleets, the job's plan is ``kto plan``'s and its findings are the rules'.

``kto plan -o json`` prints ``plan_to_dict(plan(desired, snapshot, cluster, seed=...))`` and the cluster's problems
(``cluster_problems``) in one process; the job must write exactly that document (less ``manifest_errors``; with ``writes``) for
each cluster, whatever the other clusters hold. The findings must equal the
single-process rules (``drift.rules``) row for row, which pins the native column expressions to plain Python.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from drift_fleets import Fleet, random_fleet, run_fleet, wide_ids_fleet
from pyspark.sql import SparkSession

from topic_operator.drift.planning import plan_cluster
from topic_operator.drift.rules import cluster_findings
from topic_operator.plan import plan
from topic_operator.plan_output import cluster_problems, plan_to_dict, writes_to_dict
from topic_operator.snapshot_rows import rows_from_cluster, rows_to_clusters


def ordered(row: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple(value or "" for value in row)


def merged(*fleets: Fleet) -> Fleet:
    combined = Fleet([], {})
    for fleet in fleets:
        combined.specs += fleet.specs
        combined.states.update(fleet.states)
        combined.clusters.update(fleet.clusters)
    return combined


@pytest.fixture(scope="module")
def generated(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[Fleet, Path]:
    fleet = merged(
        random_fleet(11, clusters=4, topics=40), random_fleet(12, clusters=3, topics=25), wide_ids_fleet()
    )
    run = run_fleet(spark, fleet, tmp_path_factory.mktemp("generated"), seed=7)
    return fleet, run.out


def test_each_plan_is_the_one_kto_plan_computes(generated: tuple[Fleet, Path]) -> None:
    fleet, out = generated
    assert sorted(p.name for p in (out / "plans").iterdir()) == sorted(f"{c}.json" for c in fleet.states)
    for name, written in fleet.states.items():
        # as kto plan --snapshot reads it: the file gives what ZooKeeper showed, and the writer that follows
        state = rows_to_clusters(rows_from_cluster(name, written, "t"))[name]
        settings = fleet.settings(name)
        expected = {
            **plan_to_dict(plan(fleet.specs_of(name), state, settings, seed=7)),
            **cluster_problems(state, settings.kafka_version),
            "writes": writes_to_dict(state),
        }
        assert json.loads((out / "plans" / f"{name}.json").read_text()) == expected, name


def test_findings_equal_the_single_process_rules(spark: SparkSession, generated: tuple[Fleet, Path]) -> None:
    fleet, out = generated
    rows = [tuple(r) for r in spark.read.parquet(str(out / "drift.parquet")).collect()]
    for name, state in fleet.states.items():
        specs = fleet.specs_of(name)
        facts = plan_cluster(specs, state, fleet.settings(name), seed=7).facts
        expected = [f.as_tuple() for f in cluster_findings(name, specs, state, facts)]
        got = [r for r in rows if r[0] == name]
        assert sorted(got, key=ordered) == sorted(expected, key=ordered), name


def test_the_generated_fleets_exercise_every_rule(spark: SparkSession, generated: tuple[Fleet, Path]) -> None:
    """Guards the generator: a consistency check over fleets without drift would prove nothing."""
    _, out = generated
    kinds = {
        r.kind for r in spark.read.parquet(str(out / "drift.parquet")).select("kind").distinct().collect()
    }
    assert kinds >= {
        "missing", "unmanaged", "partitions_behind", "partitions_ahead", "replication_factor_differs",
        "config_differs", "marked_for_deletion", "plan_rejected", "under_replicated", "offline", "rack_violation",
    }  # fmt: skip
    wide = spark.read.parquet(str(out / "drift.parquet")).where("cluster = 'wide'").collect()
    assert {(r.kind, r.actual) for r in wide} >= {("rack_violation", "3"), ("offline", "1")}


def test_a_cluster_planned_alone_gets_the_same_plan(
    spark: SparkSession, generated: tuple[Fleet, Path], tmp_path: Path
) -> None:
    """Seeds are per cluster and topic: taking the other clusters away changes nothing in this one's plan."""
    fleet, out = generated
    name = sorted(fleet.states)[0]
    alone = Fleet(fleet.specs_of(name), {name: fleet.states[name]}, dict(fleet.clusters))
    run = run_fleet(spark, alone, tmp_path, seed=7)
    assert (run.out / "plans" / f"{name}.json").read_text() == (out / "plans" / f"{name}.json").read_text()
