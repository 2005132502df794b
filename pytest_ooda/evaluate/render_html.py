"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing
fetched — a Content-Security-Policy forbids it) built from ``report.html.j2`` with
Jinja2's autoescaping, so an agent's output can never become markup.

Per scenario: the success rate with its Wilson interval drawn as a bar, a histogram
of iterations per run, time, tokens and cost, the aggregate expectations; per run: the
per-iteration table, output tails and the files the run changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda import __version__
from pytest_ooda.evaluate.aggregate import check_gates
from pytest_ooda.evaluate.render_text import interval, money, number, percent, seconds

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.evaluate.aggregate import ScenarioStats
    from pytest_ooda.evaluate.results import RunRecord

__all__ = ["render_html"]

TEMPLATE = Path(__file__).with_name("report.html.j2")
#: Geometry of the rate bar and the histogram (SVG user units).
BAR_WIDTH = 300
HISTOGRAM_HEIGHT = 80
HISTOGRAM_BAR = 24
#: Room above the histogram's bars for their run counts.
HISTOGRAM_TOP = 14


@dataclass(frozen=True)
class RateBar:
    """The success rate and its interval on a 0–100% scale ``BAR_WIDTH`` wide."""

    rate: float
    low: float
    high: float

    @property
    def fill(self) -> float:
        return round(self.rate * BAR_WIDTH, 2)

    @property
    def low_x(self) -> float:
        return round(self.low * BAR_WIDTH, 2)

    @property
    def high_x(self) -> float:
        return round(self.high * BAR_WIDTH, 2)


@dataclass(frozen=True)
class HistogramBar:
    iterations: int
    runs: int
    x: float
    height: float

    @property
    def y(self) -> float:
        return round(HISTOGRAM_TOP + HISTOGRAM_HEIGHT - self.height, 2)


def _histogram(stats: ScenarioStats) -> list[HistogramBar]:
    """A bar for every iteration count from 1 (or 0) to the maximum, empty ones too,
    so the shape of the distribution reads at a glance."""
    counts = stats.iteration_counts
    first = min(min(counts), 1)
    tallest = max(counts.values())
    bars = []
    for position, iterations in enumerate(range(first, stats.iterations_max + 1)):
        runs = counts.get(iterations, 0)
        height = round(runs / tallest * (HISTOGRAM_HEIGHT - 4), 2) if tallest else 0.0
        bars.append(HistogramBar(iterations, runs, position * (HISTOGRAM_BAR + 4), height))
    return bars


def _run_view(record: RunRecord) -> dict[str, Any]:
    return {
        "record": record,
        "cost": money(record.cost),
        "tokens": "-" if record.usage is None else f"{record.usage.total_tokens:,}",
        "time": seconds(record.elapsed_s),
        "iterations": [
            {
                "entry": entry,
                "time": seconds(entry.duration_s),
                "tokens": "-" if entry.usage is None else f"{entry.usage.total_tokens:,}",
                "cost": money(entry.usage.cost if entry.usage is not None else None),
            }
            for entry in record.iterations
        ],
    }


def _scenario_view(stats: ScenarioStats, index: int) -> dict[str, Any]:
    low, high = stats.interval
    latest = stats.records[-1] if stats.records else None
    return {
        "stats": stats,
        "anchor": f"scenario-{index}",
        "rate": percent(stats.rate),
        "interval": interval(stats),
        "bar": RateBar(stats.rate, low, high),
        "histogram": _histogram(stats),
        "histogram_width": max(1, len(_histogram(stats))) * (HISTOGRAM_BAR + 4),
        "iterations": (
            f"{stats.iterations_mean:.2f} mean, {number(stats.iterations_median)} median, "
            f"{stats.iterations_max} max"
        ),
        "time": f"{seconds(stats.elapsed_mean)} mean, {seconds(stats.elapsed_total)} total",
        "tokens": (
            "not reported"
            if stats.tokens_mean is None
            else f"{stats.tokens_mean:,.0f} per run over {stats.token_runs} run(s), "
            f"{stats.tokens_total:,} total"
        ),
        "cost": (
            "not reported"
            if stats.cost_mean is None
            else f"{money(stats.cost_mean)} per run over {stats.cost_runs} run(s), "
            f"{money(stats.cost_total)} total"
        ),
        "cost_per_run": money(stats.cost_mean),
        "pass_hat_k": "-" if stats.pass_hat_k is None else f"{stats.pass_hat_k:.2f}",
        "pass_at_k": "-" if stats.pass_at_k is None else f"{stats.pass_at_k:.2f}",
        "gate_problems": check_gates(stats),
        "fragments": latest.fragments if latest is not None else (),
        "runs": [_run_view(record) for record in stats.records],
    }


def render_html(
    stats: Sequence[ScenarioStats],
    *,
    k: int,
    title: str,
    sources: Sequence[str] = (),
    generated: str = "",
) -> str:
    """The whole report as one HTML document."""
    import jinja2

    environment = jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = environment.from_string(TEMPLATE.read_text(encoding="utf-8"))
    return template.render(
        title=title,
        k=k,
        version=__version__,
        generated=generated,
        sources=list(sources),
        runs=sum(item.runs for item in stats),
        scenarios=[_scenario_view(item, index) for index, item in enumerate(stats, start=1)],
        bar_width=BAR_WIDTH,
        histogram_height=HISTOGRAM_HEIGHT,
        histogram_top=HISTOGRAM_TOP,
        histogram_bar=HISTOGRAM_BAR,
    )
