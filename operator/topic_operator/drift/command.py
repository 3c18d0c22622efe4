"""``kto drift``: the fleet drift job from the command line (and from ``spark-submit``, through ``__main__``).

Importing this module costs nothing: Spark is imported only when the command runs, so ``kto`` stays quick for
every other command and works without the ``spark`` extra installed.

Exit codes follow ``kto plan``: 0 nothing to fix (info findings only), 2 drift found (a warning or an error), 1
the run failed or a manifest had errors (the rest is still planned and written, as ``kto plan`` does).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from topic_operator.drift.progress import Progress  # threads and a clock only: importing it costs nothing

if TYPE_CHECKING:
    from topic_operator.access.address import ClusterAddress
    from topic_operator.drift.history import History
    from topic_operator.drift.results import DriftResult
    from topic_operator.model import ClusterSpec

__all__ = ["build_parser", "main", "register", "run"]

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_DRIFT: Final = 2

_SPARK_EXTRA: Final = frozenset({"pyspark", "pandas", "pyarrow", "matplotlib"})

AUTO: Final = "auto"
SPARK: Final = "spark"
PROCESSES: Final = "processes"
ENGINES: Final = (AUTO, PROCESSES, SPARK)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


_DESCRIPTION: Final = (
    "Plan drift across many clusters, on a pool of processes or on Spark: declared topics (manifests, a kubectl export, or Parquet rows) "
    "against kto snapshot files or live reads of the clusters (their ZooKeepers or their brokers). Writes drift.parquet (one row per "
    "finding), plans/<cluster>.json (as kto plan -o json), summary.json and report.html to --out. Exit 0: no "
    "drift; 2: drift found; 1: the run failed or a manifest had errors."
)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--desired", nargs="+", action="extend", required=True, metavar="PATH",
                        help="manifest files or directories (KafkaTopic, KafkaCluster, Strimzi KafkaTopic), a "
                        "'kubectl get kafkatopics -A -o json' export, or *.parquet tables of declared-topic rows; "
                        "repeatable")  # fmt: skip
    parser.add_argument("--snapshots", metavar="DIR",
                        help="a directory of 'kto snapshot' JSON-lines files (read recursively); with --clusters "
                        "too, the fleet mixes both: a cluster is read live or from its snapshot, never both")  # fmt: skip
    parser.add_argument("--clusters", nargs="+", action="extend", metavar="PATH",
                        help="KafkaCluster documents: read these clusters live, one task per cluster "
                        "(their rows are saved under OUT/snapshots)")  # fmt: skip
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="where the outputs go (created if missing)"
    )
    parser.add_argument("--engine", choices=ENGINES, default=AUTO,
                        help="where the clusters are planned: 'processes', a pool of processes on this machine; "
                        "'spark', a Spark job; 'auto' (default): Spark when --master or --conf is given, under "
                        "spark-submit or in a program with a Spark session, processes otherwise")  # fmt: skip
    parser.add_argument("--processes", type=_positive, metavar="N",
                        help="with the processes engine: how many (default: one per core)")  # fmt: skip
    parser.add_argument("--master", metavar="URL",
                        help="Spark master, e.g. spark://host:7077 (default: local[*], or spark-submit's)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the placement of new topics, as kto plan --seed (default 0)")  # fmt: skip
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting, e.g. spark.driver.memory=8g (repeatable)")  # fmt: skip
    parser.add_argument("--connect-timeout", "--zookeeper-timeout", dest="connect_timeout", type=float,
                        default=15.0, metavar="SECONDS",
                        help="with --clusters: how long reaching each cluster (its ZooKeeper or its brokers) may "
                        "take (default 15)")  # fmt: skip
    parser.add_argument("--command-config", metavar="FILE",
                        help="with --clusters: client properties for the clusters reached through their brokers "
                        "(bootstrapServers), as Kafka's tools read them: security.protocol, sasl.mechanism and "
                        "sasl.jaas.config, PEM ssl.truststore.* and ssl.keystore.*")  # fmt: skip
    parser.add_argument("--history", metavar="DIR",
                        help="earlier runs' --out folders, one per run (e.g. --out DIR/2025-06-01 --history DIR): "
                        "report.html gains drift over time, by kind and by cluster, and what is new or fixed since "
                        "the previous run; a folder whose summary.json is unreadable is named and left out")  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def register(subcommands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``kto drift`` to ``kto``'s sub-commands; the handler is ``run``."""
    drift = subcommands.add_parser(
        "drift",
        help="plan drift across many clusters, on this machine or on Spark (report, Parquet, plans)",
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
    except (
        OSError,
        ValueError,
        RuntimeError,
    ) as error:  # SnapshotError is a ValueError, EngineError a RuntimeError
        print(f"kto drift: {error}", file=sys.stderr)
        return EXIT_ERROR


def choose_engine(args: argparse.Namespace) -> str:
    """``--engine``, with ``auto`` resolved: Spark when the run is meant for it (a master or a Spark setting
    given, launched by ``spark-submit``, or a Spark session already running in this program); otherwise the
    pool of processes, which on one machine finishes well before a Spark session has started."""
    spark_asked = args.master is not None or bool(args.conf)
    if args.engine == PROCESSES and spark_asked:
        raise ValueError("--master and --conf are Spark settings: they need --engine spark (or auto)")
    if args.engine == SPARK and args.processes is not None:
        raise ValueError("--processes sizes the processes engine: with --engine spark, use --master local[N]")
    if args.engine != AUTO:
        return str(args.engine)
    if args.processes is not None and not spark_asked:
        return PROCESSES
    if spark_asked or "PYSPARK_GATEWAY_PORT" in os.environ:
        return SPARK
    if "pyspark" in sys.modules:  # only a program that imported pyspark can have a session running
        from pyspark.sql import SparkSession

        if SparkSession.getActiveSession() is not None:
            return SPARK
    return PROCESSES


def _report(result: DriftResult, out: Path, manifest_errors: Sequence[str]) -> int:
    from topic_operator.drift.kinds import Severity

    errors, warnings = result.count(Severity.ERROR), result.count(Severity.WARNING)
    info = result.count(Severity.INFO)
    print(
        f"drift: {result.findings} findings ({errors} errors, {warnings} warnings, {info} info) in "
        f"{len(result.clusters)} clusters -> {out}"
    )
    if manifest_errors:
        return EXIT_ERROR
    return EXIT_DRIFT if errors or warnings else EXIT_OK


def _run(args: argparse.Namespace) -> int:
    if args.snapshots is None and args.clusters is None:
        raise ValueError(
            "give --snapshots DIR, --clusters PATH, or both: nothing says what the clusters hold"
        )
    engine = choose_engine(args)
    if args.snapshots is not None:
        from topic_operator.drift.snapshot_files import check_snapshot_files

        check_snapshot_files(args.snapshots)
    if engine == PROCESSES:
        return _run_in_processes(args)
    return _run_on_spark(args)


def _history(args: argparse.Namespace) -> History | None:
    """The earlier runs of ``--history``, each file left out named on stderr (never a reason to stop)."""
    if args.history is None:
        return None
    from topic_operator.drift.history import read_history

    history = read_history(args.history, current=Path(args.out))
    for problem in history.left_out:
        print(f"warning: {problem}", file=sys.stderr)
    return history


def _inventory(paths: Sequence[str]) -> list[ClusterSpec]:
    from topic_operator.manifests.loader import load_manifests

    manifests = load_manifests(paths)
    for error in manifests.errors:
        print(f"error: {error}", file=sys.stderr)
    if not manifests.clusters:
        raise ValueError(f"no valid KafkaCluster documents in {', '.join(paths)}")
    return list(manifests.clusters)


@dataclass(slots=True)
class _Snapshots:
    """Where the run's snapshot lines are, and what a live read learned on the way (either engine)."""

    directory: Path
    clusters: dict[str, ClusterSpec]
    """The declared clusters' policies, overridden by the inventory's for a live run."""
    expected: list[str] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)
    described: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _LiveFleet:
    """The clusters ``--clusters`` names, each with its way in, and where their reads are written
    (``OUT/snapshots``): known, and checked against ``--snapshots``, before anything is read."""

    inventory: list[ClusterSpec]
    addresses: list[tuple[str, ClusterAddress]]
    directory: Path

    @property
    def phase(self) -> str:
        count = len(self.inventory)
        return f"reading {count} cluster{'' if count == 1 else 's'} live"


