"""Per-scenario statistics against scipy / numpy / brute force, and the aggregate gates."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from sample_records import changed, record, sample
from scipy import stats as scipy_stats

from pytest_ooda.results import UNMET
from pytest_ooda.stats import (
    Gates,
    check_gates,
    drop_duplicates,
    early_verdict,
    summarize,
    wilson_interval,
)
from pytest_ooda.stats.aggregate import ended_because

if TYPE_CHECKING:
    from pytest_ooda.results import RunRecord


def test_statistics_match_independent_computations() -> None:
    rng = random.Random(3)
    outcomes = [rng.random() < 0.6 for _ in range(25)]
    iterations = [rng.randint(1, 5) for _ in outcomes]
    elapsed = [rng.uniform(1, 90) for _ in outcomes]
    costs = [rng.uniform(0.01, 0.2) for _ in outcomes]
    records = [
        record(ok, iterations=n, elapsed=t, cost=c, tokens=1000 + n, run=i + 1, runs=25)
        for i, (ok, n, t, c) in enumerate(zip(outcomes, iterations, elapsed, costs, strict=True))
    ]
    [stats] = summarize(records, k=4)
    successes = sum(outcomes)
    assert (stats.runs, stats.successes) == (25, successes)
    assert stats.rate == pytest.approx(successes / 25)
    wilson = scipy_stats.binomtest(successes, 25).proportion_ci(0.95, method="wilson")
    assert stats.interval == pytest.approx((wilson.low, wilson.high), abs=1e-12)
    subsets = list(itertools.combinations(outcomes, 4))
    assert stats.pass_hat_k == pytest.approx(sum(map(all, subsets)) / len(subsets))
    assert stats.pass_at_k == pytest.approx(sum(map(any, subsets)) / len(subsets))
    assert stats.iterations_mean == pytest.approx(np.mean(iterations))
    assert stats.iterations_median == pytest.approx(np.median(iterations))
    assert stats.iterations_max == max(iterations)
    assert dict(stats.iteration_counts) == {n: iterations.count(n) for n in sorted(set(iterations))}
    assert stats.elapsed_mean == pytest.approx(np.mean(elapsed))
    assert stats.elapsed_median == pytest.approx(np.median(elapsed))
    assert stats.elapsed_total == pytest.approx(sum(elapsed))
    assert stats.cost_mean == pytest.approx(np.mean(costs))
    assert stats.cost_total == pytest.approx(sum(costs))
    assert stats.tokens_mean == pytest.approx(np.mean([1000 + n for n in iterations]))
    assert dict(stats.statuses) == {"success": successes, "max-iters": 25 - successes}


def test_statuses_keep_vocabulary_order_and_costs_count_only_reporting_runs() -> None:
    records = [
        record(False, status="aborted"),
        record(True, cost=0.5),
        record(False, status="interrupted"),
        record(True),
    ]
    [stats] = summarize(records)
    assert list(stats.statuses.items()) == [("success", 2), ("aborted", 1), ("interrupted", 1)]
    assert (stats.cost_runs, stats.cost_mean) == (1, 0.5)
    assert (stats.token_runs, stats.tokens_mean) == (1, 0)


def test_outcomes_say_why_where_the_loop_status_adds_to_them() -> None:
    gives_up = {"status": "aborted"}
    records = [
        record(True),
        # A scenario that expects its procedure to give up: the success names it.
        changed(record(True, status="aborted"), expect=gives_up),
        record(False),  # ran out of iterations
        record(False),
        replace(record(False, status="success"), problems=("file a.txt: missing",)),
        # Ended as expected, missed another check; ended `success` against `aborted`.
        changed(record(False, status="aborted"), expect=gives_up, problems=("x",)),
        changed(record(False, status="success"), expect=gives_up, problems=("status",)),
        changed(record(False, status="interrupted"), expect=gives_up, problems=("status",)),
        record(False, outcome="error", error_reason="overloaded: 529", status="aborted"),
    ]
    assert [ended_because(item) for item in records] == [
        None,
        "aborted",
        "max-iters",
        "max-iters",
        UNMET,
        UNMET,
        UNMET,
        "interrupted",
        None,
    ]
    [stats] = summarize(records)
    assert stats.outcome_parts() == [
        ("success", 2, "aborted 1"),
        ("failure", 6, "expectations 3, max-iters 2, interrupted 1"),
        ("error", 1, ""),
    ]
    assert stats.outcome_text() == (
        "success 2 (aborted 1), failure 6 (expectations 3, max-iters 2, interrupted 1), error 1"
    )
    [plain] = summarize(sample(3, 3))
    assert plain.outcome_text() == "success 3"


def test_fewer_runs_than_k_leave_pass_k_unknown() -> None:
    [stats] = summarize(sample(1, 2), k=3)
    assert (stats.pass_hat_k, stats.pass_at_k) == (None, None)
    with pytest.raises(ValueError, match="k must be >= 1"):
        summarize(sample(1, 2), k=0)


def test_scenarios_are_grouped_and_sorted() -> None:
    records = [
        record(True, procedure="b", scenario="x"),
        record(True, procedure="a", scenario="y"),
        record(False, procedure="a", scenario="y"),
    ]
    assert [(s.label, s.runs) for s in summarize(records)] == [("a/y", 2), ("b/x", 1)]


def test_prompt_versions_and_commits_are_listed_once_each() -> None:
    records = [record(True, prompt="1" * 64), record(True, prompt="2" * 64), record(True)]
    [stats] = summarize(records)
    assert stats.prompt_versions == ("1" * 64, "2" * 64, "p" * 64)


GATES = {"success_rate": {"min": 0.8}, "max_mean_iterations": 2, "max_mean_cost": 0.1}


def test_gates_met() -> None:
    [stats] = summarize(sample(8, 10, gates=GATES, cost=0.05, iterations=2))
    assert stats.gates == Gates(0.8, 2.0, 0.1)
    assert check_gates(stats) == []


def test_every_missed_gate_is_a_sentence() -> None:
    [stats] = summarize(sample(7, 10, gates=GATES, cost=0.25, iterations=3))
    assert check_gates(stats) == [
        "success rate 70% (7/10, 95% CI 40%–89%) is below the expected minimum 80%",
        "mean iterations 3.00 is above the expected maximum 2",
        "mean cost $0.2500 is above the expected maximum $0.1",
    ]


def test_a_cost_gate_without_costs_fails() -> None:
    [stats] = summarize(sample(10, 10, gates={"max_mean_cost": 1}))
    [problem] = check_gates(stats)
    assert "no run reported a cost" in problem


def test_the_latest_runs_gates_apply() -> None:
    old = sample(5, 10, gates={"success_rate": {"min": 0.9}}, finished_at="2025-01-01T00:00:00Z")
    new = sample(5, 10, gates={"success_rate": {"min": 0.4}}, finished_at="2025-02-01T00:00:00Z")
    [stats] = summarize(old + new)
    assert stats.gates == Gates(min_success_rate=0.4)
    assert check_gates(stats) == []


def test_no_gates_no_verdict() -> None:
    [stats] = summarize(sample(0, 3))
    assert stats.gates is None
    assert check_gates(stats) == []
    assert Gates.from_yaml({}) is None


def _errors(count: int, **options: Any) -> list[RunRecord]:
    return [
        record(
            False, outcome="error", error_reason="overloaded: HTTP 529", status="aborted", **options
        )
        for _ in range(count)
    ]


def test_errors_are_left_out_of_the_rate_and_its_interval() -> None:
    [stats] = summarize([*sample(7, 10), *_errors(5)])
    assert (stats.runs, stats.errors, stats.valid_runs, stats.successes) == (15, 5, 10, 7)
    assert stats.rate == pytest.approx(0.7)
    assert stats.interval == wilson_interval(7, 10)
    assert stats.error_text() == "5 (overloaded 5)"
    assert stats.pass_hat_k == pytest.approx(35 / 120)


def test_a_gate_needs_enough_valid_runs() -> None:
    # Errors allowed (max_error_rate: 1), the valid runs are still too few.
    gates = {"success_rate": {"min": 0.5}, "max_error_rate": 1}
    [stats] = summarize([*sample(2, 2, gates=gates), *_errors(8, gates=gates, runs=10)])
    assert check_gates(stats) == [
        "only 2 valid run(s) of 10, 8 (overloaded 8) infrastructure error(s): the aggregate "
        "expectations need at least 5"
    ]
    fewer = {"success_rate": {"min": 0.5, "min_runs": 2}, "max_error_rate": 1}
    [stats] = summarize([*sample(2, 2, gates=fewer), *_errors(8, gates=fewer, runs=10)])
    assert check_gates(stats) == []
    # A scenario planned with 3 runs needs its 3.
    [stats] = summarize(sample(3, 3, gates=gates))
    assert check_gates(stats) == []


def test_more_errors_than_max_error_rate_make_the_gates_inconclusive() -> None:
    gates = {"success_rate": {"min": 0.8}}
    # 4 of 10 runs errored: the 6 left all succeeded, yet nothing is concluded.
    [stats] = summarize([*sample(6, 6, gates=gates), *_errors(4, gates=gates, runs=10)])
    assert check_gates(stats) == [
        "inconclusive: 4 of 10 runs errored (overloaded 4), more than max_error_rate 20% allows"
    ]
    # 2 of 10 is the default bound itself: judged as usual.
    [stats] = summarize([*sample(8, 8, gates=gates), *_errors(2, gates=gates, runs=10)])
    assert check_gates(stats) == []
    # Written beside success_rate, the bound moves; a settled early verdict does not
    # override it either.
    looser = {**gates, "max_error_rate": 0.5}
    [stats] = summarize([*sample(6, 6, gates=looser), *_errors(4, gates=looser, runs=10)])
    assert check_gates(stats) == []
    assert Gates.from_yaml(looser).describe() == "success rate >= 80%, errors <= 50% of runs"  # type: ignore[union-attr]
    early = {"success_rate": {"min": 0.8, "stop_early": True}}
    [stats] = summarize([*sample(17, 18, gates=early), *_errors(6, gates=early, runs=24)])
    assert early_verdict(stats) is True
    assert check_gates(stats)[0].startswith("inconclusive: 6 of 24 runs errored")
    # Without aggregate expectations there is no gate to be inconclusive.
    [stats] = summarize([*sample(1, 1), *_errors(4, runs=5)])
    assert check_gates(stats) == []


def test_a_settled_sequential_test_is_the_gates_verdict() -> None:
    gates = {"success_rate": {"min": 0.8, "stop_early": True}}
    # 17 of 18 settles "passed" for 70% against 90% though 94% is the rate anyway; 15 of
    # 18 (83%) is not settled and the plain comparison passes it.
    [stats] = summarize(sample(17, 18, gates=gates))
    assert early_verdict(stats) is True
    assert check_gates(stats) == []
    [stats] = summarize(sample(15, 18, gates=gates))
    assert early_verdict(stats) is None
    assert check_gates(stats) == []
    # Three failures in the first four settle "failed", below the usual minimum of runs.
    [stats] = summarize(sample(1, 4, gates=gates))
    assert early_verdict(stats) is False
    [problem] = check_gates(stats)
    assert problem.endswith("settled early (SPRT of 70% against 90%, error rates <= 0.05 each way)")


def test_a_run_resumed_again_replaces_the_error_it_names() -> None:

    first = [
        record(True, run=1, series="S"),
        record(False, run=2, outcome="error", series="S"),
    ]
    again = changed(record(True, run=2, series="S"), replaces=first[1].id)
    kept, dropped = drop_duplicates([*first, again])
    assert dropped == 1
    assert kept == [first[0], again]
    # Read without the session that ran it again, the error stands.
    assert drop_duplicates(first) == (first, 0)


def test_sessions_that_share_run_numbers_count_in_full() -> None:
    # Two sessions of one series and the same runs (as sessions started in one second
    # once were): nothing names another run, so nothing is dropped.
    one = [record(True, run=number, series="S", session="S") for number in (1, 2)]
    two = [record(False, run=number, series="S", session="S") for number in (1, 2)]
    kept, dropped = drop_duplicates([*one, *two])
    assert (len(kept), dropped) == (4, 0)


def test_runs_of_two_variants_are_two_runs() -> None:

    one = changed(record(True, run=1, series="S"), variant="claude")
    other = changed(record(True, run=1, series="S"), variant="codex")
    kept, dropped = drop_duplicates([one, other])
    assert (len(kept), dropped) == (2, 0)
