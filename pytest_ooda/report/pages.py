"""What the HTML pages show above a single run, shared by ``ooda report --html`` and
``ooda view``: a scenario's figures (the success rate with its Wilson interval drawn
as a bar, the histogram of iterations, time, tokens and cost, how the runs ended, its
gates, each prompt version by fragment), the scenarios × variants matrix with a cell's
verdict colour, and a session's verdict badge.

Where a page links to (a run, a cell's runs, the outputs side by side) depends on the
page's home — an anchor of the one static file, or a URL of the viewer — so the
templates ask a :class:`Links` object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ooda.report.render_text import interval, money, number, percent, seconds
from pytest_ooda.stats import check_gates, gate_inconclusive

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from pytest_ooda.results import RunRecord
    from pytest_ooda.stats import ScenarioStats

__all__ = [
    "BAR_WIDTH",
    "DEFAULT_VARIANT",
    "Links",
    "cell_verdict",
    "matrix",
    "prompt_versions",
    "scenario_view",
    "session_verdict",
]

#: Geometry of the rate bar and the histogram (SVG user units).
BAR_WIDTH = 300
HISTOGRAM_HEIGHT = 80
HISTOGRAM_BAR = 24
#: Room above the histogram's bars for their run counts.
HISTOGRAM_TOP = 14
#: The matrix's column of runs made under no variant.
DEFAULT_VARIANT = "(default)"


class Links(Protocol):
    """Where a page's links go."""

    def run(self, record: RunRecord) -> str:
        """A run's details."""
        ...

    def cell(self, stats: ScenarioStats) -> str | None:
        """The runs of one scenario (and variant)."""
        ...

    def outputs(self, procedure: str, scenario: str) -> str | None:
        """The variants' outputs side by side (``None``: the page has none)."""
        ...


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


def histogram(stats: ScenarioStats) -> list[HistogramBar]:
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


def prompt_versions(records: Iterable[RunRecord], index: int) -> dict[str, dict[str, Any]]:
    """Each distinct prompt the runs used (by its sha256), fragment by fragment, once:
    from the first record of each version that kept its transcript."""
    versions: dict[str, dict[str, Any]] = {}
    for record in records:
        key = record.prompt_sha256 or ""
        segments = (record.transcript or {}).get("prompt") or ()
        if key in versions or not segments:
            continue
        versions[key] = {
            "anchor": f"prompt-{index}-{len(versions) + 1}",
            "sha": key[:12],
            "segments": [
                (str(segment.get("source") or ""), str(segment.get("text") or ""))
                for segment in segments
                if isinstance(segment, dict)
            ],
        }
    return versions


def cell_verdict(stats: ScenarioStats, *, running: bool = False) -> str:
    """The colour of a scenario's cell: ``passed`` / ``failed`` by its gates when it
    has any (``pending`` while a running session has too few runs to judge), else by its
    runs: ``success`` (every valid run), ``failure`` (none), ``mixed``, or ``error``
    (no valid run at all)."""
    if stats.gates is not None:
        problems = check_gates(stats)
        if running and problems and stats.valid_runs < max(stats.planned, 1):
            return "pending"
        if gate_inconclusive(stats) is not None:
            return "inconclusive"
        return "failed" if problems else "passed"
    if not stats.valid_runs:
        return "error"
    if stats.successes == stats.valid_runs:
        return "success"
    return "failure" if not stats.successes else "mixed"


def _variant(stats: ScenarioStats) -> str:
    first = stats.records[0] if stats.records else None
    return (first.head.variant if first is not None else None) or DEFAULT_VARIANT


def _scenario(stats: ScenarioStats) -> str:
    first = stats.records[0] if stats.records else None
    return first.head.scenario if first is not None else stats.scenario