def _live_fleet(args: argparse.Namespace) -> _LiveFleet | None:
    """``--clusters``, read and checked (None without it): a fleet file that cannot be used stops the run before
    any cluster is reached or any engine started."""
    if args.clusters is None:
        return None
    from topic_operator.drift.outputs import SNAPSHOTS_DIR

    inventory = _inventory(args.clusters)
    directory = Path(args.out) / SNAPSHOTS_DIR
    if args.snapshots is not None:
        _refuse_overlap(Path(args.snapshots), directory, inventory, args.clusters)
    return _LiveFleet(inventory, _addresses(inventory, args.command_config), directory)


def _read_live(
    fleet: _LiveFleet, progress: Progress, read: Callable[[_LiveFleet], dict[str, str]]
) -> dict[str, str]:
    """The live ``fleet`` read by ``read``, the engine's own way, into ``OUT/snapshots``, timed; the clusters it
    could not read, with the reason."""
    with progress.phase(fleet.phase):
        return read(fleet)


def _snapshots(
    args: argparse.Namespace,
    declared_clusters: Mapping[str, ClusterSpec],
    fleet: _LiveFleet | None,
    unreachable: Mapping[str, str],
    progress: Progress,
) -> _Snapshots:
    """Where the run's snapshot lines are: ``--snapshots DIR`` as given, or where ``fleet`` was read
    (``_read_live``, which found ``unreachable``); with both, the given snapshot files are linked in beside the
    live reads."""
    described: dict[str, object] = {"desired": list(args.desired)}
    if fleet is None:
        directory = Path(args.snapshots)
        described["snapshots"] = str(directory)
        return _Snapshots(directory, dict(declared_clusters), described=described)
    if args.snapshots is not None:
        _link_snapshots(Path(args.snapshots), fleet.directory / GIVEN_SNAPSHOTS)
        described["given_snapshots"] = str(args.snapshots)
    for name, reason in sorted(unreachable.items()):
        progress.say(f"  cluster {name} not read: {reason}")
    described["clusters"] = list(args.clusters)
    described["snapshots"] = str(fleet.directory)
    clusters = {**declared_clusters, **{c.name: c for c in fleet.inventory}}
    return _Snapshots(
        fleet.directory, clusters, [c.name for c in fleet.inventory], dict(unreachable), described
    )


