"""The drift job on one machine without Spark: the same per-cluster function over a pool of processes.

On one machine, Spark's fixed costs (a JVM, its session, its generated code, a shuffle of every snapshot line
through the JVM and back into Python) cost more than the whole job below a million topics, and still a third
of it at a million on two cores (as measured by ``bench/drift.py``). This engine keeps everything that decides the
outputs and drops only the carrier: each cluster is planned by ``arrow_stage.cluster_table``, the function
Spark's Python tasks run, and the driver writes the outputs with ``results.write_results``, as the Spark engine
does. The tests hold the two engines' outputs equal, file for file.

How the lines of a cluster come together (Spark's shuffle): each file is read once to learn which clusters it
holds (``snapshot_files.file_clusters``, a pass that touches only the start of each line); files that share a
cluster form one task, which reads them again and groups their lines by cluster. ``kto snapshot`` writes one
file per cluster, so a task is normally one file. A cluster's declared topics travel to its task as Arrow IPC
bytes (a slice of the Parquet table, or the manifests' specs), so a worker never holds the whole fleet.

Workers are forked from a fresh server process (``forkserver``), never from the driver, which may hold threads
(a test's Spark gateway, a notebook's), and import only the engine (pyarrow, orjson, the planner). A live fleet
is read by readers of its own (``live_readers``), before the engine is even imported.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
import pyarrow.compute as pc  # type: ignore[import-untyped]

from topic_operator.drift.arrow_schemas import CLUSTER_DRIFT_ARROW
from topic_operator.drift.arrow_stage import cluster_table
from topic_operator.drift.cluster_drift import ClusterDrift
from topic_operator.drift.declared_table import read_declared_table
from topic_operator.drift.fork_server import fork_context
from topic_operator.drift.outputs import plan_file_name
from topic_operator.drift.progress import Progress
from topic_operator.drift.results import DriftResult, FleetFacts, write_results
from topic_operator.drift.snapshot_files import file_clusters, keyed_lines, read_lines, snapshot_files
from topic_operator.model import ClusterSpec, TopicSpec

__all__ = [
    "CLUSTER_PHASE",
    "DeclaredTopics",
    "EngineError",
    "WorkerPool",
    "load_declared",
    "run_drift_in_processes",
]

CLUSTER_PHASE: Final = "reading, planning and classifying (processes by cluster)"

T = TypeVar("T")


class EngineError(RuntimeError):
    """A worker process died (killed for memory, most likely): the run cannot finish."""


@dataclass(slots=True)
class DeclaredTopics:
    """Declared topics by cluster, each cluster's as parts: specs from manifests, Arrow IPC bytes of Parquet
    rows (``DESIRED_ARROW``)."""

    parts: dict[str, list[list[TopicSpec] | bytes]] = field(default_factory=dict)
    clusters: dict[str, ClusterSpec] = field(default_factory=dict)
    """KafkaCluster documents found among the manifests."""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add_specs(self, specs: Iterable[TopicSpec]) -> None:
        for cluster, group in itertools.groupby(
            sorted(specs, key=lambda s: s.cluster), key=lambda s: s.cluster
        ):
            self.parts.setdefault(cluster, []).append(list(group))

    def add_table(self, table: Any) -> None:
        """Parquet rows, split by cluster. Sorted first unless each cluster's rows are already together."""
        if table.num_rows == 0:
            return
        clusters = table.column("cluster").combine_chunks()
        runs = pc.run_end_encode(clusters)
        if len(runs.values) != len(pc.unique(clusters)):
            table = table.take(pc.sort_indices(table, [("cluster", "ascending")]))
            runs = pc.run_end_encode(table.column("cluster").combine_chunks())
        start = 0
        for name, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist(), strict=True):
            self.parts.setdefault(name, []).append(_ipc_bytes(table.slice(start, end - start)))
            start = end


