"""Statistics per scenario over its runs, and the aggregate expectations they are held to.

A scenario's runs (from one session, or merged from many files) become one
:class:`ScenarioStats`: runs, infrastructure errors and successes, the success rate
with its Wilson 95% interval over the valid (non-``error``) runs, pass^k and pass@k,
iterations (mean, median, max, histogram), wall time, tokens and cost over the runs that
reported them, and how the runs ended (their outcomes, each with why where the loop's
status says more than the outcome). :func:`check_gates` holds it to the scenario's
``expect.success_rate`` / ``max_mean_iterations`` / ``max_mean_cost``, given enough
valid runs; with ``success_rate.stop_early`` a sequential test's verdict counts once it
is settled.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import RUN_OUTCOMES, STATUSES
from pytest_ooda.results import UNMET, ended_because as outcome_because
from pytest_ooda.stats.controls import apply_controls, harness_blind
from pytest_ooda.stats.fired import AssertionStats, TriggerStats, assertion_stats, trigger_stats
from pytest_ooda.stats.inference import (
    CONFIDENCE,
    DEFAULT_K,
    Sprt,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)
from pytest_ooda.stats.spending import shortfall, spent_sessions

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda.results import RunRecord

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MAX_ERROR_RATE",
    "MIN_VALID_RUNS",
    "UNMET",
    "Gates",
    "ScenarioStats",
    "check_gates",
    "drop_duplicates",
    "early_verdict",
    "ended_because",
    "gate_inconclusive",
    "summarize",
]

#: A gate judged over fewer valid (non-``error``) runs than this fails for want of data,
#: unless the scenario asks for fewer runs (``repeat:``) in the first place.
MIN_VALID_RUNS = 5

#: The share of a scenario's runs that may be infrastructure errors (``expect.max_error_rate``
#: when not written): past it the gates are inconclusive, since the runs left are no
#: longer the sample that was planned (errors cluster: a rate limit hits the fast runs).
DEFAULT_MAX_ERROR_RATE = 0.2


def drop_duplicates(records: Iterable[RunRecord]) -> tuple[list[RunRecord], int]:
    """One record per run of a measurement: a session under ``--ooda-resume`` runs an
    earlier ``error`` run again, and its record names the one it replaces (``replaces``,
    a run id); the replaced record is dropped when the one replacing it is there too.
    Nothing else is: two sessions are two measurements, however alike their runs.
    Returns the records kept and how many were dropped."""
    given = list(records)
    replaced = {record.head.replaces for record in given if record.head.replaces is not None}
    kept = [record for record in given if record.id not in replaced]
    return kept, len(given) - len(kept)


def ended_because(record: RunRecord) -> str | None:
    """Why a run has its outcome, where the loop's status says more than the outcome
    (:func:`pytest_ooda.results.outcome.ended_because`: ``max-iters``, ``aborted``,
    ``interrupted``, :data:`UNMET`; ``None`` for a plain success and an ``error``)."""
    return outcome_because(record.outcome, record.status, (record.head.expect or {}).get("status"))


@dataclass(frozen=True)
class Gates:
    """A scenario's aggregate expectations, as its records carry them."""

    min_success_rate: float | None = None
    max_mean_iterations: float | None = None
    max_mean_cost: float | None = None
    #: ``success_rate.stop_early``: judge with a sequential test and skip the remaining
    #: runs once it is settled.
    stop_early: bool = False
    #: ``success_rate.min_runs``: the valid runs a verdict needs (default
    #: :data:`MIN_VALID_RUNS`, or the scenario's run count when smaller).
    min_runs: int | None = None
    #: ``max_error_rate`` as written (``None``: :data:`DEFAULT_MAX_ERROR_RATE`).
    max_error_rate: float | None = None

    @property
    def error_bound(self) -> float:
        """The share of runs that may be infrastructure errors."""
        return DEFAULT_MAX_ERROR_RATE if self.max_error_rate is None else self.max_error_rate

    @classmethod
    def from_yaml(cls, data: Mapping[str, Any] | None) -> Gates | None:
        """From the ``expect`` keys as written (``success_rate: {min: …}`` …)."""
        if not data:
            return None
        rate = data.get("success_rate")
        rate = rate if isinstance(rate, dict) else {}
        low = rate.get("min")
        iterations, cost = data.get("max_mean_iterations"), data.get("max_mean_cost")
        min_runs, errors = rate.get("min_runs"), data.get("max_error_rate")
        return cls(
            float(low) if isinstance(low, (int, float)) else None,
            float(iterations) if isinstance(iterations, (int, float)) else None,
            float(cost) if isinstance(cost, (int, float)) else None,
            stop_early=rate.get("stop_early") is True,
            min_runs=min_runs if isinstance(min_runs, int) and min_runs > 0 else None,
            max_error_rate=float(errors) if isinstance(errors, (int, float)) else None,
        )

    @property
    def sprt(self) -> Sprt | None:
        """The sequential test early stopping uses (``None`` when it is off)."""
        if not self.stop_early or self.min_success_rate is None:
            return None
        if not 0 < self.min_success_rate < 1:
            return None
        return Sprt(self.min_success_rate)

    def describe(self) -> str:
        parts = []
        if self.min_success_rate is not None:
            parts.append(f"success rate >= {self.min_success_rate:.0%}")
        if self.max_mean_iterations is not None:
            parts.append(f"mean iterations <= {self.max_mean_iterations:g}")
        if self.max_mean_cost is not None:
            parts.append(f"mean cost <= ${self.max_mean_cost:g}")
        if self.max_error_rate is not None:
            parts.append(f"errors <= {self.max_error_rate:.0%} of runs")
        return ", ".join(parts)


