"""A session's budget: no run starts once the next, at the mean cost of those finished,
would pass the cap; the spend is shared through one file, appended a line a run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.results import Budget, Spend, Spent

if TYPE_CHECKING:
    from pathlib import Path


def test_the_first_run_always_starts_and_none_once_the_next_would_pass_the_cap() -> None:
    budget = Budget(usd=0.05)
    assert budget.refusal(Spent()) is None
    spent = Spent()
    started = 0
    while budget.refusal(spent) is None:
        spent = spent.plus(0.01, 100)
        started += 1
    assert started == 5
    assert spent.cost <= 0.05 + 1e-12
    refusal = budget.refusal(spent)
    assert refusal is not None
    assert refusal.startswith("budget spent: $0.0500 of $0.05 after 5 run")


def test_a_token_cap_and_runs_that_report_no_cost() -> None:
    budget = Budget(tokens=1000)
    spent = Spent().plus(None, 400).plus(None, 400)
    assert budget.refusal(spent) is not None
    assert "800 of 1,000 tokens" in str(budget.refusal(spent))
    dollars = Budget(usd=1.0)
    assert dollars.refusal(spent) is None
    assert "cannot be held" in str(dollars.unheld(spent))
    assert dollars.unheld(Spent().plus(0.1, 1)) is None
    assert not Budget()
    assert Budget(usd=1.0).describe() == "$1.00"
    assert Budget(usd=2, tokens=5000).describe() == "$2.00 and 5,000 tokens"


def test_the_spend_file_adds_up_whole_lines(tmp_path: Path) -> None:
    spend = Spend(tmp_path / "session" / "budget.spend")
    assert spend.total() == Spent()
    spend.add(0.25, 1000)
    spend.add(None, 500)
    with open(spend.path, "a", encoding="ascii") as handle:
        handle.write("0.5 20")  # a line still being written
    assert spend.total() == Spent(cost=0.25, tokens=1500, runs=2, unpriced=1)


def test_the_budget_reads_back_from_json() -> None:
    budget = Budget(usd=2.5, tokens=10)
    assert Budget.from_json(budget.to_json()) == budget
    assert Budget.from_json({"usd": True, "tokens": "x"}) == Budget()
    assert Budget.from_json(None) == Budget()
