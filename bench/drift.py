"""Fleet drift at 10k, 100k and 1M topics: ``kto drift`` against its floor and against one Python process.

Each size is a generated fleet (1M: 200 clusters x 5,000 topics; 12 partitions on average, replication factor 3,
12 brokers in 3 racks, ~5 % of topics drifting in every way the job classifies, one cluster in ten with a new,
empty broker). The inputs -- ``kto snapshot`` JSON-lines files and a Parquet table of declared-topic rows -- are
written once under ``--data`` and reused by later runs.

Each size is then measured four ways in the same run, each a process of its own timed from its start to its exit
(what a user waits for), with its whole process tree (driver, JVM, Python workers) sampled for peak resident
memory:

- **floor**: what any Spark job pays before doing anything of its own: start a ``--master`` session (default
  ``local[2]``, the settings ``kto drift`` uses) in a fresh process and read the snapshot files once
  (``spark.read.text(...).count()``);
- **kto drift**: the real command as a user types it, ``kto drift --desired desired.parquet --snapshots ...
  --out ...``: the default engine, which with no master is a pool of processes, one per core;
- **on Spark**: the same with ``--engine spark --master ...`` (default ``local[2]``): the Spark engine;
- **single**: one Python process doing the same work with the same code: ``cluster_drift.cluster_drift`` (what
  each of the job's Python tasks runs: the snapshot lines read, the engine's ``plan``, the rules) on each cluster
  in turn, writing the same plans, Parquet, summary and report. Its outputs are compared with ``kto drift``'s:
  the same findings, the same plan files and the same summary totals, or the bench fails (both engines' are).

``--repeat N`` measures each of the four N times (interleaved, so that a neighbour's load falls on all of them)
and keeps the best of each: the machine is shared. Prints a table (wall times, each ``kto drift`` / floor and
single / ``kto drift``, peak memory; ``--skip-spark`` and ``--skip-single`` leave those runs out) and, with ``--profile``, where ``kto drift``'s time goes: the start (process,
imports, JVM and session), each phase of the job from ``summary.json``, the Python plan stage summed over its
tasks, and a cProfile of the plan stage on one cluster. ``--warm`` also runs the job twice inside one process
(``run_drift``), to show what is left once the JVM's JIT has warmed up.

Targets, held by ``kto drift`` as a user runs it: 10k topics <= 1.5x the floor; 100k <= 2x the floor
and no slower than one process; 1M <= 60 s and <= 4 GiB peak. And since the process engine streams its plans
(each worker writes its clusters' plans, the driver holds no plan and frees each cluster's declared rows once its
task is done): 1M <= 30 s and <= 1 GiB peak, whole process tree. The table says which are met, and the line
under it each one that is not. Run: ``.venv/bin/python bench/drift.py [--sizes 10k,100k,1m] [--repeat 2] [--profile]``.
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

from topic_operator.drift.arrow_schemas import DESIRED_ARROW
from topic_operator.drift.arrow_stage import declared_specs
from topic_operator.drift.cluster_drift import cluster_drift
from topic_operator.drift.declared_table import read_declared_table
from topic_operator.drift.kinds import FINDING_COLUMNS, Finding
from topic_operator.drift.outputs import (
    ClusterSummary,
    new_run_id,
    plan_file_name,
    summary_document,
    summary_text,
)
from topic_operator.drift.report import ReportData, render_report
from topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from topic_operator.model import Broker, ClusterState, PartitionState, TopicState
from topic_operator.snapshot_rows import rows_from_cluster

TARGET_10K_FLOORS = 1.5
"""``kto drift`` at 10k topics within this many floors."""
TARGET_100K_FLOORS = 2.0
"""``kto drift`` at 100k topics within this many floors, and no slower than the single process."""
TARGET_1M_SECONDS = 60.0
TARGET_1M_PEAK_GIB = 4.0
STREAMED_1M_SECONDS = 30.0
"""``kto drift`` at 1M topics within this many seconds, once its plans are streamed (the later target)."""
STREAMED_1M_PEAK_GIB = 1.0
"""And within this much resident memory, the peak of its whole process tree."""
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
    """The declared rows as the job's own declared-topic table (``DESIRED_ARROW``), a column left out of a row
    written as null."""
    import pyarrow as pa

    columns = {field.name: [row.get(field.name) for row in rows] for field in DESIRED_ARROW}
    columns["config"] = [list(c.items()) for c in columns["config"]]
    return pa.table(columns, schema=DESIRED_ARROW)


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


# -- what each child process runs ------------------------------------------------------------------------------------


def run_floor(directory: Path, master: str) -> dict[str, Any]:
    """The floor: the session ``kto drift`` starts (``start_session`` with no settings of its own, as the command
    passes none) and one read of every snapshot line. Nothing of the job itself."""
    from topic_operator.drift.session import start_session

    session = start_session(master, {})
    lines = session.spark.read.text(str(directory / "snapshots")).count()
    session.spark.stop()
    return {"lines": lines}


def kto_drift_command(directory: Path, out: Path, master: str | None) -> list[str]:
    """``kto drift`` exactly as a user types it for the generated fleet (the console script of this venv):
    with no master, the default engine (``auto``: a pool of processes, one per core); with one, on Spark."""
    kto = Path(sys.executable).parent / "kto"
    spark = ["--engine", "spark", "--master", master] if master is not None else []
    return [str(kto), "drift", *spark, "--desired", str(directory / "desired.parquet"),
            "--snapshots", str(directory / "snapshots"), "--out", str(out), "-q"]  # fmt: skip


def run_warm(directory: Path, out: Path, master: str) -> dict[str, Any]:
    """``run_drift`` twice in one process: the second run shows what is left once the JVM's JIT is warm."""
    from topic_operator.drift.inputs import load_desired, read_snapshots
    from topic_operator.drift.job import DriftInputs, run_drift
    from topic_operator.drift.progress import Progress
    from topic_operator.drift.session import start_session

    session = start_session(master, {})
    spark = session.spark
    walls = []
    for _ in range(2):
        started = time.perf_counter()
        desired = load_desired(spark, [str(directory / "desired.parquet")])
        inputs = DriftInputs(desired=desired.frame, snapshots=read_snapshots(spark, directory / "snapshots"))
        run_drift(spark, inputs, out, progress=Progress(None))
        walls.append(time.perf_counter() - started)
    spark.stop()
    return {"cold": walls[0], "warm": walls[1]}


