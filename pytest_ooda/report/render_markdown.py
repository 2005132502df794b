"""Markdown summaries (GitHub-flavoured tables) of a report, of a comparison and of
a variant ranking, for ``--markdown`` and ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.report.render_fingerprint import fingerprint_lines
from pytest_ooda.report.render_text import (
    COMPARE_HEADERS,
    COMPARE_NUMERIC,
    STATS_NUMERIC,
    compare_details,
    compare_rows,
    headers,
    notes,
    pct,
    stats_row,
)
from pytest_ooda.stats import check_gates, gate_inconclusive

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.stats import Comparison, ScenarioStats, VariantComparison

__all__ = ["compare_markdown", "report_markdown", "variant_markdown"]


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
            why = gate_inconclusive(item)
            if why is not None:
                lines.append(f"- :grey_question: {_cell(item.label)}: " + _cell(why))
            elif problems:
                lines.append(f"- :x: **{_cell(item.label)}**: " + _cell("; ".join(problems)))
            else:
                lines.append(f"- :white_check_mark: {_cell(item.label)}: {item.gates.describe()}")
    remarks = [*notes(stats), *fingerprint_lines(stats)]
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


def variant_markdown(comparison: VariantComparison, *, title: str) -> str:
    """The same as Markdown (``--markdown`` and ``$GITHUB_STEP_SUMMARY``)."""
    from pytest_ooda.report.render_fired import lift_text

    alpha = comparison.alpha
    out = [
        f"## {title}",
        "",
        f"Variants ranked by success rate (pairwise Fisher's exact tests, "
        f"{comparison.correction}-corrected, alpha {alpha:g}).",
        "",
        "| # | variant | runs | rate | 95% CI | wins | losses | errors |",
        "| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for index, rank in enumerate(comparison.ranking, start=1):
        low, high = rank.interval
        out.append(
            f"| {index} | `{rank.variant}` | {rank.pooled.runs} | {pct(rank.pooled.rate)} | "
            f"{pct(low)}–{pct(high)} | {rank.wins} | {rank.losses} | {rank.pooled.errors} |"
        )
    if comparison.pairs:
        out += [
            "",
            "| scenario | lift (95% CI) | a | b | p | adjusted p | verdict |",
            "| --- | --- | --- | --- | ---: | ---: | --- |",
        ]
        for pair in comparison.pairs:
            winner = pair.winner(alpha)
            lift = lift_text(pair).partition(": ")[2]
            verdict = f"`{winner}` better" if winner else "no difference"
            if pair.blind is not None:
                verdict = f"inconclusive: {_cell(pair.blind)}"
            out.append(
                f"| {pair.label} | {lift} | `{pair.a}` "
                f"{pair.tally_a.successes}/{pair.tally_a.runs} | "
                f"`{pair.b}` {pair.tally_b.successes}/{pair.tally_b.runs} | {pair.p_value:.3g} | "
                f"{pair.adjusted:.3g} | {verdict} |"
            )
    return "\n".join(out) + "\n"