def matrix(
    stats: Sequence[ScenarioStats], links: Links, *, running: bool = False
) -> dict[str, Any]:
    """The scenarios × variants matrix: a row per ``procedure/scenario``, a column per
    variant; each cell its success rate with the interval, errors and cost, coloured by
    :func:`cell_verdict`, linking to its runs."""
    columns = sorted(
        {_variant(item) for item in stats}, key=lambda name: (name != DEFAULT_VARIANT, name)
    )
    rows: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for item in stats:
        key = (item.procedure, _scenario(item))
        low, high = item.interval
        rows.setdefault(key, {})[_variant(item)] = {
            "verdict": cell_verdict(item, running=running),
            "rate": percent(item.rate) if item.valid_runs else "n/a",
            "interval": interval(item) if item.valid_runs else "",
            "runs": item.runs,
            "valid": item.valid_runs,
            "successes": item.successes,
            "errors": item.errors,
            "cost": money(item.cost_mean),
            "href": links.cell(item),
            "label": item.label,
            "bar": RateBar(item.rate, low, high),
        }
    return {
        "columns": columns,
        "rows": [
            {
                "label": f"{procedure}/{scenario}",
                "outputs": links.outputs(procedure, scenario) if len(cells) > 1 else None,
                "cells": [cells.get(column) for column in columns],
            }
            for (procedure, scenario), cells in sorted(rows.items())
        ],
    }


def session_verdict(
    stats: Sequence[ScenarioStats], *, running: bool = False, interrupted: bool = False
) -> tuple[str, str]:
    """A session's badge: ``(css verdict, words)``."""
    if running:
        return "running", "running"
    if interrupted:
        return "interrupted", "interrupted"
    gated = [item for item in stats if item.gates is not None]
    failed = [item for item in gated if check_gates(item)]
    if failed:
        return "failed", f"{len(failed)} of {len(gated)} gate(s) missed"
    unjudged = [item for item in gated if gate_inconclusive(item) is not None]
    if unjudged:
        return "inconclusive", f"{len(unjudged)} of {len(gated)} gate(s) inconclusive: budget spent"
    if gated:
        return "passed", f"{len(gated)} gate(s) met"
    valid = sum(item.valid_runs for item in stats)
    successes = sum(item.successes for item in stats)
    if not valid:
        return "error", "no valid run"
    verdict = "success" if successes == valid else "failure" if not successes else "mixed"
    return verdict, f"{successes} of {valid} run(s) succeeded · no gates"


def scenario_view(stats: ScenarioStats, index: int, links: Links) -> dict[str, Any]:
    """A scenario's figures and gates, as the report and the session page show them."""
    low, high = stats.interval
    latest = stats.records[-1] if stats.records else None
    bars = histogram(stats)
    return {
        "stats": stats,
        "index": index,
        "anchor": f"scenario-{index}",
        "href": links.cell(stats),
        "rate": percent(stats.rate),
        "interval": interval(stats),
        "bar": RateBar(stats.rate, low, high),
        "histogram": bars,
        "histogram_width": max(1, len(bars)) * (HISTOGRAM_BAR + 4),
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
        "gate_inconclusive": gate_inconclusive(stats),
        "fragments": latest.head.fragments if latest is not None else (),
        "fired": fired_view(stats),
        "prompts": [],
        "runs": [],
    }


def fired_view(stats: ScenarioStats) -> dict[str, Any]:
    """What fired, as the scenario's card shows it: the trigger set's line, and per
    assertion its text and a bar of its pass rate with its interval."""
    from pytest_ooda.report.render_fired import assertion_text, trigger_text

    return {
        "triggers": trigger_text(stats.triggers) if stats.triggers is not None else None,
        "assertions": [
            {"text": assertion_text(item), "bar": RateBar(item.rate, *item.interval)}
            for item in stats.assertions
        ],
    }


def geometry() -> dict[str, int]:
    """The drawing constants the templates use."""
    return {
        "bar_width": BAR_WIDTH,
        "histogram_height": HISTOGRAM_HEIGHT,
        "histogram_top": HISTOGRAM_TOP,
        "histogram_bar": HISTOGRAM_BAR,
    }