def _desired_by_cluster(path: Path) -> dict[str, list[Any]]:
    """The declared-topic table as both engines read it (``declared_table.read_declared_table``, a column an older
    table lacks read as nulls) and the Spark job's Python stage converts it (``arrow_stage.declared_specs``)."""
    by_cluster: dict[str, list[Any]] = {}
    for spec in declared_specs(read_declared_table(str(path))):
        by_cluster.setdefault(spec.cluster, []).append(spec)
    return by_cluster


def run_single(directory: Path, out: Path) -> dict[str, Any]:
    """The same work in one process with the same code: ``cluster_drift`` (what each of the Spark job's Python
    tasks runs) on each cluster's snapshot file and declared topics, then the same plans, Parquet, summary and
    report."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    desired = _desired_by_cluster(directory / "desired.parquet")
    (out / "plans").mkdir(parents=True, exist_ok=True)
    findings: list[Finding] = []
    summaries: list[ClusterSummary] = []
    loads = []
    sample: list[Finding] = []
    gc.disable()  # as the Spark job's Python tasks do (see arrow_stage.run_cluster): a fair comparison
    for path in sorted((directory / "snapshots").glob("*.jsonl")):
        name = path.stem  # the generated fleet has one file per cluster, named after it
        texts = path.read_text(encoding="utf-8").splitlines()
        drift = cluster_drift(name, desired.get(name, []), texts, [str(path)] * len(texts), None, seed=0)
        if drift.document is None:
            raise SystemExit(f"{path}: {drift.problems}")
        (out / "plans" / plan_file_name(name)).write_text(drift.document, encoding="utf-8")
        findings += drift.findings
        loads += drift.loads
        sample += drift.sample(50)
        summary = ClusterSummary(
            name, True, drift.declared, drift.topics, drift.brokers, drift.racks, drift.taken_at
        )
        summary.plan = dict(drift.plan)
        summary.findings = dict(Counter(f.kind for f in drift.findings))
        summary.severities = dict(Counter(f.severity for f in drift.findings))
        summaries.append(summary)
    gc.enable()
    columns = list(zip(*(f.as_tuple() for f in findings), strict=True)) if findings else [[]] * 9
    pq.write_table(pa.table(dict(zip(FINDING_COLUMNS, columns, strict=True))), out / "drift.parquet")
    now = datetime.datetime.now(datetime.UTC)
    document = summary_document(
        summaries,
        run_id=new_run_id(now),
        generated_at=now.isoformat(timespec="seconds"),
        seed=0,
        inputs={"desired": str(directory / "desired.parquet")},
        manifest_errors=[],
        warnings=[],
        timings={},
    )
    (out / "summary.json").write_text(summary_text(document), encoding="utf-8")
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


@dataclass
class Measured:
    """One process, timed from its start to its exit, with the peak resident memory of its process tree."""

    wall: float
    peak: int
    result: dict[str, Any]


def measured(command: list[str], *, exit_codes: tuple[int, ...] = (0,)) -> Measured:
    """Run ``command`` (with ``--result FILE`` appended when it is this script) and sample its process tree.
    The wall time runs from just before the process is started to its exit: imports, the JVM and the session
    included, as a user waits for them."""
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        this_script = command[:2] == [sys.executable, __file__]
        argv = [*command, "--result", result.name] if this_script else command
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        peak = 0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.25):
                peak = max(peak, _tree_rss(child.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = child.wait()
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
        if code not in exit_codes:
            raise SystemExit(f"bench child {' '.join(argv)} failed with exit code {code}")
        figures = json.loads(Path(result.name).read_text()) if this_script else {}
        return Measured(wall, peak, figures)


def _child(run: str, size: Size, root: Path, master: str) -> list[str]:
    return [
        sys.executable,
        __file__,
        "--run",
        run,
        "--size",
        size.name,
        "--data",
        str(root),
        "--master",
        master,
    ]


def _finding_rows(path: Path) -> list[tuple[Any, ...]]:
    import pyarrow.parquet as pq

    rows = pq.read_table(path).to_pylist()
    return sorted((tuple(row.values()) for row in rows), key=lambda r: tuple(str(v) for v in r))


def output_differences(kto_out: Path, single_out: Path) -> list[str]:
    """Where ``kto drift``'s outputs and the single process's differ: findings, plan files, summary totals."""
    problems = []
    if _finding_rows(kto_out / "drift.parquet") != _finding_rows(single_out / "drift.parquet"):
        problems.append("drift.parquet rows differ")
    kto_plans = {p.name: p.read_bytes() for p in (kto_out / "plans").iterdir()}
    single_plans = {p.name: p.read_bytes() for p in (single_out / "plans").iterdir()}
    if kto_plans != single_plans:
        differing = sorted(
            n for n in kto_plans.keys() | single_plans.keys() if kto_plans.get(n) != single_plans.get(n)
        )
        problems.append(f"plans differ: {', '.join(differing[:5])}")
    kto_totals = json.loads((kto_out / "summary.json").read_text())["totals"]
    single_totals = json.loads((single_out / "summary.json").read_text())["totals"]
    if kto_totals != single_totals:
        problems.append(f"summary totals differ: {kto_totals} against {single_totals}")
    return problems


@dataclass
class SizeFigures:
    """The best of each kind of run at one size, and what ``kto drift``'s best run said about its phases."""

    size: Size
    floor: Measured
    kto: Measured
    single: Measured | None
    kto_summary: dict[str, Any]
    warm: Measured | None = None
    spark: Measured | None = None
    """``kto drift --engine spark --master ...``: the Spark engine on the same inputs."""
    spark_summary: dict[str, Any] | None = None


