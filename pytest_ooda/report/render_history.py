"""A scenario's history (``ooda history`` and the viewer's ``/history`` page): its
state with the rate and interval it is judged on, a line per session (date, commit,
agent, prompt version, runs, rate, interval), and the change point when there is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.report.render_text import pct

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.stats import HistoryPoint, ScenarioHistory

__all__ = ["history_lines", "history_markdown", "history_view", "render_history_html"]


def _short(value: str | None, width: int = 8) -> str:
    return value[:width] if value else "-"


def _interval(low: float, high: float) -> str:
    return f"{low:.0%}–{high:.0%}"


def _point_cells(point: HistoryPoint) -> list[str]:
    rate = pct(point.rate)
    return [
        point.session,
        point.started[:10] or "-",
        _short(point.commit),
        point.agent or "-",
        _short(point.prompt),
        f"{point.successes}/{point.valid}" + (f" +{point.errors}err" if point.errors else ""),
        rate,
        _interval(*point.interval) if point.valid else "-",
    ]


_HEADS = ["session", "date", "commit", "agent", "prompt", "runs", "rate", "95% CI"]


def _change_text(item: ScenarioHistory) -> str | None:
    change = item.change_point
    if change is None:
        return None
    before, after = change.rates
    point = item.points[change.index]
    moved = (
        f"; {', '.join(change.differs)}" if change.differs else "; nothing else recorded differs"
    )
    return (
        f"change point at session {point.session} ({point.started[:10]}): "
        f"{change.before[0]}/{change.before[1]} ({before:.0%}) -> "
        f"{change.after[0]}/{change.after[1]} ({after:.0%}), p {change.p_value:.3g} "
        f"(Fisher, Bonferroni over the splits), prompt unchanged{moved}"
    )


def history_lines(histories: Sequence[ScenarioHistory]) -> list[str]:
    """The terminal's report: per scenario its state, then its sessions."""
    sessions = {point.session for item in histories for point in item.points}
    out = [f"history of {len(histories)} scenario(s) over {len(sessions)} session(s)"]
    for item in histories:
        out += ["", f"{item.label}: {item.note()}"]
        rows = [_HEADS, *(_point_cells(point) for point in item.points)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADS))]
        for number, row in enumerate(rows):
            mark = "  "
            if number and number - 1 == item.since and item.since:
                mark = "> "
            out.append(
                mark + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
            )
        change = _change_text(item)
        if change is not None:
            out.append(f"  {change}")
        elif item.since:
            out.append(
                f"  (judged from session {item.points[item.since].session}: the prompt changed)"
            )
    return out


def history_markdown(histories: Sequence[ScenarioHistory]) -> str:
    """One table, a row per scenario (for ``$GITHUB_STEP_SUMMARY``)."""
    lines = [
        "## ooda history",
        "",
        "| scenario | state | rate | 95% CI | sessions | last session |",
        "| --- | --- | ---: | --- | ---: | --- |",
    ]
    for item in histories:
        rate = pct(item.rate)
        span = _interval(*item.interval) if item.valid else "-"
        last = item.points[-1].session if item.points else "-"
        lines.append(
            f"| {item.label} | {item.state} | {rate} | {span} | {len(item.points)} | {last} |"
        )
    changes = [text for text in (_change_text(item) for item in histories) if text]
    if changes:
        lines += ["", *(f"- {text}" for text in changes)]
    return "\n".join(lines) + "\n"


def history_view(histories: Sequence[ScenarioHistory]) -> list[dict[str, Any]]:
    """What the ``/history`` page shows of each scenario."""
    return [
        {
            "label": item.label,
            "state": item.state,
            "note": item.note(),
            "change": _change_text(item),
            "heads": _HEADS,
            "rows": [
                {"cells": _point_cells(point), "current": index >= item.since}
                for index, point in enumerate(item.points)
            ],
        }
        for item in histories
    ]


def render_history_html(histories: Sequence[ScenarioHistory], *, title: str, **page: Any) -> str:
    """The histories as a page (``page``: ``csp``, ``crumbs`` …)."""
    from pytest_ooda.report.html_report import render_page

    return render_page("history.html.j2", title=title, scenarios=history_view(histories), **page)
