"""``ooda compare --by variant``: every pair of variants compared per scenario, and the
variants ranked.

Per scenario and per pair of variants that both ran it: the two success rates and the
two-sided p-value of Fisher's exact test. With V variants and S scenarios that is up to
S·V(V-1)/2 tests, so the p-values are adjusted with Holm's step-down method
(family-wise error rate ``alpha`` over every test of the report): a pair is called
different only when its adjusted p-value is below ``alpha``. The ranking orders the
variants by their success rate over every scenario pooled (the Wilson interval shows
how sure that rate is), then by significant wins minus losses. Runs whose outcome is an
infrastructure ``error`` are counted apart and left out of every rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

from pytest_ooda.evaluate.stats import DEFAULT_ALPHA, fisher_exact, wilson_interval

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from pytest_ooda.evaluate.results import RunRecord

#: The variant name of runs that ran under none.
NO_VARIANT = "(none)"
#: The multiple-comparison correction used, as reports name it.
CORRECTION = "Holm"


def variant_of(record: RunRecord) -> str:
    return record.variant or NO_VARIANT


def _is_error(record: RunRecord) -> bool:
    return record.outcome == "error"


@dataclass(frozen=True)
class Tally:
    """A variant's runs of one scenario (or of all, pooled)."""

    runs: int = 0
    successes: int = 0
    errors: int = 0

    @property
    def rate(self) -> float | None:
        return self.successes / self.runs if self.runs else None

    def add(self, record: RunRecord) -> Tally:
        if _is_error(record):
            return Tally(self.runs, self.successes, self.errors + 1)
        return Tally(self.runs + 1, self.successes + int(record.outcome == "success"), self.errors)


@dataclass(frozen=True)
class PairTest:
    """Variants ``a`` and ``b`` on one scenario."""

    procedure: str
    scenario: str
    a: str
    b: str
    tally_a: Tally
    tally_b: Tally
    p_value: float
    adjusted: float = 1.0

    @property
    def label(self) -> str:
        return f"{self.procedure}/{self.scenario}"

    def winner(self, alpha: float) -> str | None:
        """The better variant when the difference is significant after correction."""
        if self.adjusted >= alpha or self.tally_a.rate == self.tally_b.rate:
            return None
        return self.a if (self.tally_a.rate or 0) > (self.tally_b.rate or 0) else self.b


@dataclass(frozen=True)
class VariantRank:
    variant: str
    pooled: Tally
    wins: int = 0
    losses: int = 0
    scenarios: int = 0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.pooled.successes, self.pooled.runs)


@dataclass(frozen=True)
class VariantComparison:
    ranking: tuple[VariantRank, ...]
    pairs: tuple[PairTest, ...]
    alpha: float
    tallies: dict[tuple[str, str], dict[str, Tally]] = field(default_factory=dict)
    correction: str = CORRECTION


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the i-th smallest of m is multiplied
    by (m - i + 1), made non-decreasing, and capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda index: p_values[index])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def compare_variants(
    records: Iterable[RunRecord], *, alpha: float = DEFAULT_ALPHA
) -> VariantComparison:
    """Every pair of variants on every scenario both ran, Holm-corrected, and the
    variants ranked (see the module docstring)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    tallies: dict[tuple[str, str], dict[str, Tally]] = {}
    pooled: dict[str, Tally] = {}
    for record in records:
        variant = variant_of(record)
        per = tallies.setdefault((record.procedure, record.scenario), {})
        per[variant] = per.get(variant, Tally()).add(record)
        pooled[variant] = pooled.get(variant, Tally()).add(record)
    raw: list[PairTest] = []
    for (procedure, scenario), per in sorted(tallies.items()):
        names = sorted(name for name, tally in per.items() if tally.runs)
        for a, b in combinations(names, 2):
            ta, tb = per[a], per[b]
            p = fisher_exact(
                ta.successes, ta.runs - ta.successes, tb.successes, tb.runs - tb.successes
            )
            raw.append(PairTest(procedure, scenario, a, b, ta, tb, p))
    adjusted = holm([pair.p_value for pair in raw])
    pairs = tuple(
        PairTest(
            pair.procedure,
            pair.scenario,
            pair.a,
            pair.b,
            pair.tally_a,
            pair.tally_b,
            pair.p_value,
            value,
        )
        for pair, value in zip(raw, adjusted, strict=True)
    )
    wins: dict[str, int] = dict.fromkeys(pooled, 0)
    losses: dict[str, int] = dict.fromkeys(pooled, 0)
    for pair in pairs:
        winner = pair.winner(alpha)
        if winner is not None:
            loser = pair.b if winner == pair.a else pair.a
            wins[winner] += 1
            losses[loser] += 1
    ranking = sorted(
        (
            VariantRank(
                name,
                tally,
                wins[name],
                losses[name],
                sum(1 for per in tallies.values() if name in per and per[name].runs),
            )
            for name, tally in pooled.items()
        ),
        key=lambda rank: (-(rank.pooled.rate or 0.0), -(rank.wins - rank.losses), rank.variant),
    )
    return VariantComparison(tuple(ranking), pairs, alpha, tallies)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def variant_table(comparison: VariantComparison) -> list[str]:
    """The ranking and the pairwise tests, for a terminal."""
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
            f"{_pct(rank.pooled.rate):>5}  {_pct(low) + '-' + _pct(high):<11} "
            f"{rank.wins:>4} {rank.losses:>6} {rank.pooled.errors:>6}"
        )
    if not comparison.pairs:
        lines += ["", "  no scenario ran under two variants: nothing to compare"]
        return lines
    lines += ["", "pairs:"]
    for pair in comparison.pairs:
        winner = pair.winner(alpha)
        verdict = f"{winner} better" if winner else "no significant difference"
        lines.append(
            f"  {pair.label}: {pair.a} {pair.tally_a.successes}/{pair.tally_a.runs} vs "
            f"{pair.b} {pair.tally_b.successes}/{pair.tally_b.runs}  p={pair.p_value:.3g} "
            f"adjusted p={pair.adjusted:.3g}  {verdict}"
        )
    return lines


def variant_markdown(comparison: VariantComparison, *, title: str) -> str:
    """The same as Markdown (``--markdown`` and ``$GITHUB_STEP_SUMMARY``)."""
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
            f"| {index} | `{rank.variant}` | {rank.pooled.runs} | {_pct(rank.pooled.rate)} | "
            f"{_pct(low)}–{_pct(high)} | {rank.wins} | {rank.losses} | {rank.pooled.errors} |"
        )
    if comparison.pairs:
        out += [
            "",
            "| scenario | a | b | p | adjusted p | verdict |",
            "| --- | --- | --- | ---: | ---: | --- |",
        ]
        for pair in comparison.pairs:
            winner = pair.winner(alpha)
            out.append(
                f"| {pair.label} | `{pair.a}` {pair.tally_a.successes}/{pair.tally_a.runs} | "
                f"`{pair.b}` {pair.tally_b.successes}/{pair.tally_b.runs} | {pair.p_value:.3g} | "
                f"{pair.adjusted:.3g} | {f'`{winner}` better' if winner else 'no difference'} |"
            )
    return "\n".join(out) + "\n"
