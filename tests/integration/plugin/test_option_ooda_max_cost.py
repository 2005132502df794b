"""``--ooda-max-cost`` / ``--ooda-max-tokens`` (and their ini keys) hold live runs to a
budget together with the scenario's; ``--ooda-ai-output`` says how the command's
output is read. A fake agent prints Claude Code's stream-json, $0.05 per iteration."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project


def _stream(text: str) -> str:
    events = [
        {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}},
        {"type": "result", "is_error": False, "result": text, "num_turns": 1,
         "total_cost_usd": 0.05, "usage": {"input_tokens": 900, "output_tokens": 100}},
    ]  # fmt: skip
    return "\n".join(json.dumps(event) for event in events)


PLAN = json.dumps([{"print": _stream("working")}])


def _scenario(project: Project, name: str, extra: str = "", iterations: int = 2) -> None:
    project.scenario(
        name,
        f"procedure: greet\nmax_iterations: 5\n{extra}"
        f"expect: {{status: aborted, iterations: {iterations}}}\niterations: []\n",
    )


def test_the_option_budget_stops_a_live_run(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    _scenario(project, "s")
    result = project.run(
        "-m", "live", "--ooda-ai-cmd", ai_cmd, "--ooda-ai-output", "claude-stream-json",
        "--ooda-max-cost", "0.08", "--ooda-record-mode", "once",
    )  # fmt: skip
    result.assert_outcomes(passed=1, deselected=7)
    result.stdout.fnmatch_lines(["ooda: greet/s: * status=aborted iterations=2 *cost=$0.1000*"])
    recorded = (project.path / "scenarios/greet/s.yml").read_text()
    assert "reason: 'budget reached: the run cost $0.1000, max_cost is $0.08'" in recorded
    assert "max_cost: 0.08" in recorded  # kept: the replay stops at the same iteration
    project.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)


def test_the_scenario_budget_applies_with_the_ini_one(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    _scenario(project, "tight", extra="max_cost: 0.04\n", iterations=1)
    project.write(
        "pytest.ini",
        f"""\
        [pytest]
        ooda_ai_cmd = {ai_cmd}
        ooda_ai_output = claude-stream-json
        ooda_max_tokens = 1500
        ooda_max_cost = 7
        """,
    )
    result = project.run("-m", "live")
    result.assert_outcomes(passed=1, deselected=7)
    _scenario(project, "tokens", iterations=2)
    (project.path / "scenarios/greet/tight.yml").unlink()
    project.run("-m", "live").assert_outcomes(passed=1, deselected=7)


def test_without_a_structured_format_the_budget_is_unenforceable(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    project.scenario(
        "plain",
        "procedure: greet\nmax_iterations: 2\nexpect: {status: max-iters}\niterations: []\n",
    )
    # Read as text, the stream reports no cost: the run goes on, and the plugin says so.
    result = project.run("-m", "live", "--ooda-ai-cmd", ai_cmd, "--ooda-max-cost", "0.01")
    result.assert_outcomes(passed=1, deselected=7, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*AgentWarning: scenario greet/plain: max_cost cannot be enforced: the AI backend "
            "reports no cost (a plain-text command reports none; read an agent CLI's JSON "
            "with ai_output, or price an ai_api)"
        ]
    )


def test_a_bad_ini_budget_names_the_key(project: Project) -> None:
    project.write("pytest.ini", "[pytest]\nooda_max_tokens = lots\n")
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option ooda_max_tokens: expected an integer >= 1, got 'lots'*"]
    )
