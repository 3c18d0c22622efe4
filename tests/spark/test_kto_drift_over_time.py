"""``kto drift --history DIR``: each run's summary.json carries a run id and time; the report shows
drift over time (by kind and by cluster, as charts and tables) and what rose or fell since the previous run; a
folder whose summary.json is unreadable or foreign is named and left out, and the run goes on. The processes
engine: no Spark session is started."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from drift_fleets import small_fleet, write_snapshots
from test_kto_drift_command import write_manifests

from topic_operator.drift.command import main


def drift(manifests: Path, snapshots: Path, out: Path, history: Path) -> int:
    return main(
        ["--desired", str(manifests), "--snapshots", str(snapshots), "--out", str(out), "--history", str(history),
         "--engine", "processes", "--processes", "1", "-q"]
    )  # fmt: skip


def test_drift_over_time_with_a_foreign_and_a_broken_summary_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = small_fleet()
    manifests = write_manifests(fleet, tmp_path / "manifests")
    snapshots = write_snapshots(fleet, tmp_path / "snapshots")
    history = tmp_path / "history"
    history.mkdir()
    # the folders' names sort the other way round from the runs' times: the runs' own times order them
    assert drift(manifests, snapshots, history / "z-first", history) == 2
    first = json.loads((history / "z-first" / "summary.json").read_text())
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{8}", first["run_id"])
    assert "<h2>Drift over time</h2>" in (history / "z-first" / "report.html").read_text()
    assert "No earlier run to compare with" in (history / "z-first" / "report.html").read_text()
    capsys.readouterr()

    (
        manifests / "east.yaml"
    ).unlink()  # east's topics are no longer declared: missing ones go, unmanaged come
    foreign, broken = history / "notes" / "summary.json", history / "broken" / "summary.json"
    binary = history / "binary" / "summary.json"
    for path, content in ((foreign, b'{"hello": "world"}'), (broken, b'{"run_id": "x", "generated_at": '), (binary, b"\xff\xfe\x00")):  # fmt: skip
        path.parent.mkdir()
        path.write_bytes(content)
    (history / "empty").mkdir()
    code = drift(manifests, snapshots, history / "a-second", history)
    err = capsys.readouterr().err
    assert code == 2
    second = json.loads((history / "a-second" / "summary.json").read_text())
    assert second["run_id"] != first["run_id"]
    assert (
        f"warning: {foreign}: left out of the trend: not a kto drift summary (the document: 'generated_at' is a required property)"
        in err
    )
    assert f"warning: {broken}: left out of the trend: not JSON" in err
    assert f"warning: {binary}: left out of the trend: not UTF-8 text" in err
    assert (
        f"warning: {history / 'empty' / 'summary.json'}: left out of the trend: no summary.json in the folder"
        in err
    )

    report = html.unescape((history / "a-second" / "report.html").read_text())
    trend = report[report.index("<h2>Drift over time</h2>") : report.index('<section id="clusters">')]
    assert "This run and 1 earlier runs from" in trend
    assert str(foreign) in trend
    assert str(broken) in trend
    assert trend.count('<img class="chart"') == 2  # by kind, and by cluster
    ids = re.findall(r"<code>(\d{8}T\d{6}Z-[0-9a-f]{8})</code>", trend)
    assert ids[:2] == [first["run_id"], second["run_id"]]  # the runs table, oldest first
    east_before = next(c for c in first["clusters"] if c["name"] == "east")["findings"]
    east_now = next(c for c in second["clusters"] if c["name"] == "east")["findings"]
    missing, unmanaged = east_before["missing"], east_now["unmanaged"] - east_before.get("unmanaged", 0)
    assert missing > 0
    assert unmanaged > 0
    new, fixed = trend.index("<p>New ("), trend.index("<p>Fixed (")
    assert "<td>east</td><td><code>unmanaged</code></td>" in trend[new:fixed]
    assert (
        f'<tr><td>east</td><td><code>missing</code></td><td class="n">{missing}</td><td class="n">0</td><td class="n">-{missing}</td></tr>'
        in trend[fixed:]
    )
