"""A measured figure is written down once, on the speed page beside how it was measured, and every other place that
quotes it (the README, the site's front page, the benchmarks page) quotes that page: the same numbers, so a new
measurement cannot leave an old one standing elsewhere."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPEED = REPO / "docs" / "development" / "speed.md"

pytestmark = pytest.mark.timeout(10)


@dataclass(frozen=True)
class DriftFigures:
    """``kto drift``'s headline figures, as the speed page's section on it measures them."""

    seconds_10k: str
    seconds_100k: str
    floor_ratio_10k: str
    floor_ratio_100k: str
    single_over_drift_100k: float
    seconds_1m: str
    gib_1m: str


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def _flat(text: str) -> str:
    """The prose with its line breaks and list indentation as single spaces, as a reader reads it."""
    return re.sub(r"\s+", " ", text)


def drift_figures(speed_page: str) -> DriftFigures:
    section = _section(speed_page, "Speed of `kto drift`")
    rows = {
        cells[0]: cells
        for line in section.splitlines()
        if line.startswith("| ")
        and (cells := [c.strip() for c in line.strip("|").split("|")])[0][:1].isdigit()
    }
    header = next(line for line in section.splitlines() if line.startswith("| topics"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    drift, ratio, single = columns.index("`kto drift`"), columns.index("/ floor"), columns.index("single")

    def seconds(cell: str) -> str:
        return cell.strip("*").removesuffix(" s")

    streamed = re.search(r"\*\*([\d.]+) s and [\d.]+ s\*\* with peaks of \*\*([\d.]+) and", _flat(section))
    assert streamed, "the speed page's 1M paragraph no longer reads as this test expects"
    return DriftFigures(
        seconds_10k=seconds(rows["10,000"][drift]),
        seconds_100k=seconds(rows["100,000"][drift]),
        floor_ratio_10k=rows["10,000"][ratio],
        floor_ratio_100k=rows["100,000"][ratio],
        single_over_drift_100k=float(seconds(rows["100,000"][single]))
        / float(seconds(rows["100,000"][drift])),
        seconds_1m=streamed[1],
        gib_1m=streamed[2],
    )


FIGURES = drift_figures(SPEED.read_text())


def _headline(figures: DriftFigures) -> str:
    seconds_1m = f"{float(figures.seconds_1m):.0f}"
    return (
        f"10k topics in {figures.seconds_10k} s, 100k in {figures.seconds_100k} s, "
        f"1M in {seconds_1m} s and {figures.gib_1m} GiB on 2 cores"
    )


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_front_pages_quote_the_drift_figures_of_the_speed_page(page: str) -> None:
    text = _flat((REPO / page).read_text())
    quoted = re.findall(r"10k topics in [^()]*? on 2 cores", text)
    assert quoted == [_headline(FIGURES)], (
        f"{page} quotes {quoted}; the speed page measures {_headline(FIGURES)}"
    )


def test_the_benchmarks_page_quotes_the_drift_figures_of_the_speed_page() -> None:
    text = _flat((REPO / "docs" / "development" / "benchmarks.md").read_text())
    entry = text[text.index("`bench/drift.py`") : text.index("`bench/kraft.py`")]
    expected = (
        f"Measured {FIGURES.floor_ratio_10k} and {FIGURES.floor_ratio_100k} the floor "
        f"({FIGURES.single_over_drift_100k:.1f}x faster than one process), and {FIGURES.seconds_1m} s with "
        f"{FIGURES.gib_1m} GiB at 1M"
    )
    assert expected in entry, f"the benchmarks page should say: {expected}"


def test_a_changed_figure_on_the_speed_page_is_a_different_headline() -> None:
    """The check can fail: a new measurement on the speed page no longer matches what the front pages quote."""
    speed = SPEED.read_text()
    changed = speed.replace(f"**{FIGURES.seconds_10k} s**", "**9.9 s**", 1)
    assert changed != speed
    assert _headline(drift_figures(changed)) != _headline(FIGURES)
