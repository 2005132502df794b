"""The comparison pages: ``ooda compare --html`` and ``ooda compare --by variant
--html`` as files, and the compare page of ``ooda view`` (two sessions, or two variants
of one) — the same templates.

Two sides: per scenario the two success rates with their Wilson intervals, the change,
the two-sided p-value of Fisher's exact test, the smallest change these runs could
detect (and the runs a wanted difference needs), the verdict, the prompt diff fragment
by fragment with each fragment's source (from the transcripts of one run per side), and
links to every run on both sides. Variants: the ranking, every pairwise test with its
Holm-adjusted p-value, and links to each variant's runs.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from pytest_ooda.report.html_report import render_page, run_anchors
from pytest_ooda.report.render_text import compare_details, interval, money, percent, seconds
from pytest_ooda.report.run_detail import diff_lines, reason

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda.report.pages import Links
    from pytest_ooda.results import RunRecord
    from pytest_ooda.stats import Comparison, ScenarioComparison, ScenarioStats, VariantComparison

__all__ = ["prompt_diff", "render_compare_html", "render_variants_html"]


def _segments(record: RunRecord | None) -> list[tuple[str, str]]:
    segments = ((record.transcript or {}).get("prompt") or ()) if record is not None else ()
    return [
        (str(item.get("source") or ""), str(item.get("text") or ""))
        for item in segments
        if isinstance(item, dict)
    ]


def prompt_diff(base: RunRecord | None, new: RunRecord | None) -> list[dict[str, Any]]:
    """The composed prompts of two runs, fragment by fragment: each fragment (by its
    source, the n-th of that source with the n-th) whose text differs, with the unified
    diff of its text; a fragment on one side only is added or removed."""
    before: dict[tuple[str, int], str] = {}
    after: dict[tuple[str, int], str] = {}
    for side, segments in ((before, _segments(base)), (after, _segments(new))):
        seen: dict[str, int] = {}
        for source, text in segments:
            seen[source] = seen.get(source, 0) + 1
            side[(source, seen[source])] = text
    out = []
    for key in list(dict.fromkeys([*before, *after])):
        old, now = before.get(key), after.get(key)
        if old == now:
            continue
        status = "added" if old is None else "removed" if now is None else "changed"
        lines = difflib.unified_diff(
            (old or "").splitlines(),
            (now or "").splitlines(),
            fromfile=f"base: {key[0] or 'between fragments'}",
            tofile=f"new: {key[0] or 'between fragments'}",
            lineterm="",
        )
        out.append(
            {
                "source": key[0] or "(between fragments)",
                "status": status,
                "lines": diff_lines("\n".join(lines)),
            }
        )
    return out


def _run_rows(stats: ScenarioStats | None, links: Links) -> list[dict[str, Any]]:
    if stats is None:
        return []
    return [
        {
            "record": record,
            "href": links.run(record),
            "anchor": links.run(record).lstrip("#"),
            "verdict": record.outcome,
            "reason": reason(record),
            "time": seconds(record.elapsed_s),
            "cost": money(record.cost),
        }
        for record in stats.records
    ]


def _side(stats: ScenarioStats | None) -> dict[str, Any] | None:
    if stats is None:
        return None
    return {
        "rate": percent(stats.rate) if stats.valid_runs else "n/a",
        "counts": f"{stats.successes}/{stats.valid_runs}",
        "interval": interval(stats) if stats.valid_runs else "",
        "errors": stats.errors,
        "iterations": f"{stats.iterations_mean:.2f}",
        "cost": money(stats.cost_mean),
    }


def _first_with_prompt(
    stats: ScenarioStats | None, whole: Callable[[RunRecord], RunRecord]
) -> RunRecord | None:
    """A run of the side's latest prompt version read whole (for its composed prompt)."""
    if stats is None or not stats.records:
        return None
    latest = stats.prompt_versions[-1] if stats.prompt_versions else None
    for record in reversed(stats.records):
        if latest is None or record.prompt_sha256 == latest:
            return whole(record)
    return None


def _scenario(
    item: ScenarioComparison,
    links: Links,
    whole_base: Callable[[RunRecord], RunRecord],
    whole_new: Callable[[RunRecord], RunRecord],
    anchor: str,
) -> dict[str, Any]:
    base_run = _first_with_prompt(item.base, whole_base)
    new_run = _first_with_prompt(item.new, whole_new)
    return {
        "item": item,
        "anchor": anchor,
        "base": _side(item.base),
        "new": _side(item.new),
        "change": "-" if item.rate_change is None else f"{item.rate_change * 100:+.0f} pp",
        "p_value": "-" if item.p_value is None else f"{item.p_value:.4f}",
        "detectable": "-" if item.detectable is None else f"{item.detectable * 100:.0f} pp",
        "needed": item.needed,
        "changed_fragments": item.changed_fragments,
        "prompt_diff": prompt_diff(base_run, new_run),
        "prompts_known": base_run is not None
        and new_run is not None
        and bool(_segments(base_run))
        and bool(_segments(new_run)),
        "base_runs": _run_rows(item.base, links),
        "new_runs": _run_rows(item.new, links),
    }


