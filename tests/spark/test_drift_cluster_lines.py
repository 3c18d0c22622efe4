"""``cluster_drift``, the job's Python stage, on its own: what it reads from snapshot lines equals the rules on the
``ClusterState``, in any line order, and every line it cannot read is a problem naming its file.

The stage measures health and broker load in one pass over the raw rows instead of through ``ClusterState``
(``rules.health_findings``, ``rules.broker_loads``): these tests hold that pass to the rules on generated fleets,
lines shuffled as Spark's shuffle may deliver them. The Spark tests hold the whole job to the same rules.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
from drift_fleets import TAKEN_AT, random_fleet, small_fleet, wide_ids_fleet, write_snapshots
from pyspark.sql import SparkSession

from topic_operator.drift.cluster_drift import Problem, cluster_drift, snapshot_error
from topic_operator.drift.inputs import SnapshotError, desired_frame, read_snapshots
from topic_operator.drift.job import DriftInputs, run_drift
from topic_operator.drift.planning import plan_cluster
from topic_operator.drift.rules import broker_loads, cluster_findings
from topic_operator.plan import plan
from topic_operator.plan_output import cluster_problems, plan_to_dict, writes_to_dict
from topic_operator.snapshot_rows import rows_from_cluster, rows_to_clusters


def _lines(rows: list[dict[str, object]]) -> list[str]:
    return [json.dumps(row, separators=(",", ":"), sort_keys=True) for row in rows]


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_findings_and_loads_equal_the_rules_in_any_line_order(seed: int) -> None:
    fleet = random_fleet(seed, clusters=3, topics=30)
    fleet.specs += wide_ids_fleet().specs
    fleet.states.update(wide_ids_fleet().states)
    for name, state in fleet.states.items():
        lines = _lines(rows_from_cluster(name, state, TAKEN_AT))
        random.Random(seed).shuffle(lines)  # the header need not come first
        specs = fleet.specs_of(name)
        drift = cluster_drift(name, specs, lines, ["f"] * len(lines), fleet.settings(name), seed=5)
        facts = plan_cluster(specs, state, fleet.settings(name), seed=5).facts
        assert drift.problems == []
        assert drift.findings == cluster_findings(name, specs, state, facts), name
        assert drift.loads == broker_loads(name, state), name


def _east_lines() -> list[str]:
    fleet = small_fleet()
    return _lines(rows_from_cluster("east", fleet.states["east"], TAKEN_AT))


def _problems(lines: list[str]) -> list[tuple[Problem, str, str]]:
    files = [f"east-{n}.jsonl" for n in range(len(lines))]
    drift = cluster_drift("east", [], lines, files, None, seed=0)
    assert drift.document is None  # a cluster with problems is not planned
    return [(p.problem, p.file, p.detail) for p in drift.problems]


def test_a_replica_of_the_wrong_type_is_an_unreadable_line() -> None:
    lines = _east_lines()
    row = json.loads(lines[3])
    row["partitions"]["0"] = ["1", 2, 3]
    lines[3] = json.dumps(row)
    assert _problems(lines) == [
        (Problem.UNREADABLE, "east-3.jsonl", "not a JSON snapshot row of the expected types (partitions)")
    ]


def test_a_partition_state_without_a_leader_is_an_unreadable_line() -> None:
    lines = _east_lines()
    row = json.loads(lines[2])
    row["partition_states"]["1"] = {"isr": [1]}
    lines[2] = json.dumps(row)
    assert [p[:2] for p in _problems(lines)] == [(Problem.UNREADABLE, "east-2.jsonl")]


def test_a_cluster_key_given_twice_is_an_unreadable_line() -> None:
    """Spark groups the line by one ``cluster`` key and orjson reads the other: the line must not slip into
    another cluster's plan."""
    lines = _east_lines()
    lines[4] = lines[4][:-1] + ',"cluster":"west"}'
    assert [p[:2] for p in _problems(lines)] == [(Problem.UNREADABLE, "east-4.jsonl")]