GIVEN_SNAPSHOTS: Final = "given"
"""Where, under ``OUT/snapshots``, a mixed run links the ``--snapshots`` files in beside its live reads."""


def _refuse_overlap(given: Path, live: Path, inventory: Sequence[ClusterSpec], fleet: Sequence[str]) -> None:
    """A fleet mixing snapshots and live reads names each cluster once: refuse one that ``--snapshots`` holds and
    the inventory reaches too (naming both), and a snapshot directory the live reads would be written into (or
    over)."""
    from topic_operator.drift.snapshot_files import file_clusters, snapshot_files

    given_at, live_at = given.resolve(), live.resolve()
    if given_at == live_at or given_at.is_relative_to(live_at) or live_at.is_relative_to(given_at):
        raise ValueError(
            f"--snapshots {given} overlaps {live}, where --clusters writes the live reads: keep the snapshots "
            "elsewhere"
        )
    live_names = {c.name for c in inventory}
    for path in snapshot_files(given):
        both = sorted(name for name in file_clusters(path) if name in live_names)
        if both:
            raise ValueError(
                f"cluster {both[0]} is named twice: by its address (KafkaCluster {both[0]} in "
                f"{', '.join(fleet)}: spec.zookeeper or spec.bootstrapServers) and by a snapshot ({path}); read "
                "it live or from its snapshot, not both"
            )


