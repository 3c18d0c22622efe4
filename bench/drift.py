"""Fleet drift at 10k, 100k and 1M topics: the Spark job against the single-process Python planner.

Each size is a generated fleet (1M: 200 clusters x 5,000 topics; 12 partitions on average, replication factor 3,
12 brokers in 3 racks, ~5 % of topics drifting in every way the job classifies, one cluster in ten with a new,
empty broker). The inputs -- ``kto snapshot`` JSON-lines files and a Parquet table of declared-topic rows -- are
written once under ``--data`` and reused by later runs.

Each size is then run twice, each in a child process whose whole process tree (driver, JVM, Python workers) is
sampled for peak resident memory:

- **spark**: ``run_drift`` on ``--master`` (default ``local[2]``), the same job ``kto drift`` runs; wall time
  excludes the JVM's start (printed apart);
- **single**: one Python process doing the same work with the same code paths (``planning.plan_cluster``, which
  is the engine's ``plan`` per cluster, and ``rules.cluster_findings``), writing the same plans, Parquet and report.

Prints a table (wall time, findings, findings/s, peak memory, Spark/single ratio) and, with ``--profile``, where
the time goes: the Spark job's phases and a cProfile of the Python plan stage on one cluster; with ``--warm``, the
Spark job's wall time when run a second time in the same JVM (what is left once the JIT has warmed up).

Target: 1M topics <= 120 s with local[2] on the 2-core machine, and Spark faster than the single process from 100k
topics up. Run: ``.venv/bin/python bench/drift.py [--sizes 10k,100k,1m] [--profile] [--warm]``.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import gc
import io
import json
import multiprocessing
import os
import pstats
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from topic_operator.drift.desired_rows import spec_from_row
from topic_operator.drift.kinds import Finding, Severity
from topic_operator.drift.outputs import ClusterSummary, plan_file_name, summary_document, summary_text
from topic_operator.drift.planning import plan_cluster
from topic_operator.drift.report import ReportData, render_report
from topic_operator.drift.rules import broker_loads, cluster_findings
from topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from topic_operator.model import Broker, ClusterSpec, ClusterState, PartitionState, TopicState
from topic_operator.snapshot_rows import rows_from_cluster, rows_to_clusters

TARGET_1M_SECONDS = 120.0
BROKERS = 12
RACKS = 3
TAKEN_AT = "2026-01-05T10:00:00+00:00"
PARTITION_CHOICES = (3, 6, 12, 12, 18, 21)  # mean 12
CONFIGS = (
    ("retention.ms", ("86400000", "259200000", "604800000")),
    ("cleanup.policy", ("delete", "compact", "compact,delete")),
    ("min.insync.replicas", ("2",)),
    ("segment.bytes", ("536870912", "1073741824")),
    ("max.message.bytes", ("1048588", "2097152")),
)


@dataclass(frozen=True)
class Size:
    name: str
    clusters: int
    topics: int

    @property
    def total(self) -> int:
        return self.clusters * self.topics


SIZES = {
    "10k": Size("10k", 20, 500),
    "100k": Size("100k", 50, 2_000),
    "1m": Size("1m", 200, 5_000),
}


# -- generating the fleet -------------------------------------------------------------------------------------------


def _cluster(size: Size, number: int) -> tuple[str, ClusterState, list[dict[str, Any]]]:
    """One cluster's snapshot state and declared rows; ~5 % of topics drift."""
    rng = random.Random(f"{size.name}-{number}")
    name = f"kafka-{number:03d}"
    brokers = {i: Broker(i, f"rack-{i % RACKS}") for i in range(BROKERS)}
    if number % 10 == 3:
        brokers[BROKERS] = Broker(BROKERS, f"rack-{BROKERS % RACKS}")  # a new broker, nothing moved to it yet
    metadata = [BrokerMetadata(i, f"rack-{i % RACKS}") for i in range(BROKERS)]
    topics: dict[str, TopicState] = {}
    declared: list[dict[str, Any]] = []
    marked: set[str] = set()
    for index in range(size.topics):
        topic = f"team-{index % 40:02d}.events-{index:05d}"
        partitions = rng.choice(PARTITION_CHOICES)
        placed = assign_replicas_to_brokers(metadata, partitions, 3, rng=rng)
        assignment = {p: tuple(r) for p, r in placed.items()}
        config = {key: rng.choice(values) for key, values in rng.sample(CONFIGS, rng.randint(1, 4))}
        states = {p: PartitionState(r[0], r, 3, 7) for p, r in assignment.items()}
        want_partitions, want_replicas, want_config = partitions, 3, dict(config)
        exists, is_declared, is_marked = True, True, False
        roll = rng.random() * 100
        if roll < 1.0:
            exists = False
        elif roll < 2.0:
            is_declared = False
        elif roll < 3.0:
            want_partitions = partitions + rng.choice((3, 6))
        elif roll < 3.25:
            want_partitions = max(1, partitions // 2)
        elif roll < 3.5:
            want_replicas = 2
        elif roll < 4.5:
            want_config = {**config, "retention.ms": "1209600000"}
        elif roll < 4.75:
            is_marked = True
        elif roll < 5.25:
            p = rng.randrange(partitions)
            states[p] = PartitionState(assignment[p][0], assignment[p][:2], 4, 7)
        elif roll < 5.35:
            p = rng.randrange(partitions)
            states[p] = PartitionState(-1, (), 4, 7)
        elif roll < 5.55:
            assignment[0] = (0, 3, 6)  # all on rack-0
            states[0] = PartitionState(0, (0, 3, 6), 3, 7)
        if exists:
            topics[topic] = TopicState(
                name=topic,
                partitions=assignment,
                topic_id="AAAAAAAAAAAAAAAAAAAAAQ",
                config=config,
                topic_znode_version=1,
                config_znode_version=0,
                marked_for_deletion=is_marked,
                partition_states=states,
            )
            if is_marked:
                marked.add(topic)
        if is_declared:
            declared.append(
                {
                    "cluster": name,
                    "topic": topic,
                    "partitions": want_partitions,
                    "replicas": want_replicas,
                    "config": want_config,
                    "replica_assignment": None,
                    "rack_aware_mode": "Enforced",
                    "deletion_policy": "Retain",
                    "mode": "Apply",
                    "source": f"teams/{index % 40:02d}/{topic}.yaml#1",
                }
            )
    state = ClusterState("AAAAAAAAAAAAAAAAAAAAAQ", brokers, topics, 0, marked_for_deletion=frozenset(marked))
    return name, state, declared


def _write_cluster(job: tuple[Size, int, str]) -> list[dict[str, Any]]:
    size, number, directory = job
    name, state, declared = _cluster(size, number)
    lines = (
        json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n"
        for r in rows_from_cluster(name, state, TAKEN_AT)
    )
    Path(directory, f"{name}.jsonl").write_text("".join(lines), encoding="utf-8")
    return declared


def _desired_table(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    schema = pa.schema(
        [
            ("cluster", pa.string()),
            ("topic", pa.string()),
            ("partitions", pa.int32()),
            ("replicas", pa.int32()),
            ("config", pa.map_(pa.string(), pa.string())),
            ("replica_assignment", pa.map_(pa.string(), pa.list_(pa.int32()))),
            ("rack_aware_mode", pa.string()),
            ("deletion_policy", pa.string()),
            ("mode", pa.string()),
            ("source", pa.string()),
        ]
    )
    columns = {field.name: [row[field.name] for row in rows] for field in schema}
    columns["config"] = [list(c.items()) for c in columns["config"]]
    return pa.table(columns, schema=schema)


def ensure_fleet(size: Size, root: Path) -> Path:
    """Write the fleet once; a marker file with its parameters says it is complete."""
    import pyarrow.parquet as pq

    directory = root / size.name
    marker = directory / "COMPLETE"
    expected = json.dumps({"clusters": size.clusters, "topics": size.topics, "version": 3})
    if marker.exists() and marker.read_text() == expected:
        return directory
    snapshots = directory / "snapshots"
    snapshots.mkdir(parents=True, exist_ok=True)
    for old in snapshots.glob("*.jsonl"):
        old.unlink()
    started = time.perf_counter()
    print(
        f"generating the {size.name} fleet ({size.clusters} clusters x {size.topics} topics) in {directory} ..."
    )
    jobs = [(size, n, str(snapshots)) for n in range(size.clusters)]
    with multiprocessing.Pool(min(2, os.cpu_count() or 1)) as pool:
        declared = [row for rows in pool.map(_write_cluster, jobs, chunksize=1) for row in rows]
    pq.write_table(_desired_table(declared), directory / "desired.parquet")
    marker.write_text(expected)
    print(f"  generated in {time.perf_counter() - started:.1f} s")
    return directory


# -- the two runs (each in a child process) --------------------------------------------------------------------------


def run_spark(directory: Path, out: Path, master: str, warm: bool = False) -> dict[str, Any]:
    from topic_operator.drift.inputs import load_desired, read_snapshots
    from topic_operator.drift.job import DriftInputs, run_drift
    from topic_operator.drift.progress import Progress
    from topic_operator.drift.session import start_session

    started = time.perf_counter()
    session = start_session(master, {"spark.driver.memory": "6g"})
    spark = session.spark
    startup = time.perf_counter() - started
    progress = Progress(sys.stderr, spark=spark, interval=10.0)
    started = time.perf_counter()
    desired = load_desired(spark, [str(directory / "desired.parquet")])
    inputs = DriftInputs(desired=desired.frame, snapshots=read_snapshots(spark, directory / "snapshots"))
    result = run_drift(spark, inputs, out, progress=progress)
    wall = time.perf_counter() - started
    warm_wall = None
    if warm:  # the same job again in the same JVM and Python workers: what is left without warming up
        started = time.perf_counter()
        run_drift(spark, inputs, out, progress=Progress(None))
        warm_wall = time.perf_counter() - started
    spark.stop()
    return {
        "wall": wall,
        "warm": warm_wall,
        "startup": startup,
        "findings": result.findings,
        "phases": result.timings,
        "python_plan_seconds": result.summary["inputs"]["python_plan_seconds"],
    }


def _desired_by_cluster(path: Path) -> dict[str, list[Any]]:
    import pyarrow.parquet as pq

    by_cluster: dict[str, list[Any]] = {}
    for row in pq.read_table(path).to_pylist():
        row["config"] = dict(row["config"] or [])
        if row["replica_assignment"] is not None:
            row["replica_assignment"] = dict(row["replica_assignment"])
        by_cluster.setdefault(row["cluster"], []).append(spec_from_row(row))
    return by_cluster


def run_single(directory: Path, out: Path) -> dict[str, Any]:
    """The same work in one process: plan and classify each cluster, write plans, Parquet, summary and report."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    desired = _desired_by_cluster(directory / "desired.parquet")
    (out / "plans").mkdir(parents=True, exist_ok=True)
    findings: list[Finding] = []
    summaries: list[ClusterSummary] = []
    loads = []
    gc.disable()  # as the Spark job's plan tasks do (see job._plan_group_function): a fair comparison
    for path in sorted((directory / "snapshots").glob("*.jsonl")):
        with path.open(encoding="utf-8") as lines:
            [(name, state)] = rows_to_clusters(orjson.loads(line) for line in lines).items()
        specs = desired.get(name, [])
        result = plan_cluster(specs, state, ClusterSpec(name, ""), seed=0)
        (out / "plans" / plan_file_name(name)).write_text(result.document, encoding="utf-8")
        found = cluster_findings(name, specs, state, result.facts)
        findings += found
        loads += broker_loads(name, state)
        summary = ClusterSummary(
            name, True, len(specs), len(state.topics), len(state.brokers), RACKS, TAKEN_AT
        )
        summary.plan = dict(Counter(t.status.value for t in result.plan.topics))
        summary.findings = dict(Counter(f.kind for f in found))
        summary.severities = dict(Counter(f.severity for f in found))
        summaries.append(summary)
    gc.enable()
    columns = list(zip(*(f.as_tuple() for f in findings), strict=True)) if findings else [[]] * 9
    names = ["cluster", "topic", "kind", "field", "desired", "actual", "action", "severity", "message"]
    pq.write_table(pa.table(dict(zip(names, columns, strict=True))), out / "drift.parquet")
    document = summary_document(
        summaries,
        generated_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        seed=0,
        inputs={"desired": str(directory / "desired.parquet")},
        manifest_errors=[],
        warnings=[],
        timings={},
    )
    (out / "summary.json").write_text(summary_text(document), encoding="utf-8")
    rank = {s.value: s.rank for s in Severity}
    sample: list[Finding] = []
    for summary in summaries:
        own = sorted(
            (f for f in findings if f.cluster == summary.name),
            key=lambda f: (rank[f.severity], *f.sort_key()),
        )
        sample += own[:50]
    report = render_report(ReportData(document, summaries, sample, loads))
    (out / "report.html").write_text(report, encoding="utf-8")
    return {"wall": time.perf_counter() - started, "findings": len(findings)}


# -- measuring -------------------------------------------------------------------------------------------------------


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants, from /proc."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    pending += [int(c) for c in children.read().split()]
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def measured(argv: list[str]) -> tuple[dict[str, Any], int]:
    """Run this script as a child with ``argv``; its JSON result and the peak RSS of its process tree."""
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        child = subprocess.Popen([sys.executable, __file__, *argv, "--result", result.name])
        peak = 0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.25):
                peak = max(peak, _tree_rss(child.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = child.wait()
        done.set()
        sampler.join()
        if code != 0:
            raise SystemExit(f"bench child {' '.join(argv)} failed with exit code {code}")
        return json.loads(Path(result.name).read_text()), peak


def profile_plan_stage(directory: Path) -> str:
    """cProfile of the Python stage on the first cluster: where a plan task's time goes."""
    from topic_operator.drift.planning import PLANNED_TOPIC_FIELDS
    from topic_operator.snapshot_rows import cluster_from_rows

    path = sorted((directory / "snapshots").glob("*.jsonl"))[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    desired = _desired_by_cluster(directory / "desired.parquet")
    rows = [orjson.loads(line) for line in lines]
    first = rows[0]
    name = first["cluster"]
    texts = [
        orjson.dumps({k: r.get(k) for k in PLANNED_TOPIC_FIELDS}) for r in rows if r["topic"] is not None
    ]
    profiler = cProfile.Profile()
    profiler.enable()
    state = cluster_from_rows(first, [orjson.loads(t) for t in texts])
    plan_cluster(desired[name], state, ClusterSpec(name, ""), seed=0)
    profiler.disable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(18)
    return stream.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10k,100k,1m", help="comma-separated subset of 10k,100k,1m")
    parser.add_argument(
        "--data", default=os.path.join(tempfile.gettempdir(), "kto-drift-bench"), help="where inputs are kept"
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--skip-single", action="store_true", help="only the Spark job")
    parser.add_argument(
        "--warm", action="store_true", help="also time a second run in the same JVM (no JIT warm-up)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="print phases and a cProfile of the plan stage"
    )
    parser.add_argument("--run", choices=("spark", "single"), help=argparse.SUPPRESS)
    parser.add_argument("--size", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.data)
    if args.run is not None:  # a child: one measured run
        directory = root / args.size
        out = directory / f"out-{args.run}"
        figures = (
            run_spark(directory, out, args.master, args.warm)
            if args.run == "spark"
            else run_single(directory, out)
        )
        Path(args.result).write_text(json.dumps(figures))
        return 0
    chosen = [SIZES[s.strip().lower()] for s in args.sizes.split(",") if s.strip()]
    rows = []
    for size in chosen:
        ensure_fleet(size, root)
        spark, spark_peak = measured(
            ["--run", "spark", "--size", size.name, "--master", args.master, "--data", str(root)]
            + (["--warm"] if args.warm else [])
        )
        single, single_peak = (
            (None, 0)
            if args.skip_single
            else measured(["--run", "single", "--size", size.name, "--data", str(root)])
        )
        rows.append((size, spark, spark_peak, single, single_peak))
        if args.profile:
            print(
                f"\n{size.name}: Spark phases (s): "
                + ", ".join(f"{k} {v:.1f}" for k, v in spark["phases"].items())
            )
            print(f"{size.name}: Python plan stage, summed over tasks: {spark['python_plan_seconds']:.1f} s")
    print(
        f"\nSpark master {args.master}; {os.cpu_count()} cores. Wall time excludes the JVM's start (shown apart)."
    )
    header = f"{'topics':>8} {'clusters':>8} {'findings':>9} | {'spark s':>8} {'start s':>7} {'findings/s':>11} {'peak GiB':>8} | {'single s':>8} {'findings/s':>11} {'peak GiB':>8} | {'ratio':>6}"
    print(header)
    print("-" * len(header))
    failed = False
    for size, spark, spark_peak, single, single_peak in rows:
        line = (
            f"{size.total:>8,} {size.clusters:>8} {spark['findings']:>9,} | {spark['wall']:>8.1f} {spark['startup']:>7.1f} "
            f"{spark['findings'] / spark['wall']:>11,.0f} {spark_peak / 2**30:>8.2f} | "
        )
        if single is not None:
            if single["findings"] != spark["findings"]:
                print(
                    f"MISMATCH at {size.name}: spark {spark['findings']} findings, single {single['findings']}"
                )
                failed = True
            line += f"{single['wall']:>8.1f} {single['findings'] / single['wall']:>11,.0f} {single_peak / 2**30:>8.2f} | {single['wall'] / spark['wall']:>5.2f}x"
        print(line)
        if spark.get("warm") is not None:
            print(f"{'':>8} the same job again in the warm JVM: {spark['warm']:.1f} s")
        if size.name == "1m" and spark["wall"] > TARGET_1M_SECONDS:
            print(f"1M topics took {spark['wall']:.1f} s, over the {TARGET_1M_SECONDS:.0f} s target")
    if args.profile and chosen:
        print("\nThe Python plan stage on one cluster (cProfile, cumulative):")
        print(profile_plan_stage(root / chosen[-1].name))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
