"""``report.html``: what a platform team reads after a drift run, as one self-contained file.

Sections, in order: the fleet summary (clusters, topics, findings by severity, what the plans would do), drift by
kind (a stacked bar chart per cluster and a table explaining each kind), with ``--history`` drift over time
(findings by kind and by cluster across runs, as charts and tables, and what rose or fell since the previous
run), an overview table of every cluster, then one section per cluster (its findings, errors first, and its
brokers' replica and leader counts with the range that is not skew), manifest problems, and how the run went
(inputs, phase timings).

Charts are drawn with matplotlib's object API (no pyplot, so no global state and no display) and embedded as
base64 PNG, so the file reads offline and can be attached to a ticket. Every text that came from outside --
cluster and topic names, config values, messages -- is HTML-escaped. Pure: the job hands over collected values.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from topic_operator.drift.history import CountChange, History, RunCounts, changes_since, run_counts
from topic_operator.drift.kinds import KIND_INFO, Finding, Kind, Severity, skew_bounds
from topic_operator.drift.outputs import PLANS_DIR, ClusterSummary
from topic_operator.drift.rules import BrokerLoad

__all__ = ["ReportData", "render_report"]

MAX_CLUSTERS_IN_KIND_CHART: Final = 30
MAX_BROKER_CHARTS: Final = 12
"""Clusters whose broker chart is drawn (the most skewed first); the others get the table only, and the page
says so. Each chart costs about 60 ms, so this bounds the report's time on a large fleet."""

MAX_RUNS_IN_TREND: Final = 30
"""Runs the trend shows, the latest; every earlier summary stays in its folder."""
MAX_CLUSTERS_IN_TREND: Final = 8
"""Clusters drawn in the trend's chart by cluster (most findings now first); the table has 20."""
_MAX_CLUSTERS_IN_TREND_TABLE: Final = 20
_MAX_RUNS_IN_CLUSTER_TABLE: Final = 6
_MAX_CHANGES_LISTED: Final = 50

_DPI: Final = 96
_BAR_WIDTH: Final = 0.8
"""Of a category slot, as ``Axes.bar`` draws them."""
_PNG_COMPRESSION: Final = 1

_KIND_COLOURS: Final = dict(
    zip(
        list(Kind),
        (
            "#4e79a7", "#bab0ac", "#59a14f", "#e15759", "#b07aa1", "#f28e2b", "#9c755f",
            "#d37295", "#edc948", "#ff0000", "#76b7b2", "#86bcb6", "#a0cbe8", "#000000",
        ),
        strict=True,
    )
)  # fmt: skip

