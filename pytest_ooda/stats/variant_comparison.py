"""``ooda compare --by variant``: every pair of variants compared per scenario, and the
variants ranked.

Per scenario and per pair of variants that both ran it: the two success rates, the
**lift** of the second over the first (the difference of the rates, with Newcombe's 95%
interval) and the two-sided p-value of Fisher's exact test. A pair of which one ran
without agent material (a ``claude: without`` variant) and the other with it puts the
one without first, so the lift is the material's. With V variants and S scenarios that is up to
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

from pytest_ooda._types import PHASES
from pytest_ooda.stats.aggregate import summarize
from pytest_ooda.stats.controls import harness_blind
from pytest_ooda.stats.inference import (
    DEFAULT_ALPHA,
    difference_interval,
    fisher_exact,
    wilson_interval,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from pytest_ooda.results import RunRecord

#: The variant name of runs that ran under none.
NO_VARIANT = "(none)"
#: The multiple-comparison correction used, as reports name it.
CORRECTION = "Holm"


def variant_of(record: RunRecord) -> str:
    return record.head.variant or NO_VARIANT


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
    #: Why the harness could not observe one of the two (a control of its variant
    #: failed): no winner then, whatever the rates say.
    blind: str | None = None

    @property
    def label(self) -> str:
        return f"{self.procedure}/{self.scenario}"

    @property
    def lift(self) -> tuple[float | None, tuple[float, float]]:
        """``b``'s rate minus ``a``'s (``None`` when either has no valid run), and its
        95% interval."""
        a, b = self.tally_a, self.tally_b
        difference = b.rate - a.rate if a.rate is not None and b.rate is not None else None
        return difference, difference_interval(a.successes, a.runs, b.successes, b.runs)

    def winner(self, alpha: float) -> str | None:
        """The better variant when the difference is significant after correction (and
        the harness could observe both)."""
        if self.blind or self.adjusted >= alpha or self.tally_a.rate == self.tally_b.rate:
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


def _blind(records: Sequence[RunRecord]) -> dict[tuple[str, str, str], str]:
    """Why the harness could not observe a scenario under a variant (a positive control
    of that variant failed), by procedure, scenario and variant."""
    found: dict[tuple[str, str, str], str] = {}
    for stats in summarize(records):
        why = harness_blind(stats)
        if why is not None and stats.records:
            head = stats.records[0].head
            found[(head.procedure, head.scenario, head.variant or NO_VARIANT)] = (
                f"{why} ({head.variant or NO_VARIANT})"
            )
    return found


def compare_variants(
    records: Iterable[RunRecord], *, alpha: float = DEFAULT_ALPHA
) -> VariantComparison:
    """Every pair of variants on every scenario both ran, Holm-corrected, and the
    variants ranked (see the module docstring)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    records = list(records)
    blind = _blind(records)
    tallies: dict[tuple[str, str], dict[str, Tally]] = {}
    pooled: dict[str, Tally] = {}
    with_material: set[tuple[str, str, str]] = set()
    for record in records:
        variant = variant_of(record)
        # Installed material only: a workspace's own ``.claude/`` is in every variant.
        if any(
            fragment.phase not in PHASES and not fragment.source.startswith("workspace/")
            for fragment in record.head.fragments
        ):
            with_material.add((record.head.procedure, record.head.scenario, variant))
        per = tallies.setdefault((record.head.procedure, record.head.scenario), {})
        per[variant] = per.get(variant, Tally()).add(record)
        pooled[variant] = pooled.get(variant, Tally()).add(record)
    raw: list[PairTest] = []
    for (procedure, scenario), per in sorted(tallies.items()):
        names = sorted(name for name, tally in per.items() if tally.runs)
        for a, b in combinations(names, 2):
            if (procedure, scenario, a) in with_material and (
                procedure,
                scenario,
                b,
            ) not in with_material:
                a, b = b, a  # the lift is the material's: the run without it first
            ta, tb = per[a], per[b]
            p = fisher_exact(
                ta.successes, ta.runs - ta.successes, tb.successes, tb.runs - tb.successes
            )
            why = blind.get((procedure, scenario, a)) or blind.get((procedure, scenario, b))
            raw.append(PairTest(procedure, scenario, a, b, ta, tb, p, blind=why))
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
            pair.blind,
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
