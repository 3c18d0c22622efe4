"""The process engine's shortcuts leave its outputs as they were: workers write the plans themselves (into a
staging directory the run moves into place), read the snapshot lines as bytes, and the driver hands each
cluster's declared rows to its task and forgets them. On a small generated fleet with some of everything (drift
of every common kind, a declared cluster without a snapshot, a duplicate declaration, declared rows out of
cluster order, blank and whitespace-only lines), ``run_drift_in_processes`` writes exactly what the plain
computation writes: every line decoded to text, each cluster through ``cluster_table`` with its plan in its row,
and ``write_results`` writing the plans from the rows. Only what differs by run (its id, its time, the phases'
durations) is left out of the comparison.

A run that fails on a snapshot line leaves nothing behind: not the staged plans, not ``--out`` when the run made
it, and an earlier run's outputs untouched.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from topic_operator.drift.arrow_schemas import CLUSTER_DRIFT_ARROW, DESIRED_ARROW
from topic_operator.drift.arrow_stage import cluster_table
from topic_operator.drift.desired_rows import spec_to_row
from topic_operator.drift.kinds import FINDING_COLUMNS, Finding
from topic_operator.drift.processes import _file_uri, load_declared, run_drift_in_processes
from topic_operator.drift.progress import Progress
from topic_operator.drift.results import FleetFacts, SnapshotError, write_results
from topic_operator.drift.snapshot_files import keyed_lines, read_lines, snapshot_files
from topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from topic_operator.model import Broker, ClusterState, PartitionState, TopicSpec, TopicState
from topic_operator.snapshot_rows import rows_from_cluster

TAKEN_AT = "2026-01-05T10:00:00+00:00"
CONFIGS: tuple[dict[str, str], ...] = (
    {},
    {"retention.ms": "86400000"},
    {"cleanup.policy": "compact", "min.insync.replicas": "2"},
)


def _cluster(number: int) -> tuple[str, ClusterState, list[TopicSpec]]:
    """One cluster of 40 topics, a fifth of them drifting in one way or another."""
    rng = random.Random(number)
    name = f"kafka-{number}"
    brokers = {i: Broker(i, f"rack-{i % 3}") for i in range(6)}
    metadata = [BrokerMetadata(i, f"rack-{i % 3}") for i in range(6)]
    topics: dict[str, TopicState] = {}
    specs: list[TopicSpec] = []
    for index in range(40):
        topic = f"team-{index % 4}.events-{index:03d}"
        partitions = rng.choice((1, 3, 6))
        assignment = {
            p: tuple(r) for p, r in assign_replicas_to_brokers(metadata, partitions, 3, rng=rng).items()
        }
        config = dict(rng.choice(CONFIGS))
        states = {p: PartitionState(r[0], r, 1, 1) for p, r in assignment.items()}
        want = {"partitions": partitions, "replicas": 3, "config": dict(config)}
        kind = index % 10
        if kind == 1 and index > 10:
            want["partitions"] = partitions + 3
        elif kind == 2:
            want["config"] = {**config, "retention.ms": "1209600000"}
        elif kind == 3:
            states[0] = PartitionState(assignment[0][0], assignment[0][:2], 1, 1)
        elif kind == 4 and index > 20:
            want["replicas"] = 2
        if not (kind == 5 and index > 20):  # a few topics exist undeclared
            specs.append(TopicSpec(cluster=name, name=topic, source=f"teams/{topic}.yaml", **want))  # type: ignore[arg-type]
        if not (kind == 6 and index > 20):  # and a few are declared but missing
            topics[topic] = TopicState(topic, assignment, "AAAAAAAAAAAAAAAAAAAAAQ", config=config,
                                       partition_states=states)  # fmt: skip
    specs.append(
        TopicSpec(cluster=name, name=specs[0].name, partitions=3, replicas=3, source="elsewhere.yaml")
    )
    return name, ClusterState("AAAAAAAAAAAAAAAAAAAAAQ", brokers, topics, 0), specs


def _fleet(directory: Path) -> tuple[Path, Path]:
    """Snapshot files of three clusters (one with blank and whitespace-only lines) and a Parquet table of their
    declared topics and those of a fourth cluster without a snapshot, rows shuffled."""
    snapshots = directory / "snapshots"
    snapshots.mkdir(parents=True)
    rows: list[dict[str, Any]] = []
    for number in range(3):
        name, state, specs = _cluster(number)
        lines = [
            orjson.dumps(r, option=orjson.OPT_SORT_KEYS) for r in rows_from_cluster(name, state, TAKEN_AT)
        ]
        if number == 1:
            lines[2:2] = [b"", b"   ", b"\x1c", b" \x1f\t"]  # blank to Spark's text and the job
        (snapshots / f"{name}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        rows += [spec_to_row(spec) for spec in specs]
    rows += [spec_to_row(TopicSpec(cluster="kafka-gone", name="orders", partitions=3, replicas=3))]
    random.Random(7).shuffle(rows)
    for row in rows:
        row["config"] = list(row["config"].items())
    desired = directory / "desired.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=DESIRED_ARROW), desired)
    return snapshots, desired


def _plain(desired: Path, snapshots: Path, facts: FleetFacts, out: Path) -> None:
    """The outputs computed the plain way: in this process, every line decoded, plans carried in the rows."""
    declared = load_declared([str(desired)])
    texts: dict[str | None, list[str | bytes]] = {}
    origins: dict[str | None, list[str]] = {}
    for path in snapshot_files(snapshots):
        for key, line in keyed_lines(read_lines(path)):
            if line.strip():
                texts.setdefault(key, []).append(line.decode("utf-8", "surrogateescape"))
                origins.setdefault(key, []).append(_file_uri(str(path)))
    names = list(texts) + [name for name in declared.parts if name not in texts]
    rows = [
        cluster_table(
            name,
            [pa.ipc.open_stream(part).read_all() for part in declared.parts.get(name, ())] if name else [],
            texts.get(name, []),
            origins.get(name, []),
            settings={},
            unreachable={},
            seed=0,
            sample_size=50,
            schema=CLUSTER_DRIFT_ARROW,
        )
        for name in names
    ]
    write_results(pa.concat_tables(rows), facts, out, seed=0, progress=Progress(None))


def _outputs(out: Path) -> dict[str, Any]:
    """Every file of ``out`` as bytes, but for what differs by run: in ``summary.json`` its id, time and the
    phases' durations; in ``report.html`` the same; the part file's name under ``drift.parquet`` (a uuid)."""
    files: dict[str, Any] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = str(path.relative_to(out))
        data = path.read_bytes()
        if path.name.startswith("part-"):
            name = "drift.parquet/part"
        elif path.name == "summary.json":
            summary = json.loads(data)
            for run_specific in ("run_id", "generated_at", "timings_seconds"):
                summary.pop(run_specific)
            summary["inputs"].pop("python_plan_seconds")
            data = json.dumps(summary).encode()
        elif path.name == "report.html":
            text = re.sub(r"[Gg]enerated at [0-9T:+-]+", "generated at", data.decode())
            data = text[: text.index('<section id="run">')].encode()  # the run's own section: times only
        files[name] = data
    return files


def test_the_process_engine_writes_what_the_plain_computation_writes(tmp_path: Path) -> None:
    snapshots, desired = _fleet(tmp_path)
    facts = FleetFacts(described={"desired": [str(desired)]})
    run_drift_in_processes(load_declared([str(desired)]), snapshots, facts, tmp_path / "out", processes=2)
    _plain(desired, snapshots, facts, tmp_path / "plain")
    produced, expected = _outputs(tmp_path / "out"), _outputs(tmp_path / "plain")
    assert sorted(produced) == sorted(expected)
    assert len([n for n in produced if n.startswith("plans/")]) == 3
    for name in expected:
        assert produced[name] == expected[name], name


def test_a_failed_run_leaves_nothing_behind(tmp_path: Path) -> None:
    snapshots, desired = _fleet(tmp_path)
    with (snapshots / "kafka-2.jsonl").open("ab") as file:
        file.write(b'{"cluster":"kafka-2","schema":2,"topic":"broken","partitions":[1]}\n')
    facts = FleetFacts()
    fresh = tmp_path / "fresh" / "out"
    with pytest.raises(SnapshotError, match="cannot be read"):
        run_drift_in_processes(load_declared([str(desired)]), snapshots, facts, fresh, processes=2)
    assert not (tmp_path / "fresh").exists()

    earlier = tmp_path / "earlier"
    (earlier / "plans").mkdir(parents=True)
    (earlier / "plans" / "kafka-0.json").write_text("an earlier run's plan")
    with pytest.raises(SnapshotError, match="cannot be read"):
        run_drift_in_processes(load_declared([str(desired)]), snapshots, facts, earlier, processes=2)
    assert sorted(str(p.relative_to(earlier)) for p in earlier.rglob("*")) == ["plans", "plans/kafka-0.json"]
    assert (earlier / "plans" / "kafka-0.json").read_text() == "an earlier run's plan"


def test_a_finding_as_a_tuple_is_its_values_in_the_table_columns_order() -> None:
    findings = [
        Finding(
            "c", "t", "missing", "topic", "partitions=3 replicas=3", None, "create", "warning", "declared"
        ),
        Finding("c", None, "replica_skew", "replicas", None, "12", "manual", "info", None),
    ]
    for finding in findings:
        assert finding.as_tuple() == dataclasses.astuple(finding)
    assert tuple(field.name for field in dataclasses.fields(Finding)) == FINDING_COLUMNS
