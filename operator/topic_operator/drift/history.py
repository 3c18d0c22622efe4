"""Drift over time: the ``summary.json`` of earlier runs (``kto drift --history DIR``, one folder per run) read
back, ordered, and compared with the run being written.

Each run's summary carries a ``run_id`` and its ``generated_at`` time, which order the runs. Only the counts a
summary holds are compared (findings per cluster and kind), so what is "new" or "fixed" since the previous run
is a count that rose or fell, not a finding followed by its topic. A file that cannot be read, or is not a
summary ``kto drift`` wrote, is named with why and left out of the trend: it never stops the run.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import jsonschema

from topic_operator.drift.outputs import SUMMARY

__all__ = [
    "MAX_SUMMARY_BYTES",
    "CountChange",
    "History",
    "RunCounts",
    "changes_since",
    "read_history",
    "run_counts",
]

MAX_SUMMARY_BYTES: Final = 64 * 1024 * 1024
"""A larger file is left out unread: a fleet of 10,000 clusters writes a summary of a few MB."""

_COUNTS: Final = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}
_SUMMARY_SCHEMA: Final = {
    "type": "object",
    "required": ["generated_at", "totals", "clusters"],
    "properties": {
        "run_id": {"type": "string", "minLength": 1},
        "generated_at": {"type": "string"},
        "totals": {
            "type": "object",
            "required": ["findings", "by_kind", "by_severity"],
            "properties": {
                "findings": {"type": "integer", "minimum": 0},
                "by_kind": _COUNTS,
                "by_severity": _COUNTS,
            },
        },
        "clusters": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "findings"],
                "properties": {"name": {"type": "string"}, "findings": _COUNTS},
            },
        },
    },
}
"""The part of ``summary.json`` the trend reads (``outputs.summary_document`` writes it)."""
_VALIDATOR: Final = jsonschema.Draft7Validator(_SUMMARY_SCHEMA)


@dataclass(frozen=True, slots=True)
class RunCounts:
    """One run as the trend shows it."""

    run_id: str
    generated_at: datetime.datetime
    findings: int
    by_kind: Mapping[str, int]
    by_severity: Mapping[str, int]
    clusters: Mapping[str, Mapping[str, int]]
    """Cluster -> findings per kind."""

    @property
    def order(self) -> tuple[datetime.datetime, str]:
        return (self.generated_at, self.run_id)


@dataclass(frozen=True, slots=True)
class History:
    """The earlier runs found, oldest first, and the files left out with why."""

    directory: str
    runs: Sequence[RunCounts] = ()
    left_out: Sequence[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CountChange:
    cluster: str
    kind: str
    before: int
    now: int


def run_counts(document: Any, *, fallback_id: str = "") -> RunCounts:
    """The counts of a summary document; raises ``ValueError`` saying why it is not one ``kto drift`` wrote.
    A summary written before runs had ids (no ``run_id``) takes ``fallback_id``."""
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the document"
        raise ValueError(f"{where}: {error.message}")
    try:
        generated_at = datetime.datetime.fromisoformat(document["generated_at"])
    except ValueError:
        raise ValueError(f"generated_at: {document['generated_at']!r} is not an ISO 8601 time") from None
    if generated_at.tzinfo is None:
        generated_at = generated_at.replace(tzinfo=datetime.UTC)
    totals = document["totals"]
    return RunCounts(
        run_id=str(document.get("run_id") or fallback_id),
        generated_at=generated_at,
        findings=int(totals["findings"]),
        by_kind=dict(totals["by_kind"]),
        by_severity=dict(totals["by_severity"]),
        clusters={c["name"]: dict(c["findings"]) for c in document["clusters"]},
    )


def read_history(directory: str | Path, *, current: Path | None = None) -> History:
    """Every ``DIR/<run>/summary.json`` but ``current``'s (the folder this run writes), oldest first. A folder
    without one, a file that cannot be read or parsed, or one that is not a drift summary is named in
    ``left_out`` with why. A ``DIR`` that is not a directory leaves everything out, saying so."""
    root = Path(directory)
    if not root.is_dir():
        return History(str(root), (), [f"{root}: not a directory, so no earlier run is shown"])
    skip = current.resolve() if current is not None else None
    runs: list[RunCounts] = []
    left_out: list[str] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if skip is not None and folder.resolve() == skip:
            continue
        path = folder / SUMMARY
        try:
            run = _read(path, folder.name)
        except (OSError, ValueError) as error:
            left_out.append(f"{path}: left out of the trend: {error}")
            continue
        runs.append(run)
    return History(str(root), sorted(runs, key=lambda r: r.order), left_out)


def _read(path: Path, folder: str) -> RunCounts:
    if not path.exists():
        raise ValueError(f"no {SUMMARY} in the folder")
    size = path.stat().st_size
    if size > MAX_SUMMARY_BYTES:
        raise ValueError(f"{size:,} bytes, more than a drift summary's {MAX_SUMMARY_BYTES:,}")
    try:
        document = json.loads(path.read_bytes())
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error})") from None
    except RecursionError:
        raise ValueError("not JSON a reader takes (nested too deeply)") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        return run_counts(document, fallback_id=folder)
    except ValueError as error:
        raise ValueError(f"not a kto drift summary ({error})") from None


def changes_since(previous: RunCounts, current: RunCounts) -> tuple[list[CountChange], list[CountChange]]:
    """(new, fixed): each cluster and kind whose count rose since ``previous``, and each whose count fell, by
    cluster then kind. A cluster absent from a run counts 0 there."""
    new: list[CountChange] = []
    fixed: list[CountChange] = []
    for cluster in sorted(set(previous.clusters) | set(current.clusters)):
        before, now = previous.clusters.get(cluster, {}), current.clusters.get(cluster, {})
        for kind in sorted(set(before) | set(now)):
            change = CountChange(cluster, kind, before.get(kind, 0), now.get(kind, 0))
            if change.now > change.before:
                new.append(change)
            elif change.now < change.before:
                fixed.append(change)
    return new, fixed
