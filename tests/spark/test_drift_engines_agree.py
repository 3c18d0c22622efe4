"""The process engine and the Spark engine give the same outputs on the same inputs, file for file, and refuse
the same bad input with the same message, writing nothing.

Each case runs ``kto drift`` twice over one directory of inputs: ``--engine spark`` on the test session (the
``local[2]`` run every other drift test checks), and ``--engine processes`` with two real worker processes.
The layouts vary what only the process engine does itself (Spark's file source and shuffle do it for the
other): which files are read, how lines are split, and how a cluster's lines come together across files.
"""

from __future__ import annotations

import bz2
import gzip
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
import yaml
from drift_fleets import TAKEN_AT, Fleet, random_fleet, small_fleet, write_snapshots
from kazoo.client import KazooClient
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from test_drift_live_collection import live_inputs, topic, two_clusters  # noqa: F401 (a fixture)
from test_kto_drift_command import write_manifests

from topic_operator.drift import command
from topic_operator.drift.arrow_schemas import CLUSTER_DRIFT_ARROW, DESIRED_ARROW, FINDINGS_ARROW
from topic_operator.drift.desired_rows import spec_to_row
from topic_operator.drift.schema import CLUSTER_DRIFT_SCHEMA, DESIRED_SCHEMA, FINDINGS_SCHEMA
from topic_operator.snapshot_rows import rows_from_cluster
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.zookeeper.snapshot import read_cluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def outputs(out: Path) -> dict[str, Any]:
    """What a run produced, without what differs by run (when, how long, which engine, a live read's time)."""
    table = pq.read_table(out / "drift.parquet")
    plans = {p.name: p.read_bytes() for p in sorted((out / "plans").iterdir())}
    summary = json.loads((out / "summary.json").read_text())
    for run_specific in ("run_id", "generated_at", "inputs", "timings_seconds"):
        del summary[run_specific]
    for cluster in summary["clusters"]:
        cluster.pop("taken_at", None)
    return {"rows": table.to_pylist(), "schema": table.schema, "plans": plans, "summary": summary}


