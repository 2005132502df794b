"""Plain-text renderings: the per-scenario table (``ooda report`` and the pytest
session's summary), the gate verdicts, the ``ooda compare`` table and its ``--by
variant`` ranking. The cell
formatting here is shared by the Markdown and HTML renderers."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from pytest_ooda.results import compared
from pytest_ooda.stats import check_gates, gate_inconclusive

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.stats import Comparison, ScenarioComparison, ScenarioStats, VariantComparison

__all__ = [
    "COMPARE_NUMERIC",
    "STATS_HEADERS",
    "STATS_NUMERIC",
    "compare_rows",
    "compare_table",
    "gate_lines",
    "money",
    "notes",
    "pct",
    "percent",
    "power_lines",
    "seconds",
    "stats_row",
    "stats_table",
    "table",
    "variant_table",
]

#: Column headings of the per-scenario table; ``k`` is filled in.
STATS_HEADERS = (
    "scenario",
    "runs",
    "ok",
    "errors",
    "rate",
    "95% CI",
    "pass^{k}",
    "pass@{k}",
    "iterations mean/med/max",
    "time/run",
    "tokens/run",
    "cost/run",
    "outcomes",
)
COMPARE_HEADERS = (
    "scenario",
    "base",
    "new",
    "errors",
    "change",
    "p-value",
    "detectable",
    "iterations",
    "cost/run",
    "verdict",
)
#: Right-aligned columns of the per-scenario table.
STATS_NUMERIC = {1, 2, 3, 4, 6, 7, 9, 10, 11}
#: Right-aligned columns of the comparison table.
COMPARE_NUMERIC = {5, 6}


def percent(value: float) -> str:
    return f"{value:.0%}"


def money(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def seconds(value: float) -> str:
    if value < 60:
        return f"{value:.1f}s"
    minutes, rest = divmod(value, 60)
    return f"{int(minutes)}m{rest:02.0f}s"


def number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def _optional(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def interval(stats: ScenarioStats) -> str:
    low, high = stats.interval
    return f"{percent(low)}–{percent(high)}"


def stats_row(stats: ScenarioStats) -> list[str]:
    return [
        stats.label,
        str(stats.runs),
        str(stats.successes),
        str(stats.errors),
        percent(stats.rate) if stats.valid_runs else "-",
        interval(stats),
        _optional(stats.pass_hat_k),
        _optional(stats.pass_at_k),
        f"{stats.iterations_mean:.2f}/{number(stats.iterations_median)}/{stats.iterations_max}",
        seconds(stats.elapsed_mean),
        "-" if stats.tokens_mean is None else f"{stats.tokens_mean:,.0f}",
        money(stats.cost_mean),
        stats.outcome_text(),
    ]


def headers(k: int) -> list[str]:
    return [header.format(k=k) for header in STATS_HEADERS]


def table(heads: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> list[str]:
    """Columns padded to their widest cell; ``numeric`` columns right-aligned."""
    widths = [len(head) for head in heads]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(padded).rstrip()

    return [line(heads), *(line(row) for row in rows)]


def stats_table(stats: Sequence[ScenarioStats], k: int) -> list[str]:
    """The per-scenario table, one row per scenario."""
    return table(headers(k), [stats_row(item) for item in stats], STATS_NUMERIC)


def gate_lines(stats: Sequence[ScenarioStats]) -> tuple[list[str], int]:
    """A line per scenario with aggregate expectations (met or not) and the count of
    scenarios that missed theirs."""
    lines: list[str] = []
    failed = 0
    for item in stats:
        if item.gates is None:
            continue
        why = gate_inconclusive(item)
        if why is not None:
            lines.append(f"inconclusive {item.label}: {why}")
            continue
        problems = check_gates(item)
        if problems:
            failed += 1
            lines.append(f"FAILED {item.label}: " + "; ".join(problems))
        else:
            lines.append(f"passed {item.label}: {item.gates.describe()}")
    return lines, failed


def notes(stats: Sequence[ScenarioStats]) -> list[str]:
    """What a reader must know before trusting a row: infrastructure errors left out of
    the rate, mixed prompt versions."""
    out = []
    for item in stats:
        if item.errors:
            out.append(
                f"note: {item.label}: {item.error_text()} infrastructure error run(s) are not "
                f"counted in its rate ({item.valid_runs} valid run(s))"
            )
        if item.retries:
            out.append(f"note: {item.label}: {item.retries} retried iteration(s) after errors")
        versions = _prompt_versions(item)
        if versions > 1:
            out.append(
                f"note: {item.label} mixes {versions} prompt versions "
                "(results from before and after a prompt change?); compare them with "
                "`ooda compare BASE NEW`"
            )
        out.extend(_mixed(item))
    from pytest_ooda.report.render_fired import fired_lines, lift_lines

    # A session comparing variants (a skill's two versions) leads with their lift.
    return lift_lines(stats) + out + [line for item in stats for line in fired_lines(item)]


def _prompt_versions(stats: ScenarioStats) -> int:
    """How many prompt versions the scenario's runs mix: per prompt of a trigger set,
    whose prompts differ by design (the most any of them had)."""
    seen: dict[object, set[str]] = {}
    for record in stats.records:
        case = record.head.trigger.get("case") if record.head.trigger is not None else None
        if record.prompt_sha256:
            seen.setdefault(case, set()).add(record.prompt_sha256)
    return max(map(len, seen.values()), default=0)


def _mixed(stats: ScenarioStats) -> list[str]:
    """A note per field the record declares its runs should agree on (its column's
    ``compare``) where this scenario's runs do not: each value with its runs."""
    seen: dict[str, Counter[str]] = {}
    for record in stats.records:
        for label, value in compared(record):
            seen.setdefault(label, Counter())[str(value)] += 1
    return [
        f"note: {stats.label}: its runs differ in {label} ("
        + ", ".join(f"{value} ×{count}" for value, count in sorted(values.items()))
        + ")"
        for label, values in seen.items()
        if len(values) > 1
    ]


