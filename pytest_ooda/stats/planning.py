"""How many runs an A/B comparison needs, and what they will cost, from past runs
(``ooda plan-runs``).

From a scenario's past results: its success rate (the base rate a change is measured
from), the share of its runs that were infrastructure errors (which measure nothing and
must be made up), and its cost and tokens per run. The valid runs each arm needs are
:func:`~pytest_ooda.stats.inference.runs_needed`'s (a two-sided test at ``alpha``
detecting a change of ``detect`` with probability ``power``, by Cohen's arcsine effect
size); the runs to start are those over the share of runs that are valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda.stats.inference import DEFAULT_ALPHA, DEFAULT_POWER, runs_needed

if TYPE_CHECKING:
    from pytest_ooda.stats.aggregate import ScenarioStats

__all__ = ["RunsPlan", "plan_runs"]


@dataclass(frozen=True)
class RunsPlan:
    """The runs one scenario's comparison needs."""

    label: str
    base_rate: float
    #: The past runs the figures come from: valid ones, and infrastructure errors.
    valid_runs: int
    errors: int
    detect: float
    power: float
    alpha: float
    #: Valid runs each arm needs (``None``: no change that large fits in [0, 1]).
    valid_per_arm: int | None
    cost_per_run: float | None
    tokens_per_run: float | None

    @property
    def per_arm(self) -> int | None:
        """Runs to start per arm: the valid runs needed, made up for the share of runs
        that were infrastructure errors."""
        if self.valid_per_arm is None:
            return None
        total = self.valid_runs + self.errors
        valid_share = self.valid_runs / total if total else 1.0
        if valid_share <= 0:
            return None
        return math.ceil(self.valid_per_arm / valid_share)

    @property
    def total_cost(self) -> float | None:
        """Both arms' runs at the past cost per run."""
        if self.per_arm is None or self.cost_per_run is None:
            return None
        return 2 * self.per_arm * self.cost_per_run


def plan_runs(
    stats: ScenarioStats,
    *,
    detect: float,
    power: float = DEFAULT_POWER,
    alpha: float = DEFAULT_ALPHA,
) -> RunsPlan:
    """The runs per arm ``stats``' scenario needs to detect a change of ``detect`` in
    its success rate, and their cost at its past cost per run."""
    return RunsPlan(
        label=stats.label,
        base_rate=stats.rate,
        valid_runs=stats.valid_runs,
        errors=stats.errors,
        detect=detect,
        power=power,
        alpha=alpha,
        valid_per_arm=runs_needed(stats.rate, detect, alpha=alpha, power=power),
        cost_per_run=stats.cost_mean,
        tokens_per_run=stats.tokens_mean,
    )
