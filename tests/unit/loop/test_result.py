"""What a loop result carries (loop/result.py): permission denials, cost, tokens and tool calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.backends.replay import ReplayBackend, ReplayStep

if TYPE_CHECKING:
    from pathlib import Path
from .helpers import _run


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
    assert "Run it unattended: the flags each agent needs are in `ooda help agents`" in warning
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
