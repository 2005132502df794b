"""The runs a comparison needs per arm, made up for infrastructure errors, and their cost."""

from __future__ import annotations

from sample_records import record

from pytest_ooda.stats import plan_runs, runs_needed, summarize


def test_runs_per_arm_and_cost_from_past_runs() -> None:
    records = [record(k < 16, cost=0.05, tokens=2000, run=k + 1, runs=20) for k in range(20)]
    records += [record(False, outcome="error", error_reason="rate-limit: 429") for _ in range(5)]
    (stats,) = summarize(records)
    plan = plan_runs(stats, detect=0.1, power=0.8)
    assert plan.base_rate == 0.8
    assert (plan.valid_runs, plan.errors) == (20, 5)
    assert plan.valid_per_arm == runs_needed(0.8, 0.1, power=0.8)
    # A fifth of the runs were errors: start a quarter more.
    assert plan.per_arm == -(-plan.valid_per_arm * 25 // 20)
    assert plan.total_cost == 2 * plan.per_arm * plan.cost_per_run
    assert plan.cost_per_run == 0.05
    assert plan.tokens_per_run == 2000


def test_no_cost_reported_gives_no_total() -> None:
    (stats,) = summarize([record(True, run=k + 1) for k in range(4)])
    plan = plan_runs(stats, detect=0.2)
    assert plan.cost_per_run is None
    assert plan.total_cost is None
    assert plan.per_arm == plan.valid_per_arm