def _ipc_bytes(table: Any) -> bytes:
    """The rows of ``table`` alone (a slice pickles its whole parent's buffers; the IPC stream only its rows)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def _from_ipc(part: list[TopicSpec] | bytes) -> Any:
    return part if isinstance(part, list) else pa.ipc.open_stream(part).read_all()


def load_declared(paths: Sequence[str]) -> DeclaredTopics:
    """Manifests through ``load_manifests``, ``*.parquet`` (a file or a directory of part files) through pyarrow
    with the declared-topic schema, checked (``declared_table``)."""
    from topic_operator.manifests.loader import load_manifests

    declared = DeclaredTopics()
    manifest_paths = [p for p in paths if not p.rstrip("/").endswith(".parquet")]
    if manifest_paths:
        manifests = load_manifests(manifest_paths)
        declared.clusters = {c.name: c for c in manifests.clusters}
        declared.errors = [str(e) for e in manifests.errors]
        declared.warnings = [str(w) for w in manifests.warnings]
        declared.add_specs(manifests.topics)
    # Decoding a Parquet file takes about twice its table's size, which Arrow's allocator keeps once freed: given
    # back before the table is cut into the clusters' rows, and after, the driver holds only those rows (some
    # 190 MB at a million topics) while the run lasts, and never the decoding, the table and the rows at once.
    memory = pa.default_memory_pool()
    for path in (p for p in paths if p.rstrip("/").endswith(".parquet")):
        table = read_declared_table(path)
        memory.release_unused()
        declared.add_table(table)
        del table
        memory.release_unused()
    return declared


# -- what the workers run ---------------------------------------------------------------------------------------


def _clusters_of(path: str) -> set[str | None]:
    return file_clusters(Path(path))


def _file_uri(path: str) -> str:
    """A file as Spark's ``_metadata.file_path`` names it (Hadoop's ``file:/abs/path``), so that messages read
    the same under both engines."""
    return "file:" + Path(path).absolute().as_uri().removeprefix("file://")


def _task_rows(
    files: Sequence[str],
    declared: Mapping[str, Sequence[list[TopicSpec] | bytes]],
    *,
    settings: Mapping[str, ClusterSpec],
    unreachable: Mapping[str, str],
    seed: int,
    sample_size: int,
    plans: str,
) -> Any:
    """One task: the lines of ``files`` grouped by cluster, each cluster (and each declared cluster without
    lines) through ``cluster_table``; their rows as one table. Each cluster's plan document is written here, under
    ``plans`` (the run's staging directory, which the driver moves into place once every cluster is known to be
    readable), rather than sent back: the driver would otherwise hold every plan of the fleet at once, a quarter
    of a gigabyte at a million topics."""
    texts: dict[str | None, list[str | bytes]] = {}
    origins: dict[str | None, list[str]] = {}
    for path in files:
        uri = _file_uri(path)
        for key, line in keyed_lines(read_lines(Path(path))):
            if not line.strip():
                continue  # skipped by the job: it groups under no cluster
            # Bytes, which orjson reads as they are; a line not starting with a brace decoded, since one made of
            # whitespace that only ``str.strip`` strips (U+001C...) is blank to the job (``cluster_drift``).
            texts.setdefault(key, []).append(
                line if line[:1] == b"{" else line.decode("utf-8", "surrogateescape")
            )
            origins.setdefault(key, []).append(uri)
    names = list(texts) + [name for name in declared if name not in texts]
    rows = [
        cluster_table(
            name,
            [_from_ipc(part) for part in declared.get(name, ())] if name is not None else [],
            texts.pop(name, []),
            origins.pop(name, []),
            settings=settings,
            unreachable=unreachable,
            seed=seed,
            sample_size=sample_size,
            schema=CLUSTER_DRIFT_ARROW,
            keep=functools.partial(_write_plan, plans=Path(plans)),
        )
        for name in names
    ]
    return pa.concat_tables(rows) if rows else CLUSTER_DRIFT_ARROW.empty_table()


def _write_plan(drift: ClusterDrift, *, plans: Path) -> None:
    """The cluster's plan document to its file in the staging directory, and out of its row."""
    if drift.document is not None and drift.cluster is not None:
        (plans / plan_file_name(drift.cluster)).write_text(drift.document, encoding="utf-8")
        drift.document = None