@dataclass(frozen=True)
class ScenarioStats:
    """Everything measured about one scenario's runs."""

    procedure: str
    scenario: str
    #: Every run, infrastructure errors included.
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
    #: Runs per outcome (``success``, ``failure``, ``error``, in that order, the ones
    #: that happened), each with its runs per :func:`ended_because` reason, most
    #: frequent first (empty when no run of it has one).
    outcomes: Mapping[str, tuple[int, Mapping[str, int]]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    prompt_versions: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    gates: Gates | None = None
    records: tuple[RunRecord, ...] = ()
    #: Runs that ended in an infrastructure ``error`` (not the procedure's fault).
    errors: int = 0
    #: Why, by reason, most frequent first.
    error_reasons: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: Retries the runs needed after infrastructure errors, in total.
    retries: int = 0
    #: The most runs any record of the scenario was planned with (``runs`` of ``run k
    #: of N``).
    planned: int = 0
    #: Why fewer runs were made than planned when a session's budget (``--ooda-budget``)
    #: left them out, else ``None``: its gates are then inconclusive, never failed.
    budget_spent: str | None = None
    #: Each named assertion's pass rate (``expect.activation``, ``expect.trajectory``).
    assertions: tuple[AssertionStats, ...] = ()
    #: A trigger set's recall and precision (``None``: not a trigger set).
    triggers: TriggerStats | None = None
    #: ``control: true``: a positive control (:mod:`.controls`); why it failed, if it
    #: did; and, for any other scenario, the failed controls of its variant that make
    #: its gates and comparisons inconclusive.
    control: bool = False
    control_failed: str | None = None
    blocked_by: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.procedure}/{self.scenario}"

    @property
    def valid_runs(self) -> int:
        """Runs that measured the procedure: every run but the ``error`` ones."""
        return self.runs - self.errors

    @property
    def failures(self) -> int:
        return self.valid_runs - self.successes

    @property
    def rate(self) -> float:
        """Successes over valid runs (``error`` runs are no sample of the procedure)."""
        return self.successes / self.valid_runs if self.valid_runs else 0.0

    def error_text(self) -> str:
        """``3 (rate-limit 2, overloaded 1)``, or ``0``."""
        if not self.errors:
            return "0"
        reasons = ", ".join(f"{reason} {count}" for reason, count in self.error_reasons.items())
        return f"{self.errors} ({reasons})" if reasons else str(self.errors)

    def outcome_parts(self) -> list[tuple[str, int, str]]:
        """``(outcome, runs, why)`` per outcome that happened: ``("failure", 3,
        "max-iters 2, expectations 1")``; ``why`` is empty when no run of it has a
        reason worth saying."""
        return [
            (outcome, count, ", ".join(f"{why} {n}" for why, n in reasons.items()))
            for outcome, (count, reasons) in self.outcomes.items()
        ]

    def outcome_text(self) -> str:
        """``success 17, failure 3 (max-iters 2, expectations 1), error 1``: how the
        runs ended, by outcome, with why where the loop's status adds to it."""
        return ", ".join(
            f"{outcome} {count}" + (f" ({why})" if why else "")
            for outcome, count, why in self.outcome_parts()
        )


def _group(records: Iterable[RunRecord]) -> dict[tuple[str, str], list[RunRecord]]:
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for record in records:
        groups.setdefault((record.head.procedure, record.scenario_key), []).append(record)
    return groups


