"""Cost and token budgets (loop/budget.py): where a run stops, what cannot be measured, the
tightest budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends import Usage
from pytest_ooda.loop.budget import Budget, tightest

if TYPE_CHECKING:
    from pathlib import Path
from .helpers import CENTS5, _config, _run, _steps


def test_a_cost_budget_stops_the_run_after_the_iteration_that_reaches_it(tmp_path: Path) -> None:
    result, warnings = _run(tmp_path, _steps(CENTS5, CENTS5, CENTS5, CENTS5), max_cost=0.08)
    assert result.status == "aborted"
    assert result.iterations == 2
    assert result.error == "budget reached: the run cost $0.1000, max_cost is $0.08"
    assert result.cost == pytest.approx(0.10)
    assert warnings == ["Loop aborted: budget reached: the run cost $0.1000, max_cost is $0.08"]
    assert result.exit_code == 1


def test_a_token_budget_counts_every_kind_of_token(tmp_path: Path) -> None:
    cached = Usage(10, 10, None, cache_read_tokens=400, cache_creation_tokens=80)
    result, _ = _run(tmp_path, _steps(cached, cached, cached), max_tokens=1000)
    assert result.iterations == 2
    assert result.total_tokens == 1000
    assert result.error == ("budget reached: the run used 1000 tokens, max_tokens is 1000")


def test_success_in_the_crossing_iteration_is_success(tmp_path: Path) -> None:
    backend = _steps(CENTS5, CENTS5, last="<promise>SUCCESS</promise>")
    result, _ = _run(tmp_path, backend, max_cost=0.01)
    assert result.status == "aborted"
    assert result.iterations == 1
    backend = _steps(CENTS5, last="<promise>SUCCESS</promise>")
    result, _ = _run(tmp_path, backend, max_cost=0.01)
    assert result.status == "success"


def test_the_procedures_budget_applies_with_the_runs(tmp_path: Path) -> None:
    config = _config(tmp_path, "    max_cost: 0.12\n")
    result, _ = _run(tmp_path, _steps(*[CENTS5] * 5), config=config)
    assert result.iterations == 3
    result, _ = _run(tmp_path, _steps(*[CENTS5] * 5), config=config, max_cost=0.5)
    assert result.iterations == 3  # the tighter one still holds


def test_a_budget_the_backend_cannot_measure_is_said_once(tmp_path: Path) -> None:
    tokens_only = Usage(10, 10)
    result, warnings = _run(
        tmp_path,
        _steps(tokens_only, tokens_only, tokens_only),
        max_cost=1.0,
        max_tokens=10_000,
        max_iterations=3,
    )
    assert result.status == "max-iters"
    assert warnings == [
        "max_cost cannot be enforced: the AI backend reports no cost (a plain-text command "
        "reports none; read an agent CLI's JSON with ai_output, or price an ai_api)"
    ]
    _, warnings = _run(tmp_path, _steps(None, None), max_tokens=5, max_iterations=2)
    assert warnings == [
        "max_tokens cannot be enforced: the AI backend reports no usage (a plain-text "
        "command reports none; read an agent CLI's JSON with ai_output, or price an ai_api)"
    ]


def test_budget_values_are_checked_and_tightest_picks_the_smallest() -> None:
    with pytest.raises(ValueError, match="max_cost must be > 0"):
        Budget(max_cost=0)
    with pytest.raises(ValueError, match="max_tokens must be >= 1"):
        Budget(max_tokens=0)
    assert not Budget()
    assert Budget(0.5, 10).describe() == "max_cost=$0.5 max_tokens=10"
    assert Budget().describe() == "no budget"
    assert Budget(1.0).reached(None) is None
    assert tightest(None, 3, 2, None) == 2
    assert tightest(None, None) is None