def measure_size(
    size: Size, root: Path, master: str, repeat: int, with_single: bool, warm: bool, with_spark: bool
) -> SizeFigures:
    """Floor, ``kto drift`` (the default engine), ``kto drift`` on Spark and single, ``repeat`` times
    interleaved; the best (shortest) of each is kept."""
    directory = root / size.name
    out, spark_out = directory / "out-kto", directory / "out-spark"
    floors: list[Measured] = []
    ktos: list[tuple[Measured, dict[str, Any]]] = []
    sparks: list[tuple[Measured, dict[str, Any]]] = []
    singles: list[Measured] = []
    for round_number in range(1, repeat + 1):
        floors.append(measured(_child("floor", size, root, master)))
        kto = measured(kto_drift_command(directory, out, None), exit_codes=(0, 2))
        ktos.append((kto, json.loads((out / "summary.json").read_text())))
        if with_spark:
            on_spark = measured(kto_drift_command(directory, spark_out, master), exit_codes=(0, 2))
            sparks.append((on_spark, json.loads((spark_out / "summary.json").read_text())))
        if with_single:
            singles.append(measured(_child("single", size, root, master)))
        print(
            f"  {size.name} round {round_number}: floor {floors[-1].wall:.1f} s, kto drift {kto.wall:.1f} s"
            + (f", on Spark {sparks[-1][0].wall:.1f} s" if sparks else "")
            + (f", single {singles[-1].wall:.1f} s" if singles else "")
        )
    best_kto, summary = min(ktos, key=lambda pair: pair[0].wall)
    best_spark, spark_summary = min(sparks, key=lambda pair: pair[0].wall) if sparks else (None, None)
    single = min(singles, key=lambda m: m.wall) if singles else None
    if single is not None:
        for name, produced in (("kto drift", out), ("kto drift on Spark", spark_out if sparks else None)):
            problems = output_differences(produced, directory / "out-single") if produced is not None else []
            if problems:
                raise SystemExit(
                    f"{size.name}: {name} and the single process disagree: {'; '.join(problems)}"
                )
    hot = measured(_child("warm", size, root, master)) if warm else None
    return SizeFigures(
        size, min(floors, key=lambda m: m.wall), best_kto, single, summary, hot, best_spark, spark_summary
    )


