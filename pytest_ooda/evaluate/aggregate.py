"""Statistics per scenario over its runs, and the aggregate expectations they are held to.

A scenario's runs (from one session, or merged from many files) become one
:class:`ScenarioStats`: runs and successes, the success rate with its Wilson 95%
interval, pass^k and pass@k, iterations (mean, median, max, histogram), wall time,
tokens and cost over the runs that reported them, and how the runs ended.
:func:`check_gates` holds it to the scenario's ``expect.success_rate`` /
``max_mean_iterations`` / ``max_mean_cost``.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import STATUSES
from pytest_ooda.evaluate.stats import (
    CONFIDENCE,
    DEFAULT_K,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda.evaluate.results import RunRecord

__all__ = ["DEFAULT_K", "Gates", "ScenarioStats", "check_gates", "summarize"]


@dataclass(frozen=True)
class Gates:
    """A scenario's aggregate expectations, as its records carry them."""

    min_success_rate: float | None = None
    max_mean_iterations: float | None = None
    max_mean_cost: float | None = None

    @classmethod
    def from_yaml(cls, data: Mapping[str, Any] | None) -> Gates | None:
        """From the ``expect`` keys as written (``success_rate: {min: …}`` …)."""
        if not data:
            return None
        rate = data.get("success_rate")
        low = rate.get("min") if isinstance(rate, dict) else None
        iterations, cost = data.get("max_mean_iterations"), data.get("max_mean_cost")
        return cls(
            float(low) if isinstance(low, (int, float)) else None,
            float(iterations) if isinstance(iterations, (int, float)) else None,
            float(cost) if isinstance(cost, (int, float)) else None,
        )

    def describe(self) -> str:
        parts = []
        if self.min_success_rate is not None:
            parts.append(f"success rate >= {self.min_success_rate:.0%}")
        if self.max_mean_iterations is not None:
            parts.append(f"mean iterations <= {self.max_mean_iterations:g}")
        if self.max_mean_cost is not None:
            parts.append(f"mean cost <= ${self.max_mean_cost:g}")
        return ", ".join(parts)


@dataclass(frozen=True)
class ScenarioStats:
    """Everything measured about one scenario's runs."""

    procedure: str
    scenario: str
    runs: int
    successes: int
    interval: tuple[float, float]
    k: int
    pass_hat_k: float | None
    pass_at_k: float | None
    iterations_mean: float
    iterations_median: float
    iterations_max: int
    iteration_counts: Mapping[int, int]
    elapsed_mean: float
    elapsed_median: float
    elapsed_total: float
    token_runs: int = 0
    tokens_mean: float | None = None
    tokens_total: int | None = None
    cost_runs: int = 0
    cost_mean: float | None = None
    cost_total: float | None = None
    statuses: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    prompt_versions: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    gates: Gates | None = None
    records: tuple[RunRecord, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.procedure}/{self.scenario}"

    @property
    def rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0

    def status_text(self) -> str:
        """``success 17, max-iters 3``: how the runs ended, in vocabulary order."""
        return ", ".join(f"{status} {count}" for status, count in self.statuses.items())


def _group(records: Iterable[RunRecord]) -> dict[tuple[str, str], list[RunRecord]]:
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for record in records:
        groups.setdefault((record.procedure, record.scenario_key), []).append(record)
    return groups


def _latest_gates(records: Sequence[RunRecord]) -> Gates | None:
    """The gates of the most recent run: a scenario edited between sessions is held to
    what it says now."""
    latest = max(records, key=lambda record: record.finished_at)
    return Gates.from_yaml(latest.aggregate_expect)


