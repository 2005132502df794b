"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing
fetched — a Content-Security-Policy forbids it) built from ``report.html.j2`` with
Jinja2's autoescaping, so an agent's output can never become markup.

Per scenario: the success rate with its Wilson interval drawn as a bar, a histogram
of iterations per run, time, tokens and cost, how the runs ended (their outcomes, with
why where the loop's status adds to it, as in the terminal table), the aggregate
expectations, and each prompt version the runs used, fragment by fragment. Per run, a
transcript: its verdict first (success / failure / error: whether it met the scenario's
expectations, never the loop's status alone) with the reason visible without a click,
then each iteration — a link to its prompt, the agent's output, every tool call with
input and result, the diffs of the files it changed — the verification commands and
judge verdicts. Filters (scenario, verdict, variant) are radio buttons and CSS; a run's
permalink is ``#procedure/scenario/N``. Closed ``<details>`` keep a page of 1,000 runs
light to open, and past ``TRANSCRIPT_BUDGET`` a run shows its summary and a note instead
of its transcript.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda import __version__
from pytest_ooda.evaluate.aggregate import check_gates
from pytest_ooda.evaluate.render_text import interval, money, number, percent, seconds

if TYPE_CHECKING:
    from collections.abc import Sequence

    import jinja2

    from pytest_ooda.evaluate.aggregate import ScenarioStats
    from pytest_ooda.evaluate.comparison import Comparison
    from pytest_ooda.evaluate.results import RunRecord

__all__ = ["render_compare_html", "render_html"]

TEMPLATE = Path(__file__).with_name("report.html.j2")
COMPARE_TEMPLATE = Path(__file__).with_name("compare.html.j2")
#: Geometry of the rate bar and the histogram (SVG user units).
BAR_WIDTH = 300
HISTOGRAM_HEIGHT = 80
HISTOGRAM_BAR = 24
#: Room above the histogram's bars for their run counts.
HISTOGRAM_TOP = 14
#: Characters of transcripts (outputs, tool calls, diffs) one report shows in full;
#: runs that do not fail are the first left out past it.
TRANSCRIPT_BUDGET = 24 * 1024 * 1024
#: Verdicts in the order filters and counts list them.
VERDICT_ORDER = ("success", "failure", "error")


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


def _reason(record: RunRecord) -> str:
    """Why a run is not a success, in one line (empty for a success)."""
    if record.outcome == "success":
        return ""
    if record.outcome == "error":
        why = record.error_reason or record.error or "the run could not be measured"
        return f"⚠ infrastructure error: {why}"
    if record.problems:
        more = len(record.problems) - 1
        return record.problems[0] + (f" (+{more} more)" if more else "")
    return record.error or f"ended {record.status}"


def _diff_lines(text: str) -> list[tuple[str, str]]:
    """``(css class, line)`` pairs of a unified diff."""
    out = []
    for line in text.splitlines():
        if line.startswith(("+++", "---")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = ""
        out.append((kind, line))
    return out


def _transcript_size(record: RunRecord) -> int:
    transcript = record.transcript or {}
    size = 0
    for item in transcript.get("iterations") or ():
        if isinstance(item, dict):
            size += len(str(item.get("output") or ""))
            size += sum(len(str(text)) for text in (item.get("diffs") or {}).values())
            for call in item.get("tool_calls") or ():
                if isinstance(call, dict):
                    size += len(str(call.get("input") or "")) + len(str(call.get("result") or ""))
    return size


def _transcript_iterations(record: RunRecord) -> dict[int, dict[str, Any]]:
    transcript = record.transcript or {}
    out: dict[int, dict[str, Any]] = {}
    for item in transcript.get("iterations") or ():
        if isinstance(item, dict) and isinstance(item.get("number"), int):
            found = item.get("diffs")
            diffs: dict[str, Any] = found if isinstance(found, dict) else {}
            out[item["number"]] = {
                "output": item.get("output") if isinstance(item.get("output"), str) else None,
                "tool_calls": [c for c in item.get("tool_calls") or () if isinstance(c, dict)],
                "denials": [c for c in item.get("permission_denials") or () if isinstance(c, dict)],
                "diffs": [(path, _diff_lines(str(text))) for path, text in diffs.items()],
            }
    return out


def _judge_items(judge: Any) -> list[tuple[str, str]]:
    """A judge mapping as ``(key, text)`` rows, its verdict first."""
    if not isinstance(judge, dict) and not hasattr(judge, "items"):
        return []
    rows = []
    for key, value in sorted(judge.items(), key=lambda kv: (kv[0] != "verdict", str(kv[0]))):
        text = value if isinstance(value, str) else json.dumps(value, indent=1, default=str)
        rows.append((str(key), text))
    return rows


def _run_view(
    record: RunRecord, *, anchor: str, full: bool, prompt_anchor: str | None
) -> dict[str, Any]:
    transcript = _transcript_iterations(record) if full else {}
    notes = list((record.transcript or {}).get("notes") or ()) if full else []
    return {
        "record": record,
        "anchor": anchor,
        "verdict": record.outcome,
        "reason": _reason(record),
        "full": full,
        "has_transcript": record.transcript is not None,
        "notes": [str(note) for note in notes],
        "prompt_anchor": prompt_anchor,
        "judge": _judge_items(record.judge),
        "cost": money(record.cost),
        "tokens": "-" if record.usage is None else f"{record.usage.total_tokens:,}",
        "time": seconds(record.elapsed_s),
        "iterations": [
            {
                "entry": entry,
                "time": seconds(entry.duration_s),
                "tokens": "-" if entry.usage is None else f"{entry.usage.total_tokens:,}",
                "cost": money(entry.usage.cost if entry.usage is not None else None),
                "transcript": transcript.get(entry.number),
            }
            for entry in record.iterations
        ],
    }


def _prompt_versions(stats: ScenarioStats, index: int) -> dict[str, dict[str, Any]]:
    """Each distinct prompt the runs used (by its sha256), fragment by fragment, once."""
    versions: dict[str, dict[str, Any]] = {}
    for record in stats.records:
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


def _scenario_view(
    stats: ScenarioStats, index: int, full: set[str], variants: dict[str, int]
) -> dict[str, Any]:
    low, high = stats.interval
    latest = stats.records[-1] if stats.records else None
    prompts = _prompt_versions(stats, index)
    runs = []
    for position, record in enumerate(stats.records, start=1):
        prompt = prompts.get(record.prompt_sha256 or "")
        runs.append(
            {
                **_run_view(
                    record,
                    anchor=f"{stats.label}/{position}",
                    full=record.id in full,
                    prompt_anchor=prompt["anchor"] if prompt is not None else None,
                ),
                "position": position,
                "variant_index": variants.get(record.variant or "", 0),
            }
        )
    return {
        "stats": stats,
        "index": index,
        "anchor": f"scenario-{index}",
        "prompts": list(prompts.values()),
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
        "runs": runs,
    }


def _full_transcripts(stats: Sequence[ScenarioStats], budget: int) -> set[str]:
    """The ids of the runs whose transcripts fit the report's budget: runs that did not
    succeed first (they are what people open the report for), then in order."""
    records = [record for item in stats for record in item.records]
    ordered = sorted(range(len(records)), key=lambda i: (records[i].outcome == "success", i))
    chosen: set[str] = set()
    spent = 0
    for i in ordered:
        size = _transcript_size(records[i])
        if spent + size > budget:
            continue
        spent += size
        chosen.add(records[i].id)
    return chosen


def render_html(
    stats: Sequence[ScenarioStats],
    *,
    k: int,
    title: str,
    sources: Sequence[str] = (),
    generated: str = "",
    transcript_budget: int = TRANSCRIPT_BUDGET,
) -> str:
    """The whole report as one HTML document."""
    full = _full_transcripts(stats, transcript_budget)
    names = sorted({record.variant for item in stats for record in item.records if record.variant})
    variants = {name: index for index, name in enumerate(names, start=1)}
    views = [
        _scenario_view(item, index, full, variants) for index, item in enumerate(stats, start=1)
    ]
    left_out = sum(
        1 for view in views for run in view["runs"] if run["has_transcript"] and not run["full"]
    )
    return (
        _environment()
        .from_string(TEMPLATE.read_text(encoding="utf-8"))
        .render(
            verdict_order=VERDICT_ORDER,
            variants=list(variants.items()),
            left_out=left_out,
            transcript_budget_mib=transcript_budget // (1024 * 1024),
            title=title,
            k=k,
            version=__version__,
            generated=generated,
            sources=list(sources),
            runs=sum(item.runs for item in stats),
            scenarios=views,
            bar_width=BAR_WIDTH,
            histogram_height=HISTOGRAM_HEIGHT,
            histogram_top=HISTOGRAM_TOP,
            histogram_bar=HISTOGRAM_BAR,
        )
    )


def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_compare_html(comparison: Comparison, *, title: str, generated: str = "") -> str:
    """``ooda compare --html``: the comparison as one self-contained HTML document."""
    from pytest_ooda.evaluate.render_text import COMPARE_HEADERS, compare_details, compare_rows

    rows = [
        {"cells": cells, "verdict": item.verdict, "label": item.label}
        for cells, item in zip(compare_rows(comparison), comparison.scenarios, strict=True)
    ]
    return (
        _environment()
        .from_string(COMPARE_TEMPLATE.read_text(encoding="utf-8"))
        .render(
            title=title,
            version=__version__,
            generated=generated,
            headers=COMPARE_HEADERS,
            rows=rows,
            details=compare_details(comparison),
            alpha=comparison.alpha,
            regressed=[item.label for item in comparison.regressed],
        )
    )