_STYLE: Final = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.error { color: #b00020; font-weight: 600; } .warning { color: #9a6700; } .info { color: #555; }
.meta { color: #555; } .chart { max-width: 100%; } code { font-size: 12px; }
.cards { display: flex; gap: 1em; flex-wrap: wrap; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: .6em 1em; min-width: 9em; }
.card b { display: block; font-size: 1.6em; }
"""


@dataclass(frozen=True, slots=True)
class ReportData:
    summary: Mapping[str, Any]
    """``summary.json``'s document."""
    clusters: Sequence[ClusterSummary]
    findings: Sequence[Finding]
    """The findings the tables show (the job sends the first few of each cluster, errors first)."""
    loads: Sequence[BrokerLoad]
    history: History | None = None
    """Earlier runs (``--history``): None, no trend section."""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _png(figure: Figure) -> str:
    """One draw: no ``bbox_inches="tight"`` (it draws the figure twice to measure it), as the charts set their
    margins in inches; fast zlib, as the PNGs are small either way; no software tag."""
    buffer = io.BytesIO()
    figure.savefig(
        buffer, format="png", metadata={"Software": None}, pil_kwargs={"compress_level": _PNG_COMPRESSION}
    )
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img class="chart" alt="chart" src="data:image/png;base64,{encoded}">'


def _figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas, which ``savefig`` keeps (rather than making one per call), so draws of
    the same size share one renderer and the text metrics it caches."""
    figure = Figure(figsize=(width, height), dpi=_DPI)
    FigureCanvasAgg(figure)
    return figure


def _margins(
    figure: Figure, *, left: float, right: float, top: float, bottom: float, gap: float = 0.0
) -> None:
    """Margins and the gap between side-by-side axes, in inches. Cheaper than a layout engine, which measures
    every text of the figure (about the cost of a draw)."""
    width, height = (float(v) for v in figure.get_size_inches())
    columns = max(1, len(figure.axes))
    axes_width = (width - left - right - gap * (columns - 1)) / columns
    figure.subplots_adjust(
        left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height,
        wspace=gap / axes_width,
    )  # fmt: skip


def _bars(
    slots: Sequence[int], starts: Sequence[float], ends: Sequence[float], *, horizontal: bool
) -> list[list[tuple[float, float]]]:
    """Bars (one per category slot, from start to end) as the rectangles of one ``PolyCollection``: an
    artist per bar, as ``Axes.bar`` makes, is a large part of a bar chart's cost."""
    half = _BAR_WIDTH / 2
    if horizontal:
        return [
            [(s, y - half), (e, y - half), (e, y + half), (s, y + half)]
            for y, s, e in zip(slots, starts, ends, strict=True)
            if e != s
        ]
    return [
        [(x - half, s), (x - half, e), (x + half, e), (x + half, s)]
        for x, s, e in zip(slots, starts, ends, strict=True)
        if e != s
    ]


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Iterable[int] = ()) -> str:
    """Cells are HTML already (callers escape); ``numeric`` columns are right-aligned."""
    right = set(numeric)
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="n">{c}</td>' if i in right else f"<td>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _severity(value: str) -> str:
    return f'<span class="{_e(value)}">{_e(value)}</span>'


# -- charts ------------------------------------------------------------------------------------------------------


def kind_chart(clusters: Sequence[ClusterSummary]) -> str | None:
    """Stacked horizontal bars: findings per kind for the clusters with the most findings."""
    shown = sorted((c for c in clusters if c.total), key=lambda c: (-c.total, c.name))[
        :MAX_CLUSTERS_IN_KIND_CHART
    ]
    if not shown:
        return None
    shown.reverse()  # the first row is drawn at the bottom
    kinds = [k for k in Kind if any(c.findings.get(k.value) for c in shown)]
    figure = _figure(10, 1.2 + 0.32 * len(shown))
    axes = figure.subplots()
    slots = range(len(shown))
    left = [0] * len(shown)
    for kind in kinds:
        right = [a + c.findings.get(kind.value, 0) for a, c in zip(left, shown, strict=True)]
        bars = PolyCollection(
            _bars(slots, left, right, horizontal=True),
            facecolors=_KIND_COLOURS[kind],
            label=KIND_INFO[kind].title,
        )
        axes.add_collection(bars)
        left = right
    axes.set_xlim(0, max(*left, 1) * 1.05)
    axes.set_ylim(-0.6, len(shown) - 0.4)
    axes.set_yticks(slots, [c.name for c in shown])
    axes.set_xlabel("findings")
    axes.legend(loc="lower right", fontsize=8)
    axes.set_title("Drift by kind per cluster", y=1.0)  # a fixed position spares a pass measuring the ticks
    names = max(label.get_window_extent().width for label in axes.get_yticklabels()) / _DPI
    figure.set_size_inches(max(10.0, names + 7.5), figure.get_figheight())  # long names keep the bars' room
    _margins(figure, left=names + 0.2, right=0.3, top=0.45, bottom=0.6)
    return _png(figure)


def _run_label(run: RunCounts) -> str:
    return run.generated_at.strftime("%Y-%m-%d\n%H:%M")


def trend_kind_chart(runs: Sequence[RunCounts]) -> str:
    """Stacked bars: findings per kind in each run, oldest left."""
    kinds = [k for k in Kind if any(r.by_kind.get(k.value) for r in runs)]
    figure = _figure(min(14.0, 6 + 0.5 * len(runs)), 4.2)
    axes = figure.subplots()
    slots = range(len(runs))
    bottom = [0] * len(runs)
    for kind in kinds:
        top = [b + r.by_kind.get(kind.value, 0) for b, r in zip(bottom, runs, strict=True)]
        axes.add_collection(
            PolyCollection(
                _bars(slots, bottom, top, horizontal=False),
                facecolors=_KIND_COLOURS[kind],
                label=KIND_INFO[kind].title,
            )
        )
        bottom = top
    axes.set_xlim(-0.6, len(runs) - 0.4)
    axes.set_ylim(0, max(*bottom, 1) * 1.08)
    axes.set_xticks(slots, [_run_label(r) for r in runs], fontsize=7)
    axes.set_ylabel("findings")
    axes.set_title("Findings by kind per run", y=1.0)
    if kinds:
        axes.legend(loc="upper left", fontsize=7, bbox_to_anchor=(1.01, 1.0))
    _margins(figure, left=0.7, right=2.4, top=0.4, bottom=0.7)
    return _png(figure)


def trend_cluster_chart(runs: Sequence[RunCounts], clusters: Sequence[str]) -> str:
    """A line per cluster: its findings in each run (0 where a run did not have it)."""
    figure = _figure(min(14.0, 6 + 0.5 * len(runs)), 4.2)
    axes = figure.subplots()
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    slots = list(range(len(runs)))
    highest = 1
    for cluster in clusters:
        values = [sum(r.clusters.get(cluster, {}).values()) for r in runs]
        highest = max(highest, *values)
        axes.plot(slots, values, marker="o", markersize=3, linewidth=1.5, label=cluster)
    axes.set_xlim(-0.6, len(runs) - 0.4)
    axes.set_ylim(0, highest * 1.08)
    axes.set_xticks(slots, [_run_label(r) for r in runs], fontsize=7)
    axes.set_ylabel("findings")
    axes.set_title("Findings per cluster per run", y=1.0)
    axes.legend(loc="upper left", fontsize=7, bbox_to_anchor=(1.01, 1.0))
    _margins(figure, left=0.7, right=2.4, top=0.4, bottom=0.7)
    return _png(figure)


class _BrokerCharts:
    """Replicas and leaders per broker side by side, with the band of counts that is not skew.

    One figure serves every cluster and only its data changes between clusters: making axes and their ticks
    costs about as much as drawing them, and the canvas's renderer keeps the text metrics it measured."""

    _HEIGHT: Final = 3.2

    def __init__(self) -> None:
        self._figure = _figure(8, self._HEIGHT)
        self._title = self._figure.suptitle("", fontsize=10)
        self._panels: list[tuple[Axes, str, Rectangle, PolyCollection, Legend]] = []
        for axes, what, colour in zip(
            self._figure.subplots(1, 2), ("replicas", "leaders"), ("#4e79a7", "#f28e2b"), strict=True
        ):
            band = axes.axhspan(0, 1, color="#59a14f", alpha=0.15, label="not skewed")
            bars = PolyCollection([], facecolors=colour)
            axes.add_collection(bars)
            legend = axes.legend(handles=[band], loc="lower right", fontsize=7)
            axes.set_title(f"{what} per broker", fontsize=10, y=1.0)
            axes.tick_params(axis="x", labelsize=7)
            self._panels.append((axes, what, band, bars, legend))

    def draw(self, cluster: str, loads: Sequence[BrokerLoad]) -> str:
        self._figure.set_size_inches(min(14.0, 3 + 0.45 * len(loads)), self._HEIGHT)
        _margins(self._figure, left=0.55, right=0.15, top=0.55, bottom=0.3, gap=0.6)
        self._title.set_text(cluster)
        slots = range(len(loads))
        labels = [f"{load.broker}" + ("" if load.registered else "?") for load in loads]
        registered = [load for load in loads if load.registered]
        for axes, what, band, bars, legend in self._panels:
            values: list[int] = [getattr(load, what) for load in loads]
            total: int = sum(getattr(load, what) for load in registered)
            top = max(values, default=0)
            skewable = len(registered) >= 2 and total > 0
            if skewable:
                low, high = skew_bounds(total, len(registered))
                band.set_y(low)
                band.set_height(high - low)
                top = max(top, high)
            band.set_visible(skewable)
            legend.set_visible(skewable)
            bars.set_verts(_bars(slots, [0] * len(values), values, horizontal=False))
            axes.set_xticks(slots, labels)
            axes.set_xlim(-0.6, len(loads) - 0.4)
            axes.set_ylim(0, max(top, 1) * 1.05)
        return _png(self._figure)


# -- sections ----------------------------------------------------------------------------------------------------


def _fleet(summary: Mapping[str, Any]) -> str:
    totals = summary["totals"]
    severities = totals["by_severity"]
    plan = totals["plan"]
    cards = [
        ("clusters", f"{totals['observed_clusters']} of {totals['clusters']} observed"),
        ("topics in clusters", totals["topics"]),
        ("declared topics", totals["declared_topics"]),
        ("findings", totals["findings"]),
        ("errors", severities.get("error", 0)),
        ("warnings", severities.get("warning", 0)),
        ("info", severities.get("info", 0)),
    ]
    html_cards = "".join(f'<div class="card"><b>{_e(v)}</b>{_e(k)}</div>' for k, v in cards)
    plans = ", ".join(f"{_e(n)} {_e(s)}" for s, n in plan.items() if n)
    return (
        '<section id="fleet"><h2>Fleet summary</h2>'
        f'<div class="cards">{html_cards}</div>'
        f"<p>What the plans in <code>{PLANS_DIR}/</code> would do, in topics: {plans or 'nothing'}.</p></section>"
    )


def _kinds(clusters: Sequence[ClusterSummary], summary: Mapping[str, Any]) -> str:
    by_kind = summary["totals"]["by_kind"]
    rows = [
        (_e(KIND_INFO[k].title), f"<code>{_e(k.value)}</code>", _severity(KIND_INFO[k].severity.value), _e(KIND_INFO[k].description), _e(by_kind.get(k.value, 0)))
        for k in Kind
    ]  # fmt: skip
    chart = kind_chart(clusters)
    shown = min(MAX_CLUSTERS_IN_KIND_CHART, sum(1 for c in clusters if c.total))
    note = (
        f"<p class=meta>The {shown} clusters with the most findings.</p>"
        if chart
        else "<p>No drift found.</p>"
    )
    return (
        '<section id="kinds"><h2>Drift by kind</h2>'
        f"{chart or ''}{note}"
        f"{_table(['kind', 'name', 'severity', 'meaning', 'findings'], rows, numeric=[4])}</section>"
    )


def _trend(history: History, summary: Mapping[str, Any]) -> str:
    current = run_counts(summary)
    runs = [*history.runs, current][-MAX_RUNS_IN_TREND:]
    parts = ['<section id="trend"><h2>Drift over time</h2>']
    earlier = len(history.runs)
    parts.append(
        f"<p class=meta>This run and {earlier} earlier runs from <code>{_e(history.directory)}</code>"
        + (f"; the latest {len(runs)} are shown" if earlier + 1 > len(runs) else "")
        + ", ordered by the time each ran.</p>"
    )
    if history.left_out:
        items = "".join(f'<li class="warning">{_e(problem)}</li>' for problem in history.left_out)
        parts.append(f"<p>Left out of the trend:</p><ul>{items}</ul>")
    if not history.runs:
        parts.append("<p>No earlier run to compare with: the trend starts with this run.</p></section>")
        return "".join(parts)
    ranked = sorted(
        {c for r in runs for c in r.clusters},
        key=lambda c: (-sum(current.clusters.get(c, {}).values()), -max(sum(r.clusters.get(c, {}).values()) for r in runs), c),
    )  # fmt: skip
    parts.append(trend_kind_chart(runs))
    kinds = [k.value for k in Kind if any(r.by_kind.get(k.value) for r in runs)]
    rows = [
        (
            _e(r.generated_at.isoformat(timespec="seconds")), f"<code>{_e(r.run_id)}</code>", _e(r.findings),
            *(_e(r.by_severity.get(s.value, 0)) for s in Severity), *(_e(r.by_kind.get(k, 0)) for k in kinds),
        )
        for r in runs
    ]  # fmt: skip
    headers = ["run", "id", "findings", *(s.value for s in Severity), *kinds]
    parts.append(_table(headers, rows, numeric=range(2, len(headers))))
    parts.append(trend_cluster_chart(runs, ranked[:MAX_CLUSTERS_IN_TREND]))
    recent = runs[-_MAX_RUNS_IN_CLUSTER_TABLE:]
    cluster_rows = [
        (_e(c), *(_e(sum(r.clusters[c].values())) if c in r.clusters else "-" for r in recent))
        for c in ranked[:_MAX_CLUSTERS_IN_TREND_TABLE]
    ]
    parts.append(
        _table(["cluster", *(r.generated_at.isoformat(timespec="seconds") for r in recent)], cluster_rows,
               numeric=range(1, len(recent) + 1))
    )  # fmt: skip
    if len(ranked) > _MAX_CLUSTERS_IN_TREND_TABLE:
        parts.append(f"<p class=meta>The {_MAX_CLUSTERS_IN_TREND_TABLE} clusters with the most findings now, of {len(ranked)}.</p>")  # fmt: skip
    previous = history.runs[-1]
    new, fixed = changes_since(previous, current)
    parts.append(
        f"<h3>Since the previous run ({_e(previous.generated_at.isoformat(timespec='seconds'))}, "
        f"<code>{_e(previous.run_id)}</code>)</h3>"
        "<p class=meta>Counts of findings per cluster and kind that rose (new) or fell (fixed); "
        "<code>drift.parquet</code> of each run has the findings themselves.</p>"
    )
    parts.append(_changes("New", new))
    parts.append(_changes("Fixed", fixed))
    parts.append("</section>")
    return "".join(parts)


def _changes(title: str, changes: Sequence[CountChange]) -> str:
    if not changes:
        return f"<p>{_e(title)}: none.</p>"
    rows = [
        (_e(c.cluster), f"<code>{_e(c.kind)}</code>", _e(c.before), _e(c.now), _e(f"{c.now - c.before:+d}"))
        for c in changes[:_MAX_CHANGES_LISTED]
    ]
    more = (
        f"<p class=meta>... and {len(changes) - _MAX_CHANGES_LISTED} more.</p>"
        if len(changes) > _MAX_CHANGES_LISTED
        else ""
    )
    table = _table(["cluster", "kind", "previous run", "this run", "change"], rows, numeric=[2, 3, 4])
    return f"<p>{_e(title)} ({len(changes)}):</p>{table}{more}"


def _overview(clusters: Sequence[ClusterSummary]) -> str:
    rows = []
    for number, c in enumerate(clusters):
        plan_link = (
            f'<a href="{_e(PLANS_DIR)}/{_e(c.plan_file)}">{_e(c.plan_file)}</a>' if c.plan_file else "-"
        )
        rows.append(
            (
                f'<a href="#cluster-{number}">{_e(c.name)}</a>',
                _e(c.taken_at or ("not observed" if not c.observed else "")),
                _e(c.brokers), _e(c.racks), _e(c.declared), _e(c.topics),
                _e(c.severities.get("error", 0)), _e(c.severities.get("warning", 0)), _e(c.severities.get("info", 0)),
                _e(c.plan.get("create", 0)), _e(c.plan.get("change", 0)), _e(c.plan.get("rejected", 0)),
                plan_link,
            )
        )  # fmt: skip
    headers = ["cluster", "snapshot", "brokers", "racks", "declared", "topics", "errors", "warnings", "info",
               "create", "change", "rejected", "plan"]  # fmt: skip
    return f'<section id="clusters"><h2>Clusters</h2>{_table(headers, rows, numeric=range(2, 12))}</section>'


def _cluster_section(
    number: int,
    cluster: ClusterSummary,
    findings: Sequence[Finding],
    loads: Sequence[BrokerLoad],
    charts: _BrokerCharts | None,
) -> str:
    parts = [f'<section id="cluster-{number}"><h3>Cluster {_e(cluster.name)}</h3>']
    if not cluster.observed:
        parts.append(
            f'<p class="error">Not observed: {_e(cluster.unobserved_reason or "no snapshot rows")}.</p>'
        )
    else:
        if cluster.read is not None:
            how = f"Read {_e(cluster.read['from'])} through {_e(cluster.read['through'])}"
            stage = cluster.read.get("stage")
            parts.append(f"<p class=meta>{how}{f', at stage {_e(stage)}' if stage else ''}.</p>")
        parts.append(
            f"<p class=meta>Snapshot taken at {_e(cluster.taken_at)}; {_e(cluster.brokers)} brokers in "
            f"{_e(cluster.racks)} racks; {_e(cluster.topics)} topics, {_e(cluster.declared)} declared.</p>"
        )
        if cluster.kafka_release is not None:
            warned = "Warning:" in cluster.kafka_release
            parts.append(f"<p class={'error' if warned else 'meta'}>{_e(cluster.kafka_release)}</p>")
    if findings:
        rows: list[tuple[str, ...]] = [
            (_severity(f.severity), _e(f.kind), _e(f.topic or ""), _e(f.field), _e(f.desired), _e(f.actual), _e(f.action), _e(f.message))
            for f in findings
        ]  # fmt: skip
        shown = (
            f"{len(findings)} of {cluster.total}" if cluster.total > len(findings) else f"all {cluster.total}"
        )
        parts.append(f"<p>Findings ({shown}; every one is in <code>drift.parquet</code>):</p>")
        parts.append(
            _table(["severity", "kind", "topic", "field", "desired", "actual", "action", "message"], rows)
        )
    else:
        parts.append("<p>No findings.</p>")
    if loads:
        if charts is not None:
            parts.append(charts.draw(cluster.name, loads))
        broker_rows: list[tuple[str, ...]] = [
            (_e(b.broker), _e(b.rack or "-"), "yes" if b.registered else '<span class="error">no</span>', _e(b.replicas), _e(b.leaders))
            for b in loads
        ]  # fmt: skip
        parts.append(
            _table(["broker", "rack", "registered", "replicas", "leaders"], broker_rows, numeric=[3, 4])
        )
    parts.append("</section>")
    return "".join(parts)


def _problems(summary: Mapping[str, Any]) -> str:
    errors, warnings = summary.get("manifest_errors", []), summary.get("warnings", [])
    if not errors and not warnings:
        return '<section id="manifests"><h2>Manifests</h2><p>Every manifest was valid.</p></section>'
    items = "".join(f'<li class="error">{_e(e)}</li>' for e in errors)
    items += "".join(f'<li class="warning">{_e(w)}</li>' for w in warnings)
    return (
        '<section id="manifests"><h2>Manifests</h2><p>Topics with errors were left out of the plans, as '
        f"<code>kto plan</code> leaves them out.</p><ul>{items}</ul></section>"
    )


def _about(summary: Mapping[str, Any]) -> str:
    inputs = summary.get("inputs", {})
    rows = [(_e(k), f"<code>{_e(v)}</code>") for k, v in inputs.items()]
    timings = [(_e(k), _e(f"{v:.1f}")) for k, v in summary.get("timings_seconds", {}).items()]
    return (
        '<section id="run"><h2>The run</h2>'
        f"<p class=meta>Generated at {_e(summary.get('generated_at'))}, placement seed {_e(summary.get('seed'))}.</p>"
        f"{_table(['input', 'value'], rows)}{_table(['phase', 'seconds'], timings, numeric=[1])}</section>"
    )


def _chart_clusters(clusters: Sequence[ClusterSummary], loads: Mapping[str, object]) -> set[str]:
    """The clusters whose broker charts are drawn: most skew findings first, then most findings."""

    def skew(c: ClusterSummary) -> int:
        return c.findings.get(Kind.REPLICA_SKEW.value, 0) + c.findings.get(Kind.LEADER_SKEW.value, 0)

    ranked = sorted(
        (c for c in clusters if c.observed and c.name in loads), key=lambda c: (-skew(c), -c.total, c.name)
    )
    return {c.name for c in ranked[:MAX_BROKER_CHARTS]}


def render_report(data: ReportData) -> str:
    summary = data.summary
    by_cluster: dict[str, list[Finding]] = {}
    for finding in data.findings:
        by_cluster.setdefault(finding.cluster, []).append(finding)
    rank = {s.value: s.rank for s in Severity}
    for findings in by_cluster.values():
        findings.sort(key=lambda f: (rank.get(f.severity, 9), *f.sort_key()))
    loads: dict[str, list[BrokerLoad]] = {}
    for load in data.loads:
        loads.setdefault(load.cluster, []).append(load)
    charted = _chart_clusters(data.clusters, loads)
    charts = _BrokerCharts() if charted else None
    sections = "".join(
        _cluster_section(
            n, c, by_cluster.get(c.name, []), loads.get(c.name, []), charts if c.name in charted else None
        )
        for n, c in enumerate(data.clusters)
    )
    uncharted = sum(1 for c in data.clusters if c.observed and c.name in loads) - len(charted)
    chart_note = (
        f"<p class=meta>Broker charts are drawn for the {len(charted)} clusters with the most skew findings; "
        f"each of the other {uncharted} has its broker table, and every skew finding is in "
        "<code>drift.parquet</code>.</p>"
        if uncharted > 0
        else ""
    )
    totals = summary["totals"]
    title = f"Topic drift across {totals['clusters']} clusters"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title><style>{_STYLE}</style></head><body>'
        f"<h1>{_e(title)}</h1>"
        f"<p class=meta>kto drift, generated at {_e(summary.get('generated_at'))}. Findings: <code>drift.parquet</code>; "
        f"plans: <code>{PLANS_DIR}/&lt;cluster&gt;.json</code>; totals: <code>summary.json</code>.</p>"
        f"{_fleet(summary)}{_kinds(data.clusters, summary)}"
        f"{_trend(data.history, summary) if data.history is not None else ''}{_overview(data.clusters)}"
        f'<section id="per-cluster"><h2>Per cluster</h2>{chart_note}{sections}</section>'
        f"{_problems(summary)}{_about(summary)}"
        "</body></html>\n"
    )
