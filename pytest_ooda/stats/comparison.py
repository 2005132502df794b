"""A/B comparison of two sets of runs (before and after a prompt change).

Per scenario: the change in success rate with the two-sided p-value of Fisher's exact
test on the 2x2 table (successes and failures, base and new, over the valid runs:
infrastructure ``error`` runs are left out), the change in mean iterations and mean
cost, and which fragments differ between the two prompt versions. A scenario
*regressed* when its rate fell and the p-value is below ``alpha``, *improved* when it
rose so; otherwise the comparison is *inconclusive* — never "unchanged", since too few
runs show no difference either way — and says the smallest difference these sample
sizes could have detected, and how many runs per side a wanted difference needs. A
scenario the harness could not observe on a side — a positive control of that side
failed (:mod:`.controls`) — is *inconclusive* too, saying so, never a regression; and
so is one a side's spent budget left with fewer runs than planned, or none at all
(:mod:`.spending`): *inconclusive: budget spent*, never "base-only".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda.results import BUDGET_SPENT
from pytest_ooda.stats.aggregate import ScenarioStats, summarize
from pytest_ooda.stats.controls import harness_blind
from pytest_ooda.stats.inference import (
    DEFAULT_ALPHA,
    DEFAULT_K,
    DEFAULT_POWER,
    fisher_exact,
    min_detectable_difference,
    runs_needed,
)
from pytest_ooda.stats.spending import spent_sessions

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pytest_ooda._types import Verdict
    from pytest_ooda.results import RunRecord

__all__ = ["DEFAULT_ALPHA", "Comparison", "ScenarioComparison", "compare"]


@dataclass(frozen=True)
class ScenarioComparison:
    """One scenario on both sides (``base`` or ``new`` is ``None`` when it ran on one
    side only)."""

    procedure: str
    scenario: str
    base: ScenarioStats | None
    new: ScenarioStats | None
    p_value: float | None
    verdict: Verdict
    changed_fragments: tuple[str, ...] = ()
    #: The smallest change of the base rate these sample sizes detect at 80% power.
    detectable: float | None = None
    #: Runs per side needed to detect the comparison's ``detect`` difference.
    needed: int | None = None
    #: Why a side made fewer runs than planned for its session's budget: an
    #: inconclusive comparison is then *inconclusive: budget spent*.
    budget_spent: str | None = None
    #: Why the harness could not observe the scenario on a side (a positive control
    #: failed there): the verdict is then ``inconclusive``, whatever the rates say.
    harness: str | None = None

    @property
    def verdict_text(self) -> str:
        """The verdict as reports word it: ``inconclusive: budget spent`` when the
        budget left the runs that might have told short."""
        if self.verdict == "inconclusive" and self.budget_spent is not None:
            return "inconclusive: budget spent"
        return self.verdict

    @property
    def label(self) -> str:
        return f"{self.procedure}/{self.scenario}"

    @property
    def rate_change(self) -> float | None:
        if self.base is None or self.new is None:
            return None
        return self.new.rate - self.base.rate

    @property
    def iterations_change(self) -> float | None:
        if self.base is None or self.new is None:
            return None
        return self.new.iterations_mean - self.base.iterations_mean

    @property
    def cost_change(self) -> float | None:
        if self.base is None or self.new is None:
            return None
        if self.base.cost_mean is None or self.new.cost_mean is None:
            return None
        return self.new.cost_mean - self.base.cost_mean

    @property
    def prompt_changed(self) -> bool | None:
        """Whether the two sides ran different prompts (``None`` when unknown)."""
        if self.base is None or self.new is None:
            return None
        if not self.base.prompt_versions or not self.new.prompt_versions:
            return None
        return set(self.base.prompt_versions) != set(self.new.prompt_versions)


@dataclass(frozen=True)
class Comparison:
    scenarios: tuple[ScenarioComparison, ...]
    alpha: float
    #: The difference the user wants to be able to detect (``--detect``), if any.
    detect: float | None = None
    power: float = DEFAULT_POWER

    @property
    def regressed(self) -> tuple[ScenarioComparison, ...]:
        return tuple(item for item in self.scenarios if item.verdict == "regressed")

    @property
    def blind(self) -> tuple[ScenarioComparison, ...]:
        """The scenarios the harness could not observe on a side (a control failed)."""
        return tuple(item for item in self.scenarios if item.harness is not None)


def _fragments(stats: ScenarioStats) -> dict[str, set[str]]:
    """Per fragment place (``observe[0] prompts/look.md``) the hashes it had."""
    seen: dict[str, set[str]] = {}
    for record in stats.records:
        for fragment in record.head.fragments:
            seen.setdefault(fragment.key, set()).add(fragment.sha256)
    return seen


def _changed_fragments(base: ScenarioStats, new: ScenarioStats) -> tuple[str, ...]:
    before, after = _fragments(base), _fragments(new)
    return tuple(
        key for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)
    )


def _blind(base: ScenarioStats, new: ScenarioStats) -> str | None:
    """Why the harness could not observe a side (its control failed), naming the side."""
    for side, stats in (("base", base), ("new", new)):
        why = harness_blind(stats)
        if why is not None:
            return f"{why} ({side})"
    return None


def _verdict(base: ScenarioStats, new: ScenarioStats, p_value: float, alpha: float) -> Verdict:
    if p_value >= alpha or new.rate == base.rate:
        return "inconclusive"
    return "regressed" if new.rate < base.rate else "improved"


def compare(
    base: Iterable[RunRecord],
    new: Iterable[RunRecord],
    *,
    alpha: float = DEFAULT_ALPHA,
    k: int = DEFAULT_K,
    detect: float | None = None,
) -> Comparison:
    """Compare every scenario found on either side; ``detect`` (a rate difference such
    as 0.2) asks how many runs per side would detect it."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if detect is not None and not 0 < detect < 1:
        raise ValueError(f"detect must be between 0 and 1, got {detect}")
    base, new = list(base), list(new)
    before = {(s.procedure, s.scenario): s for s in summarize(base, k=k)}
    after = {(s.procedure, s.scenario): s for s in summarize(new, k=k)}
    # A side whose budget ran out before a scenario's first run has none of it: that
    # is inconclusive: budget spent, not a scenario the other side lacks.
    spent = {"base": spent_sessions(base), "new": spent_sessions(new)}
    items = []
    for key in sorted(before.keys() | after.keys()):
        old, now = before.get(key), after.get(key)
        if old is None or now is None:
            verdict: Verdict = "new-only" if old is None else "base-only"
            side = "base" if old is None else "new"
            why = next(iter(spent[side].values()), None)
            if why is not None:
                made = f"{BUDGET_SPENT}: no run of it on the {side} side ({why})"
                items.append(
                    ScenarioComparison(
                        key[0], key[1], old, now, None, "inconclusive", budget_spent=made
                    )
                )
                continue
            items.append(ScenarioComparison(key[0], key[1], old, now, None, verdict))
            continue
        p_value = fisher_exact(old.successes, old.failures, now.successes, now.failures)
        blind = _blind(old, now)
        items.append(
            ScenarioComparison(
                key[0],
                key[1],
                old,
                now,
                p_value,
                "inconclusive" if blind else _verdict(old, now, p_value, alpha),
                _changed_fragments(old, now),
                detectable=min_detectable_difference(
                    old.valid_runs, now.valid_runs, old.rate, alpha=alpha
                ),
                needed=None if detect is None else runs_needed(old.rate, detect, alpha=alpha),
                budget_spent=old.budget_spent or now.budget_spent,
                harness=blind,
            )
        )
    return Comparison(tuple(items), alpha, detect)