def _time_split(label: str, name: str, wall: float, summary: dict[str, Any]) -> str:
    phases = summary["timings_seconds"]
    start = wall - sum(phases.values())
    parts = [f"start and stop {start:.1f}"] + [f"{phase} {seconds:.1f}" for phase, seconds in phases.items()]
    text = f"{name}: {label} {wall:.1f} s = " + ", ".join(parts)
    plan = summary["inputs"].get("python_plan_seconds")
    if plan is not None:
        text += f"\n{name}: {label}: the per-cluster stage, summed over its tasks: {plan:.1f} s"
    return text


def where_the_time_goes(figures: SizeFigures) -> str:
    """Each ``kto drift`` run's wall time split: its start and stop (process, imports, and for Spark the JVM and
    session; the rest of the wall time) and each phase the job timed (``summary.json``)."""
    text = _time_split("kto drift", figures.size.name, figures.kto.wall, figures.kto_summary)
    if figures.spark is not None and figures.spark_summary is not None:
        text += "\n" + _time_split("on Spark", figures.size.name, figures.spark.wall, figures.spark_summary)
    return text


def profile_plan_stage(directory: Path) -> str:
    """cProfile of the Python stage (``cluster_drift``) on the first cluster: where a task's time goes."""
    path = sorted((directory / "snapshots").glob("*.jsonl"))[0]
    texts = path.read_text(encoding="utf-8").splitlines()
    desired = _desired_by_cluster(directory / "desired.parquet")
    profiler = cProfile.Profile()
    gc.disable()
    profiler.enable()
    cluster_drift(path.stem, desired.get(path.stem, []), texts, [str(path)] * len(texts), None, seed=0)
    profiler.disable()
    gc.enable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(18)
    return stream.getvalue()


