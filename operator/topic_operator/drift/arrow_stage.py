"""The drift job's Python stage as Spark calls it: one cluster's Arrow tables in, its Arrow row out.

Spark's ``cogroup(...).applyInArrow`` hands each Python task one cluster's declared-topic rows (``DESIRED_SCHEMA``'s
columns) and snapshot lines (``SNAPSHOT_LINES_SCHEMA``) as ``pyarrow`` tables; ``run_cluster`` turns them into
``cluster_drift``'s arguments, runs it, and returns the outcome as one row of ``CLUSTER_DRIFT_SCHEMA`` (whose
Arrow form the driver computes and passes in, so that this module needs neither pyspark nor pandas).

Kept apart from ``job`` on purpose: this is all a Python worker imports (pyarrow and the engine), about a fifth
of what importing the job module costs (pandas, matplotlib, pyspark.sql), and every worker pays its imports.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
import pyarrow.compute as pc  # type: ignore[import-untyped]

from topic_operator.drift.arrow_schemas import DESIRED_ARROW
from topic_operator.drift.cluster_drift import ClusterDrift, cluster_drift
from topic_operator.drift.desired_rows import spec_from_values
from topic_operator.drift.kinds import FINDING_COLUMNS, Finding
from topic_operator.model import ClusterSpec, TopicSpec

__all__ = ["cluster_row", "cluster_table", "declared_specs", "planned_cluster", "run_cluster"]


def declared_specs(table: Any) -> list[TopicSpec]:
    """Declared-topic rows as specs. Column by column, each row's values passed on in the schema's order
    (``to_pylist`` of whole rows, or a dict per row, is several times slower); Arrow maps arrive as lists of
    key-value pairs."""
    columns = [table.column(name).to_pylist() for name in DESIRED_ARROW.names]
    return [spec_from_values(*values) for values in zip(*columns, strict=True)]


def _finding_dicts(findings: Sequence[Finding]) -> list[dict[str, str | None]]:
    return [dict(zip(FINDING_COLUMNS, f.as_tuple(), strict=True)) for f in findings]


def cluster_row(drift: ClusterDrift, schema: Any, sample_size: int) -> Any:
    """One cluster's outcome as its row of ``CLUSTER_DRIFT_SCHEMA`` (``schema``: its Arrow form)."""
    row = {
        "cluster": drift.cluster,
        "observed": drift.observed,
        "declared": drift.declared,
        "topics": drift.topics,
        "brokers": drift.brokers,
        "racks": drift.racks,
        "taken_at": drift.taken_at,
        "read_through": drift.read_through,
        "migration_stage": drift.migration_stage,
        "kafka_release": drift.kafka_release,
        "document": drift.document,
        "plan": list(drift.plan.items()),
        "micros": int(drift.seconds * 1e6),
        "findings": _finding_dicts(drift.findings),
        "sample": _finding_dicts(drift.sample(sample_size)),
        "loads": [
            {
                "broker": b.broker,
                "rack": b.rack,
                "registered": b.registered,
                "replicas": b.replicas,
                "leaders": b.leaders,
            }
            for b in drift.loads
        ],
        "problems": [
            {"problem": p.problem.value, "file": p.file, "detail": p.detail} for p in drift.problems
        ],
    }
    return pa.Table.from_pylist([row], schema=schema)


def planned_cluster(
    name: str | None,
    declared: Sequence[Any],
    texts: Sequence[str | bytes],
    files: Sequence[str],
    *,
    settings: Mapping[str, ClusterSpec],
    unreachable: Mapping[str, str],
    seed: int,
) -> ClusterDrift:
    """One cluster's outcome from its declared topics (``declared``: parts, each a list of ``TopicSpec`` or an
    Arrow table of declared-topic rows) and its snapshot lines (``name`` None: the lines without a readable
    cluster). The caller turns the cyclic collector off around it (``cluster_table``)."""
    specs = [spec for part in declared for spec in (part if isinstance(part, list) else declared_specs(part))]
    return cluster_drift(
        name,
        specs,
        texts,
        files,
        settings.get(name) if name is not None else None,
        seed=seed,
        unreachable=unreachable.get(name) if name is not None else None,
    )


def cluster_table(
    name: str | None,
    declared: Sequence[Any],
    texts: Sequence[str | bytes],
    files: Sequence[str],
    *,
    settings: Mapping[str, ClusterSpec],
    unreachable: Mapping[str, str],
    seed: int,
    sample_size: int,
    schema: Any,
    keep: Callable[[ClusterDrift], None] | None = None,
) -> Any:
    """One cluster's row (``schema``: ``CLUSTER_DRIFT_ARROW``) from its declared topics and its snapshot lines
    (``planned_cluster``): what both engines run for every cluster. ``keep``, when given, is handed the outcome
    before it becomes a row: the process engine writes the plan document there and clears it, so that the
    megabyte of JSON a large cluster's plan takes never travels back to the driver."""
    # Reading and planning allocate millions of small, acyclic objects, freed by reference counting; the cyclic
    # collector would scan the worker's whole heap again and again while they are alive. Off for the call.
    gc.disable()
    try:
        drift = planned_cluster(
            name, declared, texts, files, settings=settings, unreachable=unreachable, seed=seed
        )
        if keep is not None:
            keep(drift)
        return cluster_row(drift, schema, sample_size)
    finally:
        gc.enable()


def _texts(values: Any) -> list[str]:
    """The lines as ``str``. Spark's text source passes bytes that are not UTF-8 through unchanged, which
    ``to_pylist`` cannot decode: those are kept as lone surrogates, which orjson refuses, so the line is
    reported as unreadable with its file named, as the process engine reports it."""
    try:
        return list(values.to_pylist())
    except UnicodeDecodeError:
        return [line.decode("utf-8", "surrogateescape") for line in pc.cast(values, pa.binary()).to_pylist()]


def run_cluster(
    key: tuple[Any, ...],
    declared: Any,
    lines: Any,
    *,
    settings: Mapping[str, ClusterSpec],
    unreachable: Mapping[str, str],
    seed: int,
    sample_size: int,
    schema: Any,
) -> Any:
    """What each of Spark's Python tasks runs on one cluster (``key``: its name as an Arrow scalar, null for the
    lines without a readable cluster); bound to the run's settings with ``functools.partial``."""
    return cluster_table(
        key[0].as_py(),
        [declared],
        _texts(lines.column("value")),
        lines.column("file").to_pylist(),
        settings=settings,
        unreachable=unreachable,
        seed=seed,
        sample_size=sample_size,
        schema=schema,
    )
