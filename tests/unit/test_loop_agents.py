"""The loop with what agent CLIs report: budgets stop a run after the iteration that
reaches them, permission denials are warned about, cost and tokens are summed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.backends.replay import ReplayBackend, ReplayStep
from pytest_ooda.config import Config, load_config
from pytest_ooda.loop import LoopEvent, LoopResult, LoopWarning, run_procedure
from pytest_ooda.loop.budget import Budget, tightest

if TYPE_CHECKING:
    from pathlib import Path


def _config(tmp_path: Path, extra: str = "") -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text(
        "procedures:\n  build:\n    act:\n      - content: go\n" + extra, encoding="utf-8"
    )
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)


def _steps(*usages: Usage | None, last: str = "working") -> ReplayBackend:
    return ReplayBackend(
        [ReplayStep(output=last if i == len(usages) - 1 else "working", usage=u)
         for i, u in enumerate(usages)]
    )  # fmt: skip


def _run(tmp_path: Path, backend: ReplayBackend, **options: Any) -> tuple[LoopResult, list[str]]:
    warnings: list[str] = []

    def on_event(event: LoopEvent) -> None:
        if isinstance(event, LoopWarning):
            warnings.append(event.message())

    result = run_procedure(
        options.pop("config", None) or _config(tmp_path),
        "build",
        backend=backend,
        workdir=tmp_path,
        on_event=on_event,
        handle_signals=False,
        **options,
    )
    return result, warnings


CENTS5 = Usage(1000, 100, 0.05)


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


def test_permission_denials_are_recorded_and_warned(tmp_path: Path) -> None:
    denied = (
        ToolCall("Write", "/w/a.py", ok=False, error="permission denied"),
        ToolCall("Bash", "pytest -q", ok=False, error="permission denied"),
    )
    backend = ReplayBackend(
        [ReplayStep(output="did it <promise>SUCCESS</promise>", permission_denials=denied)]
    )
    result, warnings = _run(tmp_path, backend)
    assert result.status == "success"
    assert result.records[0].permission_denials == denied
    assert result.permission_denials == denied
    (warning,) = warnings
    assert warning.startswith(
        "iteration 1: the agent was denied 2 tool calls: Write (/w/a.py), Bash (pytest -q); "
        "it could not do what it was asked."
    )
    assert "--permission-mode bypassPermissions" in warning
    assert "denied=2" in result.records[0].summary()


def test_many_denials_are_counted_not_listed() -> None:
    from pytest_ooda.loop import IterationRecord

    calls = tuple(ToolCall("Bash", f"cmd {i}") for i in range(7))
    record = IterationRecord(3, "p", "0" * 64, "", 0, None, "ok", 0.1, permission_denials=calls)
    warning = record.denial_warning()
    assert warning is not None
    assert "Bash (cmd 4) and 2 more;" in warning
    assert "cmd 5" not in warning


def test_cost_tokens_and_tool_calls_in_the_result(tmp_path: Path) -> None:
    calls = (ToolCall("Write", "a.py", ok=True), ToolCall("Bash", "pytest", ok=True))
    backend = ReplayBackend(
        [
            ReplayStep(output="a", usage=Usage(100, 10, 0.01, 50), tool_calls=calls[:1],
                       tools_reported=True, turns=2, model="m"),
            ReplayStep(output="<promise>SUCCESS</promise>", usage=Usage(200, 20, 0.02),
                       tool_calls=calls[1:], tools_reported=True),
        ]
    )  # fmt: skip
    result, _ = _run(tmp_path, backend)
    assert result.tool_calls == calls
    assert result.tools_reported
    assert result.usage == Usage(300, 30, pytest.approx(0.03), 50)
    assert result.summary().endswith(" tokens=380 cost=$0.0300")
    first = result.records[0]
    assert (first.turns, first.model, first.tools_reported) == (2, "m", True)
    assert first.summary().endswith("tokens=100in/10out/50cache cost=$0.0100 turns=2 tool_calls=1")


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