def test_two_identical_headers_are_two_snapshots() -> None:
    lines = _east_lines()
    problems = _problems([*lines, lines[0]])
    assert {p[0] for p in problems} == {Problem.TWO_HEADERS}
    files = ["a.jsonl"] * len(lines) + ["b.jsonl"]
    message = snapshot_error(cluster_drift("east", [], [*lines, lines[0]], files, None, seed=0).problems)
    assert message is not None
    assert "clusters east" in message
    assert "(in a.jsonl, b.jsonl)" in message


def test_blank_lines_are_skipped() -> None:
    lines = _east_lines()
    drift = cluster_drift("east", [], ["", *lines, "   "], ["f"] * (len(lines) + 2), None, seed=0)
    assert drift.problems == []
    assert drift.observed


def test_a_line_of_the_wrong_type_stops_the_run_naming_its_file(spark: SparkSession, tmp_path: Path) -> None:
    fleet = small_fleet()
    snapshots = write_snapshots(fleet, tmp_path / "snapshots")
    west = snapshots / "west.jsonl"
    header, topic = west.read_text().splitlines()
    row = json.loads(topic)
    row["topic_znode_version"] = "7"
    west.write_text(f"{header}\n{json.dumps(row)}\n")
    inputs = DriftInputs(
        desired=desired_frame(spark, fleet.specs), snapshots=read_snapshots(spark, snapshots)
    )
    with pytest.raises(
        SnapshotError, match=r"1 snapshot lines cannot be read \(.*west\.jsonl: .*topic_znode_version"
    ):
        run_drift(spark, inputs, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written


def test_header_fields_added_within_version_2_reach_the_planner() -> None:
    """``kraft_migration`` and ``unreadable_znodes`` are header fields the earlier job's Spark schema did not
    read: a cluster migrating to KRaft was planned as if it were not. Its plan is ``kto plan``'s: every change
    refused."""
    fleet = small_fleet()
    migrating = replace(fleet.states["east"], kraft_migration="/migration exists")
    lines = _lines(rows_from_cluster("east", migrating, TAKEN_AT))
    specs = fleet.specs_of("east")
    drift = cluster_drift("east", specs, lines, ["f"] * len(lines), None, seed=0)
    state = rows_to_clusters(json.loads(line) for line in lines)["east"]
    expected = {
        **plan_to_dict(plan(specs, state, seed=0)),
        **cluster_problems(state, (3, 4)),
        "writes": writes_to_dict(state),
    }
    assert drift.document is not None
    assert json.loads(drift.document) == expected
    assert json.loads(drift.document)["kraft_migration"] == "/migration exists"  # as kto plan -o json says it
    assert drift.plan["create"] == 0


def test_each_line_is_keyed_by_its_cluster_however_it_is_spelled(spark: SparkSession, tmp_path: Path) -> None:
    """The group key is read by a regular expression when ``cluster`` is the line's first key, and by a JSON
    reader otherwise: both give the value a JSON parser gives, whatever the key order, spacing or escapes."""
    row = json.loads(_east_lines()[1])
    spellings = [
        json.dumps(row, separators=(",", ":"), sort_keys=True),  # as kto snapshot writes it
        json.dumps(dict(reversed(list(row.items()))), separators=(",", ":")),  # cluster last
        json.dumps(row, sort_keys=True),  # spaces after the separators
        json.dumps({**row, "cluster": "east-\u00e9"}, sort_keys=True, separators=(",", ":")),  # \u escape
        json.dumps({**row, "cluster": 'we"st'}, sort_keys=True, separators=(",", ":")),  # an escaped quote
        json.dumps({**row, "cluster": "w\\est"}, sort_keys=True, separators=(",", ":")),  # a backslash
    ]
    (tmp_path / "spellings.jsonl").write_text("\n".join(spellings) + "\n")
    keyed = read_snapshots(spark, tmp_path).collect()
    assert [r["cluster"] for r in keyed] == [json.loads(line)["cluster"] for line in spellings]
