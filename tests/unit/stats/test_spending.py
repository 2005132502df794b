"""What a session's budget left unmade: its scenarios' gates and comparisons are
*inconclusive: budget spent*, never failed or regressed; a session that ran all its
runs, or stopped with money left, is judged as usual."""

from __future__ import annotations

import json
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from sample_records import sample

from pytest_ooda.report.pages import cell_verdict, session_verdict
from pytest_ooda.report.render_markdown import report_markdown
from pytest_ooda.report.render_text import compare_rows, gate_lines
from pytest_ooda.results import BUDGET_SPENT, Budget, SessionStamp, decode_record
from pytest_ooda.stats import check_gates, compare, gate_inconclusive, summarize
from pytest_ooda.stats.spending import shortfall, spent_sessions

if TYPE_CHECKING:
    from pytest_ooda.results import RunRecord

GATE = {"success_rate": {"min": 0.9}}


def budgeted(
    successes: int, made: int, planned: int, budget: Budget, session: str = "s1"
) -> list[RunRecord]:
    """``made`` of a scenario's ``planned`` runs, each costing $0.10 and 1,000 tokens,
    in a session with ``budget``."""
    stamp = SessionStamp(session, session, budget=MappingProxyType(budget.to_json()))
    return [
        replace(item, head=replace(item.head, stamp=stamp, runs=planned))
        for item in sample(successes, made, cost=0.10, tokens=1000, gates=GATE)
    ]


def test_a_spent_budget_makes_a_missed_gate_inconclusive_not_failed() -> None:
    records = budgeted(2, 3, 20, Budget(usd=0.35))
    # The caps travel in each record's line and read back.
    records = [decode_record(json.loads(item.to_line())) for item in records]
    assert records[0].head.stamp is not None
    assert dict(records[0].head.stamp.budget or {}) == {"usd": 0.35, "tokens": None}
    assert list(spent_sessions(records)) == ["s1"]
    [stats] = summarize(records)
    assert stats.budget_spent is not None
    assert stats.budget_spent.startswith(f"{BUDGET_SPENT}: 3 of 20 run(s) made (budget spent: $")
    assert gate_inconclusive(stats) == stats.budget_spent
    assert check_gates(stats) == []
    assert cell_verdict(stats) == "inconclusive"
    assert session_verdict([stats]) == (
        "inconclusive",
        "1 of 1 gate(s) inconclusive: budget spent",
    )
    lines, failed = gate_lines([stats])
    assert failed == 0
    assert lines == [f"inconclusive build/happy: {stats.budget_spent}"]
    assert ":grey_question: build/happy: inconclusive: budget spent" in report_markdown(
        [stats], k=3, title="t"
    )


def test_money_left_or_every_run_made_is_judged_as_usual() -> None:
    # Stopped (interrupted) with money left: the budget did not leave the runs out.
    [left] = summarize(budgeted(2, 3, 20, Budget(usd=100.0)))
    assert left.budget_spent is None
    assert check_gates(left)
    assert cell_verdict(left) == "failed"
    # Spent, but every planned run was made: nothing was left unmeasured.
    [made] = summarize(budgeted(2, 3, 3, Budget(usd=0.25)))
    assert made.budget_spent is None
    assert cell_verdict(made) == "failed"
    # A token cap is a budget too.
    assert list(spent_sessions(budgeted(2, 3, 20, Budget(tokens=3500)))) == ["s1"]
    # No budget at all: nothing is spent.
    assert spent_sessions(sample(2, 3, cost=5.0, session="x")) == {}


def test_shortfall_names_only_the_sessions_that_were_spent() -> None:
    records = budgeted(1, 2, 10, Budget(usd=0.15), session="a")
    spent = spent_sessions(records)
    assert shortfall(records, spent) is not None
    assert shortfall(records, {}) is None
    other = budgeted(1, 2, 10, Budget(usd=0.15), session="b")
    assert shortfall(other, spent) is None


def test_a_comparison_short_of_runs_for_the_budget_is_inconclusive_budget_spent() -> None:
    base = sample(18, 20, cost=0.10, gates=GATE)
    new = budgeted(1, 2, 20, Budget(usd=0.15), session="n")
    [item] = compare(base, new).scenarios
    assert item.verdict == "inconclusive"
    assert item.verdict_text == BUDGET_SPENT
    assert item.budget_spent is not None
    [row] = compare_rows(compare(base, new))
    assert row[-1] == BUDGET_SPENT
    # A clear regression stays one: the budget only words what could not be told.
    worse = budgeted(2, 20, 40, Budget(usd=2.05), session="w")
    [clear] = compare(base, worse).scenarios
    assert clear.verdict == "regressed"
    assert clear.verdict_text == "regressed"


def test_a_scenario_a_spent_side_never_reached_is_inconclusive_not_base_only() -> None:
    base = sample(18, 20, cost=0.10, gates=GATE) + sample(20, 20, scenario="later", cost=0.10)
    # The new side's budget ran out on the first scenario: the second never ran there.
    new = budgeted(1, 2, 20, Budget(usd=0.15), session="n")
    first, later = compare(base, new).scenarios
    assert first.verdict == "inconclusive"
    assert (later.label, later.verdict, later.new) == ("build/later", "inconclusive", None)
    assert later.verdict_text == BUDGET_SPENT
    assert later.budget_spent is not None
    assert later.budget_spent.startswith(
        f"{BUDGET_SPENT}: no run of it on the new side (budget spent: $0.2000 of $0.15"
    )
    # With money left, a scenario one side lacks is only that.
    [_, lacking] = compare(base, budgeted(1, 2, 20, Budget(usd=100.0), session="m")).scenarios
    assert lacking.verdict == "base-only"
    assert lacking.budget_spent is None