def _latest_gates(records: Sequence[RunRecord]) -> Gates | None:
    """The gates of the most recent run: a scenario edited between sessions is held to
    what it says now."""
    latest = max(records, key=lambda record: record.finished_at)
    return Gates.from_yaml(latest.head.aggregate_expect)


def _reason(record: RunRecord) -> str:
    """The short kind of an error reason: ``rate-limit`` of ``rate-limit: HTTP 429 …``."""
    reason = record.error_reason or "unknown"
    return reason.split(":", 1)[0].strip() or "unknown"


def _stats(procedure: str, scenario: str, records: Sequence[RunRecord], k: int) -> ScenarioStats:
    runs = len(records)
    failed = [record for record in records if record.outcome == "error"]
    valid_records = [record for record in records if record.outcome != "error"]
    valid = len(valid_records)
    successes = sum(record.outcome == "success" for record in valid_records)
    # What a run costs in iterations and time describes the procedure: over the valid
    # runs (all of them when every run was an error, so the row still says something).
    measured = valid_records or list(records)
    counts = [len(record.iterations) for record in measured]
    elapsed = [record.elapsed_s for record in measured]
    tokens = [record.usage.total_tokens for record in measured if record.usage is not None]
    costs = [record.cost for record in measured if record.cost is not None]
    ended = Counter(record.status for record in records)
    order = [*STATUSES, *sorted(set(ended) - set(STATUSES))]
    reasons = Counter(_reason(record) for record in failed)
    outcomes: dict[str, tuple[int, Mapping[str, int]]] = {}
    for outcome in RUN_OUTCOMES:
        group = [record for record in records if record.outcome == outcome]
        if group:
            because = Counter(
                why for why in (ended_because(record) for record in group) if why is not None
            )
            outcomes[outcome] = (len(group), MappingProxyType(dict(because.most_common())))
    return ScenarioStats(
        procedure=procedure,
        scenario=scenario,
        runs=runs,
        successes=successes,
        interval=wilson_interval(successes, valid, CONFIDENCE),
        k=k,
        pass_hat_k=pass_hat_k(valid, successes, k) if valid >= k else None,
        pass_at_k=pass_at_k(valid, successes, k) if valid >= k else None,
        iterations_mean=statistics.fmean(counts),
        iterations_median=float(statistics.median(counts)),
        iterations_max=max(counts),
        iteration_counts=MappingProxyType(dict(sorted(Counter(counts).items()))),
        elapsed_mean=statistics.fmean(elapsed),
        elapsed_median=float(statistics.median(elapsed)),
        elapsed_total=sum(record.elapsed_s for record in records),
        token_runs=len(tokens),
        tokens_mean=statistics.fmean(tokens) if tokens else None,
        tokens_total=sum(tokens) if tokens else None,
        cost_runs=len(costs),
        cost_mean=statistics.fmean(costs) if costs else None,
        cost_total=sum(costs) if costs else None,
        statuses=MappingProxyType({status: ended[status] for status in order if ended[status]}),
        outcomes=MappingProxyType(outcomes),
        prompt_versions=tuple(
            dict.fromkeys(record.prompt_sha256 for record in records if record.prompt_sha256)
        ),
        commits=tuple(dict.fromkeys(record.git_commit for record in records if record.git_commit)),
        gates=_latest_gates(records),
        records=tuple(sorted(records, key=lambda record: (record.started_at, record.head.run))),
        errors=len(failed),
        error_reasons=MappingProxyType(dict(reasons.most_common())),
        retries=sum(record.retries for record in records),
        planned=max(record.head.runs for record in records),
        assertions=assertion_stats(records),
        triggers=trigger_stats(records),
        control=any(record.head.control for record in records),
    )


