"""report.html: the sections a platform team reads, charts embedded as PNG, and no text left unescaped."""

from __future__ import annotations

import base64
import re

import pytest

from topic_operator.drift import report
from topic_operator.drift.history import History, run_counts
from topic_operator.drift.kinds import Finding
from topic_operator.drift.outputs import ClusterSummary, summary_document
from topic_operator.drift.report import ReportData, render_report
from topic_operator.drift.rules import BrokerLoad

EVIL = "<script>alert(1)</script>"


def data() -> ReportData:
    clusters = [
        ClusterSummary("prod", True, declared=2, topics=3, brokers=3, racks=1, taken_at="2026-01-05T10:00:00+00:00",
                       plan_file="prod.json", plan={"create": 1, "unchanged": 1},
                       findings={"missing": 1, "replica_skew": 1}, severities={"warning": 1, "info": 1}),
        ClusterSummary(EVIL, False, declared=1, findings={"cluster_unobserved": 1}, severities={"error": 1},
                       unobserved_reason="ZooKeeperUnavailableError: nothing answered"),
    ]  # fmt: skip
    findings = [
        Finding("prod", EVIL, "missing", "topic", "partitions=3 replicas=3", None, "create", "warning", None),
        Finding(
            "prod", None, "replica_skew", "broker.2.replicas", "3..5", "0", "manual", "info", "12 replicas"
        ),
        Finding(
            EVIL, None, "cluster_unobserved", "snapshot", "1 declared topics", None, "manual", "error", EVIL
        ),
    ]
    loads = [BrokerLoad("prod", b, "r", True, n, n // 2) for b, n in ((0, 6), (1, 6), (2, 0))]
    summary = summary_document(
        clusters, run_id="20260105T100000Z-0a1b2c3d", generated_at="2026-01-05T10:00:00+00:00", seed=0,
        inputs={"desired": [EVIL]}, manifest_errors=[f"bad {EVIL}"],
        warnings=[], timings={"reading snapshots": 1.5},
    )  # fmt: skip
    return ReportData(summary, clusters, findings, loads)


def test_sections_and_tables() -> None:
    page = render_report(data())
    for section in ("fleet", "kinds", "clusters", "per-cluster", "manifests", "run"):
        assert f'<section id="{section}">' in page
    assert "Fleet summary" in page
    assert "Drift by kind" in page
    assert "Not observed: ZooKeeperUnavailableError: nothing answered." in page
    assert '<a href="plans/prod.json">prod.json</a>' in page


def test_charts_are_embedded_png() -> None:
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', render_report(data()))
    assert len(images) == 2  # drift by kind, and prod's brokers
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)


def test_every_outside_text_is_escaped() -> None:
    page = render_report(data())
    assert EVIL not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_broker_charts_are_capped_and_the_rest_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "MAX_BROKER_CHARTS", 1)
    base = data()
    calm = ClusterSummary("calm", True, brokers=2, findings={"missing": 1}, severities={"warning": 1})
    loads = [*base.loads, BrokerLoad("calm", 0, None, True, 3, 1), BrokerLoad("calm", 1, None, False, 0, 0)]
    page = render_report(ReportData(base.summary, [*base.clusters, calm], base.findings, loads))
    assert (
        len(re.findall(r'src="data:image/png;base64,', page)) == 2
    )  # drift by kind, and prod's (skewed) brokers
    assert "Broker charts are drawn for the 1 clusters with the most skew findings" in page
    assert "each of the other 1 has its broker table" in page
    assert "<td>1</td><td>-</td><td>" in page  # calm's broker table is still there


def test_the_trend_shows_earlier_runs_and_escapes_what_came_from_outside() -> None:
    base = data()
    earlier = summary_document(
        [ClusterSummary(EVIL, True, findings={"missing": 3}), ClusterSummary("prod", True, findings={"offline": 1})],
        run_id=EVIL, generated_at="2026-01-04T10:00:00+00:00", seed=0, inputs={}, manifest_errors=[],
        warnings=[], timings={},
    )  # fmt: skip
    history = History("runs/", [run_counts(earlier)], [f"runs/x/summary.json: left out of the trend: {EVIL}"])
    page = render_report(ReportData(base.summary, base.clusters, base.findings, base.loads, history))
    assert "<script>" not in page
    trend = page[page.index("<h2>Drift over time</h2>") : page.index('<section id="clusters">')]
    assert "This run and 1 earlier runs from <code>runs/</code>" in trend
    assert trend.count('<img class="chart"') == 2
    assert "left out of the trend: &lt;script&gt;" in trend
    assert '<td class="n">3</td><td class="n">0</td><td class="n">-3</td>' in trend  # missing fixed on EVIL
    assert (
        '<td>prod</td><td><code>missing</code></td><td class="n">0</td><td class="n">1</td><td class="n">+1</td>'
        in trend
    )


def test_without_history_there_is_no_trend() -> None:
    assert "Drift over time" not in render_report(data())