class _PageLinks:
    """A static comparison's links: to the runs tables at the bottom of the page."""

    def __init__(self, records: Sequence[RunRecord], prefix: str) -> None:
        self.anchors = run_anchors(records)
        self.prefix = prefix

    def run(self, record: RunRecord) -> str:
        return f"#{self.prefix}-{self.anchors[record.id]}"

    def cell(self, stats: ScenarioStats) -> str | None:
        return None

    def outputs(self, procedure: str, scenario: str) -> str | None:
        return None


class _SideLinks:
    """Base and new runs may share ids' anchors: each side gets its own prefix."""

    def __init__(self, comparison: Comparison) -> None:
        base = [r for item in comparison.scenarios if item.base for r in item.base.records]
        new = [r for item in comparison.scenarios if item.new for r in item.new.records]
        self.base_ids = {record.id for record in base}
        self.base = _PageLinks(base, "base")
        self.new = _PageLinks(new, "new")

    def run(self, record: RunRecord) -> str:
        return (self.base if record.id in self.base_ids else self.new).run(record)

    def cell(self, stats: ScenarioStats) -> str | None:
        return None

    def outputs(self, procedure: str, scenario: str) -> str | None:
        return None


def render_compare_html(
    comparison: Comparison,
    *,
    title: str,
    generated: str = "",
    base_label: str = "base",
    new_label: str = "new",
    whole_base: Callable[[RunRecord], RunRecord] | None = None,
    whole_new: Callable[[RunRecord], RunRecord] | None = None,
    links: Links | None = None,
    **page: Any,
) -> str:
    """The comparison as one HTML page (``links``: the viewer's; by default the runs
    are listed at the bottom of the page itself)."""
    same: Callable[[RunRecord], RunRecord] = lambda record: record  # noqa: E731
    target = links or _SideLinks(comparison)
    scenarios = [
        _scenario(item, target, whole_base or same, whole_new or same, f"scenario-{index}")
        for index, item in enumerate(comparison.scenarios, start=1)
    ]
    return render_page(
        "compare.html.j2",
        title=title,
        generated=generated,
        base_label=base_label,
        new_label=new_label,
        scenarios=scenarios,
        details=compare_details(comparison),
        alpha=comparison.alpha,
        detect=comparison.detect,
        power=comparison.power,
        regressed=[item.label for item in comparison.regressed],
        static_runs=links is None,
        **page,
    )


def render_variants_html(
    comparison: VariantComparison,
    records: Sequence[RunRecord],
    *,
    title: str,
    generated: str = "",
    links: Links | None = None,
    **page: Any,
) -> str:
    """``ooda compare --by variant``: the ranking, the pairwise tests and each
    variant's runs, as one HTML page."""
    from pytest_ooda.stats import variant_of

    target = links or _PageLinks(records, "run")
    groups: dict[tuple[str, str, str], list[RunRecord]] = {}
    for record in records:
        groups.setdefault(
            (record.head.procedure, record.head.scenario, variant_of(record)), []
        ).append(record)
    from pytest_ooda.report.render_fired import lift_text

    pairs = []
    for pair in comparison.pairs:
        winner = pair.winner(comparison.alpha)
        pairs.append(
            {
                "pair": pair,
                "lift": lift_text(pair).partition(": ")[2],
                "winner": winner,
                "verdict": f"{winner} better" if winner else "no significant difference",
                "a_runs": _runs_of(groups, pair.procedure, pair.scenario, pair.a, target),
                "b_runs": _runs_of(groups, pair.procedure, pair.scenario, pair.b, target),
            }
        )
    ranking = []
    for position, rank in enumerate(comparison.ranking, start=1):
        low, high = rank.interval
        rate = rank.pooled.rate
        ranking.append(
            {
                "position": position,
                "rank": rank,
                "rate": "n/a" if rate is None else percent(rate),
                "interval": f"{percent(low)}–{percent(high)}",
            }
        )
    listed = [
        {
            "label": f"{procedure}/{scenario}",
            "variant": variant,
            "runs": _runs_of(groups, procedure, scenario, variant, target),
        }
        for (procedure, scenario, variant) in sorted(groups)
    ]
    return render_page(
        "variants.html.j2",
        title=title,
        generated=generated,
        alpha=comparison.alpha,
        correction=comparison.correction,
        ranking=ranking,
        pairs=pairs,
        groups=listed,
        static_runs=links is None,
        **page,
    )


def _runs_of(
    groups: dict[tuple[str, str, str], list[RunRecord]],
    procedure: str,
    scenario: str,
    variant: str,
    links: Links,
) -> list[dict[str, Any]]:
    return [
        {
            "record": record,
            "href": links.run(record),
            "anchor": links.run(record).lstrip("#"),
            "verdict": record.outcome,
            "reason": reason(record),
            "time": seconds(record.elapsed_s),
            "cost": money(record.cost),
        }
        for record in groups.get((procedure, scenario, variant), [])
    ]
