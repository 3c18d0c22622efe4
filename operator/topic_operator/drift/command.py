"""``kto drift``: the fleet drift job from the command line (and from ``spark-submit``, through ``__main__``).

Importing this module costs nothing: Spark is imported only when the command runs, so ``kto`` stays quick for
every other command and works without the ``spark`` extra installed.

Exit codes follow ``kto plan``: 0 nothing to fix (info findings only), 2 drift found (a warning or an error), 1
the run failed or a manifest had errors (the rest is still planned and written, as ``kto plan`` does).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["build_parser", "main", "register", "run"]

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_DRIFT: Final = 2

_SPARK_EXTRA: Final = frozenset({"pyspark", "pandas", "pyarrow", "matplotlib"})

_DESCRIPTION: Final = (
    "Plan drift across many clusters on Spark: declared topics (manifests, a kubectl export, or Parquet rows) "
    "against kto snapshot files or live reads of the clusters' ZooKeepers. Writes drift.parquet (one row per "
    "finding), plans/<cluster>.json (as kto plan -o json), summary.json and report.html to --out. Exit 0: no "
    "drift; 2: drift found; 1: the run failed or a manifest had errors."
)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--desired", nargs="+", action="extend", required=True, metavar="PATH",
                        help="manifest files or directories (KafkaTopic, KafkaCluster, Strimzi KafkaTopic), a "
                        "'kubectl get kafkatopics -A -o json' export, or *.parquet tables of declared-topic rows; "
                        "repeatable")  # fmt: skip
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--snapshots", metavar="DIR",
                        help="a directory of 'kto snapshot' JSON-lines files (read recursively)")  # fmt: skip
    source.add_argument("--clusters", nargs="+", action="extend", metavar="PATH",
                        help="KafkaCluster documents: read these clusters live, one Spark task per cluster "
                        "(their rows are saved under OUT/snapshots)")  # fmt: skip
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="where the outputs go (created if missing)"
    )
    parser.add_argument("--master", metavar="URL",
                        help="Spark master, e.g. spark://host:7077 (default: local[*], or spark-submit's)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the placement of new topics, as kto plan --seed (default 0)")  # fmt: skip
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting, e.g. spark.driver.memory=8g (repeatable)")  # fmt: skip
    parser.add_argument("--zookeeper-timeout", type=float, default=15.0, metavar="SECONDS",
                        help="with --clusters: how long each cluster's connection may take (default 15)")  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def register(subcommands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``kto drift`` to ``kto``'s sub-commands; the handler is ``run``."""
    drift = subcommands.add_parser(
        "drift",
        help="plan drift across many clusters on Spark (report, Parquet, plans)",
        description=_DESCRIPTION,
    )
    _add_arguments(drift)
    drift.set_defaults(handler=run)


def build_parser() -> argparse.ArgumentParser:
    """The same options as a program of its own, for ``spark-submit .../drift/__main__.py``."""
    parser = argparse.ArgumentParser(prog="kto-drift", description=_DESCRIPTION)
    _add_arguments(parser)
    return parser


def _spark_settings(pairs: Sequence[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--conf {pair!r}: expected KEY=VALUE")
        settings[key.strip()] = value
    return settings


def run(args: argparse.Namespace) -> int:
    """Read the inputs, run the job, print where the outputs are. Errors become one line on stderr."""
    try:
        return _run(args)
    except ModuleNotFoundError as error:
        if error.name not in _SPARK_EXTRA:
            raise
        print(f"kto drift: {error.name} is missing: install the spark extra, "
              "pip install 'kafka-topic-operator[spark]'", file=sys.stderr)  # fmt: skip
        return EXIT_ERROR
    except (OSError, ValueError) as error:  # SnapshotError is a ValueError
        print(f"kto drift: {error}", file=sys.stderr)
        return EXIT_ERROR


def _run(args: argparse.Namespace) -> int:
    from topic_operator.drift.inputs import (
        check_snapshot_files,
        collect_live,
        load_desired,
        load_inventory,
        read_snapshots,
    )
    from topic_operator.drift.job import DriftInputs, run_drift
    from topic_operator.drift.kinds import Severity
    from topic_operator.drift.outputs import SNAPSHOTS_DIR
    from topic_operator.drift.progress import Progress
    from topic_operator.drift.session import start_session

    out = Path(args.out)
    conf = _spark_settings(args.conf)
    if args.snapshots is not None:
        check_snapshot_files(args.snapshots)
    session = start_session(args.master, conf)
    spark = session.spark
    progress = Progress(None if args.quiet else sys.stderr, spark=spark)
    progress.say(
        f"Spark {spark.version} on {spark.sparkContext.master}, {spark.sparkContext.defaultParallelism} cores"
    )
    try:
        with progress.phase("loading declared topics"):
            desired = load_desired(spark, args.desired)
        for error in desired.errors:
            print(f"error: {error}", file=sys.stderr)
        expected: list[str] = []
        unreachable: dict[str, str] = {}
        described: dict[str, object] = {"desired": list(args.desired)}
        if args.clusters is not None:
            inventory, inventory_errors = load_inventory(args.clusters)
            for error in inventory_errors:
                print(f"error: {error}", file=sys.stderr)
            if not inventory:
                raise ValueError(f"no valid KafkaCluster documents in {', '.join(args.clusters)}")
            snapshot_dir = out / SNAPSHOTS_DIR
            with progress.phase(f"reading {len(inventory)} clusters live"):
                unreachable = collect_live(spark, inventory, snapshot_dir, timeout=args.zookeeper_timeout)
            for name, reason in sorted(unreachable.items()):
                progress.say(f"  cluster {name} not read: {reason}")
            expected = [c.name for c in inventory]
            clusters = {**desired.clusters, **{c.name: c for c in inventory}}
            described["clusters"] = list(args.clusters)
        else:
            snapshot_dir = Path(args.snapshots)
            clusters = dict(desired.clusters)
        described["snapshots"] = str(snapshot_dir)
        described["master"] = spark.sparkContext.master
        inputs = DriftInputs(
            desired=desired.frame,
            snapshots=read_snapshots(spark, snapshot_dir),
            clusters=clusters,
            expected_clusters=expected,
            unreachable=unreachable,
            manifest_errors=desired.errors,
            warnings=desired.warnings,
            described=described,
        )
        result = run_drift(spark, inputs, out, seed=args.seed, progress=progress)
    finally:
        if session.created:
            spark.stop()
    errors, warnings = result.count(Severity.ERROR), result.count(Severity.WARNING)
    info = result.count(Severity.INFO)
    print(
        f"drift: {result.findings} findings ({errors} errors, {warnings} warnings, {info} info) in "
        f"{len(result.clusters)} clusters -> {out}"
    )
    if desired.errors:
        return EXIT_ERROR
    return EXIT_DRIFT if errors or warnings else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))