# -- the driver -------------------------------------------------------------------------------------------------


def _pool(processes: int) -> ProcessPoolExecutor:
    """Workers forked from a server that has imported the engine, once for all of them (``fork_server``)."""
    return ProcessPoolExecutor(max_workers=processes, mp_context=fork_context())


def _results(futures: Sequence[Future[T]]) -> list[T]:
    """Every future's result, in order. The first failure cancels the tasks not started, so that the error is
    reported now rather than once the whole fleet has been planned for nothing."""
    try:
        return [future.result() for future in futures]
    except BrokenProcessPool as error:
        raise EngineError(
            "a worker process of kto drift died (killed by the system, most likely for memory): run with "
            "fewer --processes, or on Spark (--engine spark)"
        ) from error
    finally:
        for future in futures:
            future.cancel()


@dataclass(frozen=True, slots=True)
class _Task:
    files: tuple[str, ...]
    clusters: frozenset[str | None]
    size: int


def _tasks(clusters_by_file: Mapping[str, set[str | None]]) -> list[_Task]:
    """Files that share a cluster, joined into one task (union-find over the clusters); largest first, so that
    the pool's last tasks are its small ones."""
    parent: dict[str, str] = {path: path for path in clusters_by_file}

    def root(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    holder: dict[str | None, str] = {}
    for path, clusters in clusters_by_file.items():
        for cluster in clusters:
            if cluster is None:
                continue  # lines without a cluster are problems of their own file: nothing to bring together
            if cluster in holder:
                parent[root(path)] = root(holder[cluster])
            else:
                holder[cluster] = path
    groups: dict[str, list[str]] = {}
    for path in clusters_by_file:
        groups.setdefault(root(path), []).append(path)
    tasks = [
        _Task(
            tuple(sorted(paths)),
            frozenset(c for p in paths for c in clusters_by_file[p]),
            sum(os.path.getsize(p) for p in paths),
        )
        for paths in groups.values()
    ]
    return sorted(tasks, key=lambda t: (-t.size, t.files))


class WorkerPool:
    """The run's worker processes, started as early as the run knows what it reads: the workers' start (the fork
    server importing the engine) and their first pass over the snapshot files (which clusters each holds) then
    overlap the driver's reading of the declared topics, instead of following it.

    ``at_once``: the workers are started now, from a thread of their own (starting the fork server blocks its
    caller until the engine is imported), while the driver loads the declared topics: for a live run, whose
    snapshot files are its reads, already written, and need no scan to start the workers."""

    def __init__(self, processes: int, *, at_once: bool = False) -> None:
        self.processes = processes
        self._executor = _pool(processes)
        self._scans: dict[Path, list[tuple[str, Future[set[str | None]]]]] = {}
        self._starting: threading.Thread | None = None
        if at_once:
            self._starting = threading.Thread(
                target=self._start_workers, name="kto-drift-workers", daemon=True
            )
            self._starting.start()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *_: object) -> None:
        if self._starting is not None:
            self._starting.join()
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _start_workers(self) -> None:
        """Every worker forked now (the pool forks one per task while none is idle), by tasks that do nothing."""
        with contextlib.suppress(
            Exception
        ):  # a pool that cannot start reports it on the run's first real task
            for future in [self._executor.submit(_started) for _ in range(self.processes)]:
                future.result()

    def submit(self, function: Callable[..., T], /, *args: Any) -> Future[T]:
        return self._executor.submit(function, *args)

    def scan(self, snapshot_dir: Path) -> None:
        """Start finding which clusters each snapshot file holds (``snapshot_files.file_clusters``)."""
        if snapshot_dir not in self._scans:
            files = [str(path) for path in snapshot_files(snapshot_dir)]
            self._scans[snapshot_dir] = [(f, self._executor.submit(_clusters_of, f)) for f in files]

    def clusters_by_file(self, snapshot_dir: Path) -> dict[str, set[str | None]]:
        """The clusters of each snapshot file, in the files' order; a failure (a file that cannot be read) is
        raised here."""
        self.scan(snapshot_dir)
        scanned = self._scans.pop(snapshot_dir)
        return dict(zip([f for f, _ in scanned], _results([future for _, future in scanned]), strict=True))