def summarize(records: Iterable[RunRecord], *, k: int = DEFAULT_K) -> list[ScenarioStats]:
    """One :class:`ScenarioStats` per ``procedure/scenario``, sorted by that label.
    pass^k and pass@k are ``None`` for a scenario with fewer than ``k`` runs."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    groups = sorted(_group(records).items())
    spent = spent_sessions(record for _, group in groups for record in group)
    found = [
        replace(_stats(procedure, scenario, group, k), budget_spent=shortfall(group, spent))
        if spent
        else _stats(procedure, scenario, group, k)
        for (procedure, scenario), group in groups
    ]
    # A failed positive control makes the other scenarios of its variant inconclusive.
    return apply_controls(found, check_gates)


def _exact(rate: float, limit: float) -> str:
    """``rate`` as a percentage, with a decimal when whole percents would show it equal
    to the ``limit`` it missed (79.5% is not 80%)."""
    shown = f"{rate:.0%}"
    return f"{rate:.1%}" if shown == f"{limit:.0%}" else shown


def required_runs(stats: ScenarioStats) -> int:
    """The valid runs a gate needs: ``min_runs`` when written, else
    :data:`MIN_VALID_RUNS`, or fewer when the scenario plans fewer runs."""
    gates = stats.gates
    if gates is not None and gates.min_runs is not None:
        return gates.min_runs
    return max(1, min(MIN_VALID_RUNS, stats.planned or MIN_VALID_RUNS))


def early_verdict(stats: ScenarioStats) -> bool | None:
    """With ``stop_early``: the sequential test's verdict over the valid runs
    (``True`` passed, ``False`` failed), ``None`` while it is unsettled or off."""
    sprt = stats.gates.sprt if stats.gates is not None else None
    if sprt is None:
        return None
    return sprt.decide(stats.successes, stats.failures)


def settled_early(
    min_success_rate: float | None, successes: int, failures: int, *, stop_early: bool
) -> bool | None:
    """Early stopping's verdict for a scenario from its valid runs so far: ``True``
    (its ``success_rate`` gate passes whatever the remaining runs do), ``False`` (it
    fails), ``None`` (unsettled, or a gate that does not stop early: ``stop_early`` off,
    or a minimum of 0 or 1, which no sequential test decides before the end)."""
    if min_success_rate is None or not stop_early or not 0 < min_success_rate < 1:
        return None
    return Sprt(min_success_rate).decide(successes, failures)


def inconclusive(stats: ScenarioStats) -> str | None:
    """``inconclusive: 4 of 10 runs errored …`` when more of the scenario's runs were
    infrastructure errors (a crashed worker's runs among them) than its gates allow."""
    gates = stats.gates
    if gates is None or not stats.runs or stats.errors / stats.runs <= gates.error_bound:
        return None
    why = ", ".join(f"{reason} {count}" for reason, count in stats.error_reasons.items())
    return (
        f"inconclusive: {stats.errors} of {stats.runs} runs errored"
        + (f" ({why})" if why else "")
        + f", more than max_error_rate {gates.error_bound:.0%} allows"
    )


def gate_inconclusive(stats: ScenarioStats) -> str | None:
    """Why a scenario's gates cannot be judged and are no failure either: a session's
    budget left runs unmade (``inconclusive: budget spent …``), unless early stopping
    settled them first."""
    if stats.gates is None or stats.budget_spent is None or early_verdict(stats) is not None:
        return None
    return stats.budget_spent


def check_gates(stats: ScenarioStats) -> list[str]:
    """Every aggregate expectation ``stats`` misses, as a sentence. A gate that cannot
    be judged (a positive control of the session failed, too many infrastructure
    errors, too few valid runs, a cost limit when no run reported a cost) is missed,
    not passed: a CI gate must never pass for want of data."""
    gates = stats.gates
    if gates is None:
        return []
    if stats.blocked_by:
        return [f"inconclusive: {harness_blind(stats)}"]
    errored = inconclusive(stats)
    if errored is not None:
        return [errored]
    if gate_inconclusive(stats) is not None:
        return []  # what the budget left unmade is inconclusive, never a failure
    problems = []
    settled = early_verdict(stats)
    sprt = gates.sprt
    needed = required_runs(stats)
    if settled is None and stats.valid_runs < needed:
        errors = f", {stats.error_text()} infrastructure error(s)" if stats.errors else ""
        return [
            f"only {stats.valid_runs} valid run(s) of {stats.runs}{errors}: the aggregate "
            f"expectations need at least {needed}"
        ]
    if settled is not None and sprt is not None:
        if not settled:
            low, high = stats.interval
            problems.append(
                f"success rate {stats.rate:.0%} ({stats.successes}/{stats.valid_runs}, 95% CI "
                f"{low:.0%}–{high:.0%}) is below the expected minimum "
                f"{gates.min_success_rate:.0%}, settled early ({sprt.describe()})"
            )
    elif gates.min_success_rate is not None and stats.rate < gates.min_success_rate:
        low, high = stats.interval
        problems.append(
            f"success rate {_exact(stats.rate, gates.min_success_rate)} "
            f"({stats.successes}/{stats.valid_runs}, 95% CI {low:.0%}–{high:.0%}) is below the "
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