def run(engine: str, arguments: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    extra = ["--processes", "2"] if engine == "processes" else []
    code = command.main([*arguments, "--out", str(out), "--engine", engine, *extra, "-q"])
    return code, capsys.readouterr().err


def both_engines(
    arguments: list[str], work: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both engines over the same inputs; both must succeed with the same exit code."""
    spark_code, spark_err = run("spark", arguments, work / "out-spark", capsys)
    processes_code, processes_err = run("processes", arguments, work / "out-processes", capsys)
    assert (spark_code, processes_code) == (2, 2), (spark_err, processes_err)
    return outputs(work / "out-spark"), outputs(work / "out-processes")


def desired_parquet(fleet: Fleet, path: Path) -> Path:
    """The fleet's declared topics as a Parquet table of declared-topic rows, in a shuffled order."""
    rows = [spec_to_row(s) for s in fleet.specs]
    random.Random(7).shuffle(rows)
    for row in rows:
        row["config"] = list(row["config"].items())
        if row["replica_assignment"] is not None:
            row["replica_assignment"] = list(row["replica_assignment"].items())
    pq.write_table(pa.Table.from_pylist(rows, schema=DESIRED_ARROW), path)
    return path


def test_the_arrow_forms_are_pysparks_own() -> None:
    assert CLUSTER_DRIFT_ARROW.equals(to_arrow_schema(CLUSTER_DRIFT_SCHEMA))
    assert FINDINGS_ARROW.equals(to_arrow_schema(FINDINGS_SCHEMA))
    assert DESIRED_ARROW.equals(to_arrow_schema(DESIRED_SCHEMA))


def test_the_small_fleet_from_manifests(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = small_fleet()
    manifests = write_manifests(fleet, tmp_path / "manifests")
    snapshots = write_snapshots(fleet, tmp_path / "snapshots")
    on_spark, in_processes = both_engines(
        ["--desired", str(manifests), "--snapshots", str(snapshots), "--seed", "3"], tmp_path, capsys
    )
    assert in_processes == on_spark
    kinds = {row["kind"] for row in in_processes["rows"]}
    assert {"missing", "unmanaged", "cluster_unobserved", "under_replicated", "offline"} <= kinds


@pytest.mark.parametrize("seed", [1, 2])
def test_random_fleets_from_parquet(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    fleet = random_fleet(seed, clusters=5, topics=40)
    desired = desired_parquet(fleet, tmp_path / "desired.parquet")
    snapshots = write_snapshots(fleet, tmp_path / "snapshots")
    on_spark, in_processes = both_engines(
        ["--desired", str(desired), "--snapshots", str(snapshots), "--seed", str(seed)], tmp_path, capsys
    )
    assert in_processes == on_spark
    assert in_processes["rows"]


# -- layouts: which files, which lines, which cluster ------------------------------------------------------------


def _lines(fleet: Fleet) -> dict[str, list[str]]:
    return {
        name: [
            json.dumps(r, separators=(",", ":"), sort_keys=True) for r in rows_from_cluster(name, s, TAKEN_AT)
        ]
        for name, s in fleet.states.items()
    }


def one_file_shuffled(fleet: Fleet, directory: Path) -> None:
    lines = [line for group in _lines(fleet).values() for line in group]
    random.Random(3).shuffle(lines)
    (directory / "fleet.jsonl").write_text("\n".join(lines) + "\n")


def clusters_split_across_files(fleet: Fleet, directory: Path) -> None:
    """Each cluster's header in one file and its topic rows over two others, one of them shared."""
    for name, lines in _lines(fleet).items():
        (directory / f"{name}-header.jsonl").write_text(lines[0] + "\n")
        (directory / f"{name}-a.jsonl").write_text("\n".join(lines[1::2]) + "\n")
        with (directory / "shared.jsonl").open("a") as shared:
            shared.write("".join(f"{line}\n" for line in lines[2::2]))


def crlf_blank_lines_and_separators_inside_values(fleet: Fleet, directory: Path) -> None:
    """CRLF and lone CR line ends, blank lines, and a topic whose config holds U+2028 and U+0085 unescaped (a
    line separator to ``str.splitlines``, not to Spark)."""
    for name, lines in _lines(fleet).items():
        row = json.loads(lines[-1])
        row["config"] = {**row["config"], "x.note": "a\u2028b\x85c"}
        lines[-1] = json.dumps(row, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        text = "\r\n".join(lines[:3]) + "\r\n\r\n" + "\r".join(lines[3:]) + "\n\n"
        (directory / f"{name}.jsonl").write_bytes(text.encode())


def compressed_nested_and_hidden(fleet: Fleet, directory: Path) -> None:
    """gzip and bzip2 files in partition directories, beside files Spark skips: hidden, underscored, copying."""
    for index, (name, lines) in enumerate(_lines(fleet).items()):
        text = ("\n".join(lines) + "\n").encode()
        folder = directory / f"cluster={name}"
        folder.mkdir()
        compress: Callable[[bytes], bytes] = gzip.compress if index % 2 == 0 else bz2.compress
        suffix = ".gz" if index % 2 == 0 else ".bz2"
        (folder / f"part-00000{suffix}").write_bytes(compress(text))
        (folder / f".part-00000{suffix}.crc").write_bytes(b"\x00garbage")
        (folder / "_SUCCESS").write_text("")
        (folder / "part-00001.jsonl._COPYING_").write_text("not json\n")
    hidden = directory / "_temporary"
    hidden.mkdir()
    (hidden / "leftover.jsonl").write_text("not json\n")


@pytest.mark.parametrize(
    "layout",
    [one_file_shuffled, clusters_split_across_files, crlf_blank_lines_and_separators_inside_values,
     compressed_nested_and_hidden],
)  # fmt: skip
def test_layouts_give_the_outputs_of_one_file_per_cluster(
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    layout: Callable[[Fleet, Path], None],
) -> None:
    fleet = small_fleet()
    manifests = write_manifests(fleet, tmp_path / "manifests")
    (tmp_path / "snapshots").mkdir()
    layout(fleet, tmp_path / "snapshots")
    on_spark, in_processes = both_engines(
        ["--desired", str(manifests), "--snapshots", str(tmp_path / "snapshots")], tmp_path, capsys
    )
    assert in_processes == on_spark
    plain = tmp_path / "plain"
    write_snapshots(fleet, plain / "snapshots")
    code, err = run("processes", ["--desired", str(manifests), "--snapshots", str(plain / "snapshots")],
                    plain / "out", capsys)  # fmt: skip
    assert code == 2, err
    expected = outputs(plain / "out")
    if layout is crlf_blank_lines_and_separators_inside_values:  # the config values differ on purpose
        assert in_processes["rows"] != expected["rows"]
    else:
        assert in_processes == expected


# -- bad input: the same refusal, nothing written ----------------------------------------------------------------


def _header_and_topics(name: str) -> list[str]:
    return _lines(Fleet([], {name: small_fleet().states[name]}))[name]


def not_json(directory: Path) -> None:
    (directory / "west.jsonl").write_text("\n".join([*_header_and_topics("west"), "{not json"]) + "\n")


def no_cluster(directory: Path) -> None:
    row = json.loads(_header_and_topics("west")[1])
    del row["cluster"]
    (directory / "west.jsonl").write_text("\n".join([*_header_and_topics("west"), json.dumps(row)]) + "\n")


def cluster_of_another_type(directory: Path) -> None:
    row = json.loads(_header_and_topics("west")[1])
    row["cluster"] = 5
    (directory / "west.jsonl").write_text("\n".join([*_header_and_topics("west"), json.dumps(row)]) + "\n")


def not_utf8(directory: Path) -> None:
    lines = _header_and_topics("west")
    broken = lines[1].replace('"w1"', '"w\\u00e9"').encode().replace(b"\\u00e9", b"\xe9")
    (directory / "west.jsonl").write_bytes((lines[0] + "\n").encode() + broken + b"\n")


def two_snapshots(directory: Path) -> None:
    lines = _header_and_topics("west")
    (directory / "west.jsonl").write_text("\n".join(lines) + "\n")
    (directory / "west-again.jsonl").write_text("\n".join(lines) + "\n")


def no_header(directory: Path) -> None:
    (directory / "west.jsonl").write_text("\n".join(_header_and_topics("west")[1:]) + "\n")


def another_time(directory: Path) -> None:
    lines = _header_and_topics("west")
    row = json.loads(lines[1])
    row["taken_at"] = "2020-01-01T00:00:00+00:00"
    (directory / "west.jsonl").write_text("\n".join([lines[0], json.dumps(row)]) + "\n")


@pytest.mark.parametrize(
    "bad", [not_json, no_cluster, cluster_of_another_type, not_utf8, two_snapshots, no_header, another_time]
)
def test_bad_snapshots_are_refused_alike_and_nothing_is_written(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: Callable[[Path], None]
) -> None:
    manifests = write_manifests(small_fleet(), tmp_path / "manifests")
    (tmp_path / "snapshots").mkdir()
    bad(tmp_path / "snapshots")
    arguments = ["--desired", str(manifests), "--snapshots", str(tmp_path / "snapshots")]
    spark_code, spark_err = run("spark", arguments, tmp_path / "out-spark", capsys)
    processes_code, processes_err = run("processes", arguments, tmp_path / "out-processes", capsys)
    assert (spark_code, processes_code) == (1, 1)
    assert processes_err == spark_err
    assert processes_err.startswith("kto drift: ")
    assert "west" in processes_err
    assert not (tmp_path / "out-processes").exists()
    assert not (tmp_path / "out-spark").exists()


def test_a_compression_only_spark_reads_is_refused_by_name(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifests = write_manifests(small_fleet(), tmp_path / "manifests")
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "west.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    code, err = run("processes", ["--desired", str(manifests), "--snapshots", str(tmp_path / "snapshots")],
                    tmp_path / "out", capsys)  # fmt: skip
    assert code == 1
    assert err == (
        f"kto drift: {tmp_path / 'snapshots' / 'west.jsonl.zst'}: .zst files are read by the Spark engine only "
        "(kto drift --engine spark)\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"cluster": [1, 2], "topic": ["a", "b"]},
         "column partitions is null (or missing) in 2 of 2 rows: every declared topic needs cluster, topic, "
         "partitions, replicas"),
        ({"cluster": ["east"], "topic": ["a"], "partitions": [3], "replicas": [3], "mode": ["Sometimes"]},
         "column mode holds 'Sometimes': must be one of Apply, Plan"),
    ],
)  # fmt: skip
def test_a_table_that_is_not_declared_topics_is_refused_alike(
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    columns: dict[str, list[object]],
    message: str,
) -> None:
    snapshots = write_snapshots(small_fleet(), tmp_path / "snapshots")
    table = tmp_path / "wrong.parquet"
    pq.write_table(pa.table(columns), table)
    arguments = ["--desired", str(table), "--snapshots", str(snapshots)]
    for engine in ("spark", "processes"):
        code, err = run(engine, arguments, tmp_path / f"out-{engine}", capsys)
        assert code == 1
        assert err == f"kto drift: {table}: {message}\n"
        assert not (tmp_path / f"out-{engine}").exists()


# -- live reads, choosing the engine ----------------------------------------------------------------------------


@pytest.mark.zookeeper
def test_live_reads_in_processes_equal_spark_tasks(
    spark: SparkSession,
    two_clusters: dict[str, tuple[LocalZooKeeper, KazooClient]],  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    inventory, desired = live_inputs(two_clusters, tmp_path)
    arguments = ["--desired", str(desired), "--clusters", str(inventory), "--zookeeper-timeout", "2"]
    on_spark, in_processes = both_engines(arguments, tmp_path, capsys)
    assert in_processes == on_spark
    kinds = {row["kind"] for row in in_processes["rows"]}
    assert {"partitions_behind", "missing", "unmanaged", "cluster_unobserved"} <= kinds
    saved = sorted(
        p.relative_to(tmp_path / "out-processes") for p in (tmp_path / "out-processes").rglob("*.jsonl")
    )
    assert [str(p) for p in saved] == [
        "snapshots/cluster=blue/part-00000.jsonl",
        "snapshots/cluster=green/part-00000.jsonl",
    ]


@pytest.mark.zookeeper
def test_a_fleet_mixing_live_reads_and_a_snapshot_on_spark_is_the_process_engines(
    spark: SparkSession,
    two_clusters: dict[str, tuple[LocalZooKeeper, KazooClient]],  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Spark's tasks read the live clusters, the given snapshot file is linked in beside them, and the outputs are
    those of the process engine over the same fleet."""
    inventory, desired = live_inputs(two_clusters, tmp_path)
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    red = rows_from_cluster("red", read_cluster(two_clusters["blue"][1], partition_states=True), TAKEN_AT)
    (snapshots / "red.jsonl").write_text("".join(json.dumps(row) + "\n" for row in red))
    with desired.open("a") as more:
        more.write(
            "".join(f"---\n{yaml.safe_dump(topic('red', name, 3, 3))}" for name in ("orders", "refunds"))
        )
    arguments = ["--desired", str(desired), "--clusters", str(inventory), "--snapshots", str(snapshots),
                 "--connect-timeout", "2"]  # fmt: skip
    on_spark, in_processes = both_engines(arguments, tmp_path, capsys)
    assert in_processes == on_spark
    reads = {c["name"]: c["read"] for c in on_spark["summary"]["clusters"]}
    assert reads["red"] == {"from": "snapshot", "through": "ZooKeeper", "stage": None}
    assert reads["blue"] == reads["green"] == {"from": "live", "through": "ZooKeeper", "stage": None}
    found = {(r["cluster"], r["topic"], r["kind"]) for r in on_spark["rows"]}
    assert {("red", "refunds", "missing"), ("gone", None, "cluster_unobserved")} <= found


def test_auto_chooses_spark_when_asked_and_processes_otherwise(spark: SparkSession, tmp_path: Path) -> None:
    def chosen(*arguments: str) -> str:
        parsed = command.build_parser().parse_args(
            ["--desired", "d", "--snapshots", "s", "--out", "o", *arguments]
        )
        return command.choose_engine(parsed)

    assert chosen() == "spark"  # this program has a session running: the test session
    assert chosen("--master", "local[1]") == "spark"
    assert chosen("--conf", "spark.driver.memory=1g") == "spark"
    assert chosen("--processes", "3") == "processes"
    assert chosen("--engine", "processes") == "processes"
    with pytest.raises(ValueError, match="--master and --conf are Spark settings: they need --engine spark"):
        chosen("--engine", "processes", "--master", "local[1]")
    with pytest.raises(ValueError, match="--processes sizes the processes engine"):
        chosen("--engine", "spark", "--processes", "2")
    with pytest.raises(SystemExit):
        chosen("--processes", "0")


def test_kto_drift_as_a_process_runs_in_processes_without_spark(tmp_path: Path) -> None:
    """``kto drift`` as a user types it, with neither a master nor a session: no JVM is started."""
    fleet = small_fleet()
    manifests = write_manifests(fleet, tmp_path / "manifests")
    snapshots = write_snapshots(fleet, tmp_path / "snapshots")
    kto = Path(sys.executable).parent / "kto"
    done = subprocess.run(
        [str(kto), "drift", "--desired", str(manifests), "--snapshots", str(snapshots), "--out", str(tmp_path / "out"),
         "--processes", "2"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "2 processes on this machine" in done.stderr
    assert "Spark" not in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["inputs"]["engine"] == "2 processes"
    assert "master" not in summary["inputs"]
