"""The summaries ``kto drift --history`` reads back: what ``summary_document`` writes is read as a run, runs are
ordered by their time, and anything else is left out with why."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from topic_operator.drift.history import CountChange, changes_since, read_history, run_counts
from topic_operator.drift.outputs import ClusterSummary, new_run_id, summary_document, summary_text

EARLY = datetime.datetime(2025, 6, 1, 8, 0, tzinfo=datetime.UTC)


def summary(at: datetime.datetime, **findings: dict[str, int]) -> dict[str, Any]:
    clusters = [
        ClusterSummary(name, observed=True, findings=dict(kinds), severities={"warning": sum(kinds.values())})
        for name, kinds in findings.items()
    ]
    return summary_document(
        clusters, run_id=new_run_id(at), generated_at=at.isoformat(timespec="seconds"), seed=0, inputs={},
        manifest_errors=[], warnings=[], timings={},
    )  # fmt: skip


def write_run(root: Path, folder: str, document: object) -> Path:
    (root / folder).mkdir(parents=True)
    path = root / folder / "summary.json"
    path.write_text(summary_text(document) if isinstance(document, dict) else str(document))
    return path


def test_a_summary_the_job_writes_is_read_back_as_its_run() -> None:
    document = summary(EARLY, east={"missing": 2, "unmanaged": 1}, west={})
    run = run_counts(json.loads(summary_text(document)))
    assert run.run_id == document["run_id"]
    assert run.run_id.startswith("20250601T080000Z-")
    assert (run.generated_at, run.findings) == (EARLY, 3)
    assert run.by_kind["missing"] == 2
    assert run.clusters == {"east": {"missing": 2, "unmanaged": 1}, "west": {}}


def test_runs_are_ordered_by_their_time_and_the_current_folder_is_not_history(tmp_path: Path) -> None:
    later = EARLY + datetime.timedelta(days=1)
    write_run(tmp_path, "a", summary(later, east={"missing": 1}))
    write_run(tmp_path, "b", summary(EARLY, east={"missing": 3}))
    write_run(tmp_path, "current", summary(later + datetime.timedelta(days=1)))
    history = read_history(tmp_path, current=tmp_path / "current")
    assert [r.generated_at for r in history.runs] == [EARLY, later]
    assert history.left_out == []


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[1, 2]", "not a kto drift summary (the document: [1, 2] is not of type 'object')"),
        ('{"generated_at": "yesterday", "totals": {"findings": 0, "by_kind": {}, "by_severity": {}}, "clusters": []}',
         "not a kto drift summary (generated_at: 'yesterday' is not an ISO 8601 time)"),
        ('{"generated_at": "2025-06-01T08:00:00+00:00", "totals": {"findings": 1, "by_kind": {"missing": -1}, "by_severity": {}}, "clusters": []}',
         "not a kto drift summary (totals/by_kind/missing: -1 is less than the minimum of 0)"),
        ("{", "not JSON"),
        ("[" * 100_000, "not JSON"),
    ],
    ids=["a-list", "a-bad-time", "a-negative-count", "truncated", "nested-deeper-than-json-reads"],
)  # fmt: skip
def test_a_foreign_summary_is_left_out_with_why(tmp_path: Path, content: str, why: str) -> None:
    write_run(tmp_path, "good", summary(EARLY))
    path = write_run(tmp_path, "odd", content)
    history = read_history(tmp_path)
    assert len(history.runs) == 1
    (problem,) = history.left_out
    assert problem.startswith(f"{path}: left out of the trend: {why}")


def test_a_history_that_is_not_a_directory_is_said_so(tmp_path: Path) -> None:
    history = read_history(tmp_path / "nowhere")
    assert (history.runs, history.left_out) == (
        (),
        [f"{tmp_path / 'nowhere'}: not a directory, so no earlier run is shown"],
    )


def test_what_rose_is_new_and_what_fell_is_fixed() -> None:
    before = run_counts(summary(EARLY, east={"missing": 2, "unmanaged": 1}, gone={"offline": 1}))
    now = run_counts(summary(EARLY, east={"missing": 0, "unmanaged": 4}, fresh={"offline": 2}))
    new, fixed = changes_since(before, now)
    assert new == [CountChange("east", "unmanaged", 1, 4), CountChange("fresh", "offline", 0, 2)]
    assert fixed == [CountChange("east", "missing", 2, 0), CountChange("gone", "offline", 1, 0)]
