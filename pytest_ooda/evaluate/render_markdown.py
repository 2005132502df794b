"""Markdown summaries (GitHub-flavoured tables) of a report and of a comparison, for
``--markdown`` and ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.evaluate.aggregate import check_gates
from pytest_ooda.evaluate.render_text import (
    COMPARE_HEADERS,
    COMPARE_NUMERIC,
    STATS_NUMERIC,
    compare_details,
    compare_rows,
    headers,
    notes,
    stats_row,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.evaluate.aggregate import ScenarioStats
    from pytest_ooda.evaluate.comparison import Comparison

__all__ = ["compare_markdown", "report_markdown"]


def _cell(text: str) -> str:
    """A table cell: pipes escaped, no line breaks, no HTML."""
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\n", " ")
    )


def _table(heads: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> list[str]:
    align = ["---:" if index in numeric else "---" for index in range(len(heads))]
    lines = ["| " + " | ".join(_cell(head) for head in heads) + " |"]
    lines.append("| " + " | ".join(align) + " |")
    lines.extend("| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows)
    return lines


def report_markdown(stats: Sequence[ScenarioStats], *, k: int, title: str) -> str:
    runs = sum(item.runs for item in stats)
    errors = sum(item.errors for item in stats)
    counted = f"{runs} run(s)" + (f", {errors} infrastructure error(s)" if errors else "")
    lines = [f"## {_cell(title)}", "", f"{len(stats)} scenario(s), {counted}.", ""]
    lines += _table(headers(k), [stats_row(item) for item in stats], STATS_NUMERIC)
    gated = [item for item in stats if item.gates is not None]
    if gated:
        lines += ["", "### Aggregate expectations", ""]
        for item in gated:
            assert item.gates is not None
            problems = check_gates(item)
            if problems:
                lines.append(f"- :x: **{_cell(item.label)}**: " + _cell("; ".join(problems)))
            else:
                lines.append(f"- :white_check_mark: {_cell(item.label)}: {item.gates.describe()}")
    remarks = notes(stats)
    if remarks:
        lines += ["", *(f"> {_cell(remark)}" for remark in remarks)]
    return "\n".join(lines) + "\n"


def compare_markdown(comparison: Comparison, *, title: str) -> str:
    lines = [f"## {_cell(title)}", ""]
    lines += _table(COMPARE_HEADERS, compare_rows(comparison), COMPARE_NUMERIC)
    details = compare_details(comparison)
    if details:
        lines += ["", *(f"- {_cell(detail)}" for detail in details)]
    regressed = comparison.regressed
    lines.append("")
    test = f"two-sided Fisher's exact test, alpha {comparison.alpha:g}"
    if regressed:
        names = ", ".join(f"**{_cell(item.label)}**" for item in regressed)
        lines.append(f":x: {len(regressed)} scenario(s) regressed significantly ({test}): {names}")
    else:
        lines.append(f":white_check_mark: no scenario regressed significantly ({test})")
    return "\n".join(lines) + "\n"