def _stats(procedure: str, scenario: str, records: Sequence[RunRecord], k: int) -> ScenarioStats:
    runs = len(records)
    successes = sum(record.success for record in records)
    counts = [len(record.iterations) for record in records]
    elapsed = [record.elapsed_s for record in records]
    tokens = [record.usage.total_tokens for record in records if record.usage is not None]
    costs = [record.cost for record in records if record.cost is not None]
    ended = Counter(record.status for record in records)
    order = [*STATUSES, *sorted(set(ended) - set(STATUSES))]
    return ScenarioStats(
        procedure=procedure,
        scenario=scenario,
        runs=runs,
        successes=successes,
        interval=wilson_interval(successes, runs, CONFIDENCE),
        k=k,
        pass_hat_k=pass_hat_k(runs, successes, k) if runs >= k else None,
        pass_at_k=pass_at_k(runs, successes, k) if runs >= k else None,
        iterations_mean=statistics.fmean(counts),
        iterations_median=float(statistics.median(counts)),
        iterations_max=max(counts),
        iteration_counts=MappingProxyType(dict(sorted(Counter(counts).items()))),
        elapsed_mean=statistics.fmean(elapsed),
        elapsed_median=float(statistics.median(elapsed)),
        elapsed_total=sum(elapsed),
        token_runs=len(tokens),
        tokens_mean=statistics.fmean(tokens) if tokens else None,
        tokens_total=sum(tokens) if tokens else None,
        cost_runs=len(costs),
        cost_mean=statistics.fmean(costs) if costs else None,
        cost_total=sum(costs) if costs else None,
        statuses=MappingProxyType({status: ended[status] for status in order if ended[status]}),
        prompt_versions=tuple(
            dict.fromkeys(record.prompt_sha256 for record in records if record.prompt_sha256)
        ),
        commits=tuple(dict.fromkeys(record.git_commit for record in records if record.git_commit)),
        gates=_latest_gates(records),
        records=tuple(sorted(records, key=lambda record: (record.started_at, record.run))),
    )


def summarize(records: Iterable[RunRecord], *, k: int = DEFAULT_K) -> list[ScenarioStats]:
    """One :class:`ScenarioStats` per ``procedure/scenario``, sorted by that label.
    pass^k and pass@k are ``None`` for a scenario with fewer than ``k`` runs."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return [
        _stats(procedure, scenario, group, k)
        for (procedure, scenario), group in sorted(_group(records).items())
    ]


def _exact(rate: float, limit: float) -> str:
    """``rate`` as a percentage, with a decimal when whole percents would show it equal
    to the ``limit`` it missed (79.5% is not 80%)."""
    shown = f"{rate:.0%}"
    return f"{rate:.1%}" if shown == f"{limit:.0%}" else shown


def check_gates(stats: ScenarioStats) -> list[str]:
    """Every aggregate expectation ``stats`` misses, as a sentence. A gate that cannot
    be judged (a cost limit when no run reported a cost) is missed, not passed: a CI
    gate must never pass for want of data."""
    gates = stats.gates
    if gates is None:
        return []
    problems = []
    if gates.min_success_rate is not None and stats.rate < gates.min_success_rate:
        low, high = stats.interval
        problems.append(
            f"success rate {_exact(stats.rate, gates.min_success_rate)} "
            f"({stats.successes}/{stats.runs}, 95% CI {low:.0%}–{high:.0%}) is below the "
            f"expected minimum {gates.min_success_rate:.0%}"
        )
    if gates.max_mean_iterations is not None and stats.iterations_mean > gates.max_mean_iterations:
        problems.append(
            f"mean iterations {stats.iterations_mean:.2f} is above the expected maximum "
            f"{gates.max_mean_iterations:g}"
        )
    if gates.max_mean_cost is not None:
        if stats.cost_mean is None:
            problems.append(
                f"mean cost cannot be checked against ${gates.max_mean_cost:g}: no run "
                "reported a cost (the AI backend does not price its tokens)"
            )
        elif stats.cost_mean > gates.max_mean_cost:
            problems.append(
                f"mean cost ${stats.cost_mean:.4f} is above the expected maximum "
                f"${gates.max_mean_cost:g}"
            )
    return problems