STAGED_PLANS: Final = ".plans.partial"
"""Where, under ``--out``, the workers write the clusters' plans until the run moves them to ``plans/``: hidden,
as Spark's file index and ``snapshot_files`` skip such names."""


def run_drift_in_processes(
    declared: DeclaredTopics,
    snapshot_dir: Path,
    facts: FleetFacts,
    out: Path,
    *,
    seed: int = 0,
    processes: int | None = None,
    progress: Progress | None = None,
    report_rows_per_cluster: int = 50,
    pool: WorkerPool | None = None,
) -> DriftResult:
    """The drift run on ``processes`` worker processes (default: one per core), or on ``pool``, already started;
    the same outputs as ``job.run_drift`` on the same inputs.

    When the run fails before its outputs are written (a snapshot line that cannot be read, a worker killed),
    the plans written so far are removed, and so are ``out`` and its parents if this run created them: as the
    Spark engine, a failed run leaves nothing behind."""
    progress = progress if progress is not None else Progress(None)
    created = [directory for directory in (out, *out.parents) if not directory.exists()]
    out.mkdir(parents=True, exist_ok=True)
    staging = out / STAGED_PLANS
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    try:
        workers = (
            WorkerPool(processes or os.cpu_count() or 1) if pool is None else contextlib.nullcontext(pool)
        )
        with workers as used:
            table = _cluster_rows(
                declared, snapshot_dir, facts, used, staging, seed, report_rows_per_cluster, progress
            )
        return write_results(table, facts, out, seed=seed, progress=progress, staged_plans=staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for directory in created:  # the deepest first; only when nothing else was put there meanwhile
            try:
                directory.rmdir()
            except OSError:
                break
        raise


def _cluster_rows(
    declared: DeclaredTopics,
    snapshot_dir: Path,
    facts: FleetFacts,
    pool: WorkerPool,
    staging: Path,
    seed: int,
    sample_size: int,
    progress: Progress,
) -> Any:
    """Every cluster's row (``CLUSTER_DRIFT_ARROW``), its plan written under ``staging``. The declared rows are
    taken out of ``declared`` as their tasks are submitted, so that each is freed once its task is done rather
    than held until the report is written."""
    run = functools.partial(
        _task_rows,
        settings=dict(facts.clusters),
        unreachable=dict(facts.unreachable),
        seed=seed,
        sample_size=sample_size,
        plans=str(staging),
    )
    with progress.phase(CLUSTER_PHASE):
        clusters_by_file = pool.clusters_by_file(snapshot_dir)
        tasks = _tasks(clusters_by_file)
        seen = set().union(*(t.clusters for t in tasks)) if tasks else set()
        parts = declared.parts
        unseen = sorted(set(parts) - seen)
        futures = [
            pool.submit(run, t.files, {c: parts.pop(c) for c in t.clusters if c is not None and c in parts})
            for t in tasks
        ]
        for batch in _batches(unseen, pool.processes):
            futures.append(pool.submit(run, (), {c: parts.pop(c) for c in batch}))
        progress.say(f"  {len(clusters_by_file)} files in {len(tasks)} tasks on {pool.processes} processes")
        tables = _results(futures)
    return pa.concat_tables(tables) if tables else CLUSTER_DRIFT_ARROW.empty_table()


def _batches(names: Sequence[str], count: int) -> list[Sequence[str]]:
    """``names`` in at most ``count`` batches of about equal length."""
    size = max(1, -(-len(names) // max(1, count)))
    return [names[i : i + size] for i in range(0, len(names), size)]


def _started() -> None:
    """A task that does nothing: submitted to make the pool fork a worker."""