def target_1m_line(kto: Measured) -> str:
    """Whether ``kto drift``'s best run at 1M meets the streamed target (time and peak), in one line."""
    wall_met = kto.wall <= STREAMED_1M_SECONDS
    peak_met = kto.peak / 2**30 <= STREAMED_1M_PEAK_GIB
    verdict = "met" if wall_met and peak_met else "NOT met"
    return (
        f"{'':>9} 1M target (<= {STREAMED_1M_SECONDS:.0f} s, <= {STREAMED_1M_PEAK_GIB:.0f} GiB peak): {verdict}: "
        f"{kto.wall:.1f} s ({'met' if wall_met else 'not met'}), {kto.peak / 2**30:.2f} GiB "
        f"({'met' if peak_met else 'not met'})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10k,100k,1m", help="comma-separated subset of 10k,100k,1m")
    parser.add_argument(
        "--data", default=os.path.join(tempfile.gettempdir(), "kto-drift-bench"), help="where inputs are kept"
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=1, help="measure each run N times and keep the best")
    parser.add_argument("--skip-single", action="store_true", help="without the single process")
    parser.add_argument("--skip-spark", action="store_true", help="without kto drift on Spark")
    parser.add_argument(
        "--warm", action="store_true", help="also time the job run twice in one process (the JIT warm)"
    )
    parser.add_argument("--profile", action="store_true", help="print where the time goes")
    parser.add_argument("--run", choices=("floor", "single", "warm"), help=argparse.SUPPRESS)
    parser.add_argument("--size", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.data)
    if args.run is not None:  # a child: one measured run
        directory = root / args.size
        if args.run == "floor":
            figures = run_floor(directory, args.master)
        elif args.run == "warm":
            figures = run_warm(directory, directory / "out-warm", args.master)
        else:
            figures = run_single(directory, directory / "out-single")
        Path(args.result).write_text(json.dumps(figures))
        return 0
    chosen = [SIZES[s.strip().lower()] for s in args.sizes.split(",") if s.strip()]
    measurements = []
    for size in chosen:
        ensure_fleet(size, root)
        figures = measure_size(
            size, root, args.master, max(1, args.repeat), not args.skip_single, args.warm, not args.skip_spark
        )
        measurements.append(figures)
        if args.profile:
            print(where_the_time_goes(figures))
    print(
        f"\n{os.cpu_count()} cores; kto drift: the default engine (processes); on Spark: --engine spark --master "
        f"{args.master}; floor: a {args.master} session and one read. Every time is a process's start to its exit, "
        f"the best of {max(1, args.repeat)}; findings and plans of each run and the single process compared equal."
    )
    header = (
        f"{'topics':>9} {'clusters':>8} {'findings':>8} | {'floor s':>7} | {'kto drift s':>11} {'/ floor':>7} "
        f"{'peak GiB':>8} | {'on Spark s':>10} {'/ floor':>7} {'peak GiB':>8} | {'single s':>8} {'peak GiB':>8} "
        f"| {'single / kto':>12}"
    )
    print(header)
    print("-" * len(header))
    unmet = []
    for figures in measurements:
        size, floor, kto, single = figures.size, figures.floor, figures.kto, figures.single
        findings = figures.kto_summary["totals"]["findings"]
        ratio = kto.wall / floor.wall
        line = (
            f"{size.total:>9,} {size.clusters:>8} {findings:>8,} | {floor.wall:>7.1f} | {kto.wall:>11.1f} "
            f"{ratio:>6.2f}x {kto.peak / 2**30:>8.2f} | "
        )
        if figures.spark is not None:
            spark = figures.spark
            line += f"{spark.wall:>10.1f} {spark.wall / floor.wall:>6.2f}x {spark.peak / 2**30:>8.2f} | "
        else:
            line += f"{'-':>10} {'-':>7} {'-':>8} | "
        if single is not None:
            line += f"{single.wall:>8.1f} {single.peak / 2**30:>8.2f} | {single.wall / kto.wall:>11.2f}x"
        print(line)
        if figures.warm is not None:
            print(f"{'':>9} run_drift in one process: {figures.warm.result['cold']:.1f} s cold, "
                  f"{figures.warm.result['warm']:.1f} s again with the JIT warm")  # fmt: skip
        if size.name == "10k" and ratio > TARGET_10K_FLOORS:
            unmet.append(f"10k: {ratio:.2f}x the floor, target {TARGET_10K_FLOORS}x")
        if size.name == "100k" and ratio > TARGET_100K_FLOORS:
            unmet.append(f"100k: {ratio:.2f}x the floor, target {TARGET_100K_FLOORS}x")
        if size.name == "100k" and single is not None and kto.wall > single.wall:
            unmet.append(f"100k: kto drift {kto.wall:.1f} s, slower than one process ({single.wall:.1f} s)")
        if size.name == "1m" and kto.wall > TARGET_1M_SECONDS:
            unmet.append(f"1M: {kto.wall:.1f} s, target {TARGET_1M_SECONDS:.0f} s")
        if size.name == "1m" and kto.peak / 2**30 > TARGET_1M_PEAK_GIB:
            unmet.append(f"1M: peak {kto.peak / 2**30:.1f} GiB, target {TARGET_1M_PEAK_GIB:.0f} GiB")
        if size.name == "1m":
            print(target_1m_line(kto))
            if kto.wall > STREAMED_1M_SECONDS:
                unmet.append(f"1M: {kto.wall:.1f} s, streamed target {STREAMED_1M_SECONDS:.0f} s")
            if kto.peak / 2**30 > STREAMED_1M_PEAK_GIB:
                unmet.append(
                    f"1M: peak {kto.peak / 2**30:.2f} GiB, streamed target {STREAMED_1M_PEAK_GIB:.0f} GiB"
                )
    for text in unmet:
        print(f"target not met: {text}")
    if args.profile and chosen:
        print("\nThe Python stage on one cluster (cProfile, own time):")
        print(profile_plan_stage(root / chosen[-1].name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
