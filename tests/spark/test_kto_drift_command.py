"""``kto drift`` end to end on a tiny fleet: manifests and snapshot files in, every output written, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from drift_fleets import Fleet, small_fleet, topic_manifest, write_snapshots
from pyspark.sql import SparkSession

from topic_operator.cli.main import main as kto_main
from topic_operator.drift.command import build_parser, main, register
from topic_operator.drift.job import CLUSTER_PHASE


def write_manifests(fleet: Fleet, directory: Path) -> Path:
    """Every declared topic without a hand-made assignment, as KafkaTopic YAML (one file per cluster)."""
    directory.mkdir(parents=True)
    for name in sorted({s.cluster for s in fleet.specs}):
        documents = [topic_manifest(s) for s in fleet.specs_of(name) if s.replica_assignment is None]
        (directory / f"{name}.yaml").write_text(yaml.safe_dump_all(documents), encoding="utf-8")
    return directory


def test_drift_command_writes_every_output(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = small_fleet()
    manifests = write_manifests(fleet, tmp_path / "manifests")
    snapshots = write_snapshots(fleet, tmp_path / "snapshots")
    out = tmp_path / "out"
    code = main(
        ["--desired", str(manifests), "--snapshots", str(snapshots), "--out", str(out), "--seed", "3"]
    )
    captured = capsys.readouterr()
    assert code == 2  # drift found
    assert captured.out.startswith("drift: ")
    assert "in 3 clusters -> " in captured.out
    assert f"{CLUSTER_PHASE} ..." in captured.err  # progress while it runs
    assert "writing drift.parquet: " in captured.err
    assert {p.name for p in out.iterdir()} >= {"drift.parquet", "plans", "summary.json", "report.html"}
    kinds = {r.kind for r in spark.read.parquet(str(out / "drift.parquet")).collect()}
    assert "missing" in kinds
    assert "plan_rejected" not in kinds  # pinned, the only one, has a replica assignment: not in the YAML
    # The plan file is what kto plan prints for the same files, less its manifest errors: the manifests' sources
    # (file#document) and the writer the snapshot says included.
    capsys.readouterr()
    assert kto_main([
        "plan", "-f", str(manifests / "east.yaml"), "--cluster", "east", "--kafka-version", "3.4",
        "--snapshot", str(snapshots / "east.jsonl"), "--seed", "3", "-o", "json",
    ]) == 1  # a rejection among the changes, as the drift job finds  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    printed.pop("manifest_errors")
    assert printed["writes"] is not None
    assert json.loads((out / "plans" / "east.json").read_text()) == printed
    assert spark.sparkContext._jsc is not None  # the test session was used, and left running


def test_unreadable_snapshots_fail_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spark: SparkSession
) -> None:
    manifests = write_manifests(small_fleet(), tmp_path / "manifests")
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    (snapshots / "east.jsonl").write_text('{"schema": 3, "cluster": "east", "topic": null}\nnot json\n')
    code = main(
        ["--desired", str(manifests), "--snapshots", str(snapshots), "--out", str(tmp_path / "out"), "-q"]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("kto drift: 2 snapshot lines cannot be read")
    assert "east.jsonl" in err


def test_an_empty_snapshot_directory_is_refused_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "snapshots").mkdir()
    code = main(
        ["--desired", str(tmp_path), "--snapshots", str(tmp_path / "snapshots"), "--out", str(tmp_path / "o")]
    )
    assert code == 1
    assert "has no files" in capsys.readouterr().err


def test_registers_as_a_kto_subcommand() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="kto")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "drift",
            "--desired",
            "a",
            "b",
            "--clusters",
            "c.yaml",
            "--out",
            "o",
            "--master",
            "spark://127.0.0.1:7077",
        ]
    )
    assert args.desired == ["a", "b"]
    assert args.clusters == ["c.yaml"]
    assert args.master == "spark://127.0.0.1:7077"
    # A fleet may mix snapshots and live reads (which clusters each names is checked when the run starts).
    both = build_parser().parse_args(["--desired", "a", "--snapshots", "s", "--clusters", "c", "--out", "o"])
    assert (both.snapshots, both.clusters) == ("s", ["c"])