def _rate(stats: ScenarioStats | None) -> str:
    if stats is None:
        return "-"
    if not stats.valid_runs:
        return "0/0"
    return f"{stats.successes}/{stats.valid_runs} {percent(stats.rate)}"


def _errors(item: ScenarioComparison) -> str:
    if item.base is None and item.new is None:
        return "-"
    base = "-" if item.base is None else str(item.base.errors)
    new = "-" if item.new is None else str(item.new.errors)
    return f"{base} / {new}"


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f} pp"


def _change(item: ScenarioComparison) -> str:
    change = item.rate_change
    if change is None:
        return "-"
    return f"{change * 100:+.0f} pp"


def _arrow(before: str, after: str) -> str:
    return f"{before} -> {after}"


def compare_rows(comparison: Comparison) -> list[list[str]]:
    rows = []
    for item in comparison.scenarios:
        base, new = item.base, item.new
        iterations = (
            _arrow(f"{base.iterations_mean:.2f}", f"{new.iterations_mean:.2f}")
            if base is not None and new is not None
            else "-"
        )
        cost = (
            _arrow(money(base.cost_mean), money(new.cost_mean))
            if base is not None and new is not None and (base.cost_mean or new.cost_mean)
            else "-"
        )
        rows.append(
            [
                item.label,
                _rate(base),
                _rate(new),
                _errors(item),
                _change(item),
                "-" if item.p_value is None else f"{item.p_value:.4f}",
                _points(item.detectable) if item.p_value is not None else "-",
                iterations,
                cost,
                item.verdict_text,
            ]
        )
    return rows