def _link_snapshots(given: Path, into: Path) -> None:
    """The ``--snapshots`` files under ``into``, by their paths below ``given``: hard links where the file system
    allows (no copy of a large fleet's files), copies where it does not."""
    from topic_operator.drift.snapshot_files import snapshot_files

    for path in snapshot_files(given):
        target = into / path.relative_to(given)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copyfile(path, target)


def _addresses(
    clusters: Sequence[ClusterSpec], command_config: str | None
) -> list[tuple[str, ClusterAddress]]:
    """Each cluster's way in: its ZooKeeper, its brokers with the ``--command-config`` client properties, or
    both. A property that cannot be used stops the run naming it; one kto does not read is one warning line,
    as Kafka's clients print them."""
    from topic_operator.access.address import address_of, client_properties, ignored_property_warnings

    properties, where = client_properties(command_config)
    addresses: list[tuple[str, ClusterAddress]] = []
    ignored: set[str] = set()
    for cluster in clusters:
        address, unread = address_of(cluster, properties, where=where)
        addresses.append((cluster.name, address))
        ignored.update(unread)
    for line in ignored_property_warnings(where, sorted(ignored)):
        print(line, file=sys.stderr)
    return addresses


def _run_in_processes(args: argparse.Namespace) -> int:
    from topic_operator.drift.fork_server import start_fork_server
    from topic_operator.drift.live_readers import read_live

    progress = Progress(None if args.quiet else sys.stderr)
    fleet = _live_fleet(args)
    unreachable: dict[str, str] = {}
    if fleet is not None:  # first, by readers of its own: the engine is not imported yet (``live_readers``)
        unreachable = _read_live(
            fleet,
            progress,
            lambda live: read_live(live.addresses, live.directory, timeout=args.connect_timeout),
        )
    start_fork_server()  # its imports beside the driver's, next
    from topic_operator.drift.processes import WorkerPool, load_declared, run_drift_in_processes
    from topic_operator.drift.results import FleetFacts

    out = Path(args.out)
    workers = args.processes or os.cpu_count() or 1
    progress.say(f"{workers} processes on this machine (--engine spark for a Spark job)")
    with WorkerPool(workers, at_once=fleet is not None) as pool:
        if (
            args.snapshots is not None and fleet is None
        ):  # the workers start, and read the files, while the driver reads the rest
            pool.scan(Path(args.snapshots))
        with progress.phase("loading declared topics"):
            declared = load_declared(args.desired)
        for error in declared.errors:
            print(f"error: {error}", file=sys.stderr)
        source = _snapshots(args, declared.clusters, fleet, unreachable, progress)
        source.described["engine"] = f"{workers} processes"
        facts = FleetFacts(
            source.clusters,
            source.expected,
            source.unreachable,
            declared.errors,
            declared.warnings,
            source.described,
            _history(args),
        )
        result = run_drift_in_processes(
            declared, source.directory, facts, out, seed=args.seed, progress=progress, pool=pool
        )
    return _report(result, out, declared.errors)


def _run_on_spark(args: argparse.Namespace) -> int:
    from topic_operator.drift.inputs import collect_live, load_desired, read_snapshots
    from topic_operator.drift.job import DriftInputs, run_drift
    from topic_operator.drift.session import start_session

    out = Path(args.out)
    conf = _spark_settings(args.conf)
    fleet = _live_fleet(args)
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
        unreachable = (
            _read_live(
                fleet,
                progress,
                lambda live: collect_live(
                    spark, live.addresses, live.directory, timeout=args.connect_timeout
                ),
            )
            if fleet is not None
            else {}
        )
        source = _snapshots(args, desired.clusters, fleet, unreachable, progress)
        source.described["master"] = spark.sparkContext.master
        source.described["engine"] = "spark"
        inputs = DriftInputs(
            desired=desired.frame,
            snapshots=read_snapshots(spark, source.directory),
            clusters=source.clusters,
            expected_clusters=source.expected,
            unreachable=source.unreachable,
            manifest_errors=desired.errors,
            warnings=desired.warnings,
            described=source.described,
            history=_history(args),
        )
        result = run_drift(spark, inputs, out, seed=args.seed, progress=progress)
    finally:
        if session.created:
            spark.stop()
    return _report(result, out, desired.errors)


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))
