"""The failure report (scenario/report.py): every value is redacted before it is laid
out in the table, so a secret sharing its line with the table's columns is still found."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.backends import ToolCall
from pytest_ooda.backends.replay import ReplayStep
from pytest_ooda.redact import Redactor
from pytest_ooda.scenario import failure_text, load_scenario_text
from tests.unit.test_redact import PLANTED

from .helpers import _replay_result

if TYPE_CHECKING:
    from pathlib import Path


def test_each_value_is_redacted_before_the_table_is_laid_out(tmp_path: Path) -> None:
    redactor = Redactor({})
    scenario = load_scenario_text("procedure: build\nexpect: {status: success}\n")
    leaked: list[str] = []
    missed_late: list[str] = []
    for kind, carrier, secret in PLANTED:
        # The carrier is the iteration's output (its first line shares the table's line
        # with the iteration's columns) and a failed tool call's input.
        step = ReplayStep(
            output=f"{carrier}\n",
            tool_calls=(ToolCall("Bash", carrier.splitlines()[0], ok=False, error=carrier),),
            tools_reported=True,
        )
        result = _replay_result(tmp_path, step)
        problems = ["expected status 'success', got 'max-iters'"]
        report = failure_text(
            scenario, result, problems, root=tmp_path, mode="live", redact=redactor
        )
        assert "iter  signal   outcome  exit  output (tail)" in report
        if secret in report:
            leaked.append(kind)
        late = redactor(failure_text(scenario, result, problems, root=tmp_path, mode="live"))
        if secret in late:
            missed_late.append(kind)
    assert leaked == []
    # Redacting the laid-out report instead misses assignments that share their line
    # with the table's columns (what issue 28 found).
    assert "dotenv exported token" in missed_late