def power_lines(comparison: Comparison) -> list[str]:
    """What an inconclusive comparison could and could not have seen: the smallest
    difference detectable with these runs, and the runs a wanted difference needs."""
    lines = []
    power = f"{comparison.power:.0%} power, alpha {comparison.alpha:g}"
    for item in comparison.scenarios:
        if item.verdict != "inconclusive":
            continue
        if item.harness is not None:
            # Not a matter of sample size: the harness did not see the agent work.
            lines.append(f"{item.label}: inconclusive: {item.harness}")
            continue
        if item.detectable is None:
            seen = "no difference inside 0–100% is detectable with these runs"
        else:
            seen = (
                f"these runs could only detect a change of {_points(item.detectable)} or more "
                f"({power})"
            )
        lines.append(f"{item.label}: inconclusive: {seen}")
        if item.budget_spent is not None:
            lines.append(f"{item.label}: {item.budget_spent}")
    if comparison.detect is not None:
        for item in comparison.scenarios:
            if item.base is None or item.new is None:
                continue
            wanted = _points(comparison.detect)
            if item.needed is None:
                lines.append(f"{item.label}: a change of {wanted} cannot happen from this rate")
            else:
                have = min(item.base.valid_runs, item.new.valid_runs)
                lines.append(
                    f"{item.label}: to detect a change of {wanted} ({power}) needs "
                    f"{item.needed} valid run(s) per side (has {have})"
                )
    return lines


def compare_details(comparison: Comparison) -> list[str]:
    """Below the table: what an inconclusive comparison could detect, and which
    fragments changed, per scenario."""
    lines = power_lines(comparison)
    for item in comparison.scenarios:
        if item.changed_fragments:
            lines.append(f"{item.label}: fragments changed: " + ", ".join(item.changed_fragments))
        elif item.prompt_changed is False:
            lines.append(f"{item.label}: the same prompt on both sides")
    return lines


def compare_table(comparison: Comparison) -> list[str]:
    lines = table(COMPARE_HEADERS, compare_rows(comparison), COMPARE_NUMERIC)
    details = compare_details(comparison)
    if details:
        lines += ["", *details]
    regressed = comparison.regressed
    lines.append("")
    if regressed:
        names = ", ".join(item.label for item in regressed)
        lines.append(
            f"{len(regressed)} scenario(s) regressed significantly "
            f"(two-sided Fisher's exact test, alpha {comparison.alpha:g}): {names}"
        )
    else:
        lines.append(
            f"no scenario regressed significantly (two-sided Fisher's exact test, "
            f"alpha {comparison.alpha:g})"
        )
    return lines


def pct(value: float | None) -> str:
    """A rate as a whole percentage, ``n/a`` when there is none."""
    return "n/a" if value is None else f"{value:.0%}"


def variant_table(comparison: VariantComparison) -> list[str]:
    """The ranking and the pairwise tests, each led by its lift, for a terminal."""
    from pytest_ooda.report.render_fired import lift_text

    alpha = comparison.alpha
    lines = [
        f"variants ranked by success rate over every scenario (pairwise Fisher's exact "
        f"tests, {comparison.correction}-corrected, alpha {alpha:g}):",
        "",
        f"  {'#':>2}  {'variant':<20} {'runs':>5} {'rate':>5}  {'95% CI':<11} "
        f"{'wins':>4} {'losses':>6} {'errors':>6}",
    ]
    for index, rank in enumerate(comparison.ranking, start=1):
        low, high = rank.interval
        lines.append(
            f"  {index:>2}  {rank.variant[:20]:<20} {rank.pooled.runs:>5} "
            f"{pct(rank.pooled.rate):>5}  {pct(low) + '-' + pct(high):<11} "
            f"{rank.wins:>4} {rank.losses:>6} {rank.pooled.errors:>6}"
        )
    if not comparison.pairs:
        lines += ["", "  no scenario ran under two variants: nothing to compare"]
        return lines
    lines += ["", "pairs:"]
    for pair in comparison.pairs:
        winner = pair.winner(alpha)
        verdict = f"{winner} better" if winner else "no significant difference"
        if pair.blind is not None:
            verdict = f"inconclusive: {pair.blind}"
        lines.append(
            f"  {pair.label}: {lift_text(pair)}; {pair.a} "
            f"{pair.tally_a.successes}/{pair.tally_a.runs} vs "
            f"{pair.b} {pair.tally_b.successes}/{pair.tally_b.runs}  p={pair.p_value:.3g} "
            f"adjusted p={pair.adjusted:.3g}  {verdict}"
        )
    return lines
