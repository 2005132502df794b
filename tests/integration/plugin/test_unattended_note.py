"""The note for an agent that runs unattended with no sandbox: said once per session,
by one process or by pytest-xdist's workers together, in pytest's warnings summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

SCENARIO = "procedure: greet\nexpect: {status: success}\niterations: []\nrepeat: 4\n"
PLAN = '[{"print": "<promise>SUCCESS</promise>"}]'
NOTE = "SandboxWarning: the agent runs unattended ("


def _unattended(project: Project) -> str:
    """Two scenarios of four runs each, by an agent with its permission checks off."""
    project.scenario("first", SCENARIO)
    project.scenario("second", SCENARIO)
    return project.fake_ai(PLAN) + " --dangerously-skip-permissions"


def _said(result: pytest.RunResult) -> int:
    return result.stdout.str().count(NOTE)


def test_said_once_by_one_process(project: Project) -> None:
    result = project.run("-m", "live", "--ooda-ai-cmd", _unattended(project))
    result.assert_outcomes(passed=8, deselected=8, warnings=1)
    assert _said(result) == 1
    result.stdout.fnmatch_lines(
        [
            "*= warnings summary =*",
            "ooda-config.yml::greet::live[[]first#1]",
            "  */scenarios/greet/first.yml:1: " + NOTE + "*with no sandbox*",
        ]
    )


def test_said_once_by_two_xdist_workers(project: Project) -> None:
    ai_cmd = _unattended(project)
    result = project.run("-p", "xdist", "-n", "2", "-v", "-m", "live", "--ooda-ai-cmd", ai_cmd)
    result.assert_outcomes(passed=8, warnings=1)
    # Both workers made runs, and each met the note; one of them said it.
    workers = {line.split()[0] for line in result.stdout.lines if line.startswith("[gw")}
    assert workers == {"[gw0]", "[gw1]"}
    assert _said(result) == 1
    # Once per session, not once ever: the next session says it again.
    again = project.run("-p", "xdist", "-n", "2", "-m", "live", "--ooda-ai-cmd", ai_cmd)
    again.assert_outcomes(passed=8, warnings=1)
    assert _said(again) == 1


def test_not_said_for_an_agent_that_asks_first(project: Project) -> None:
    project.scenario("first", SCENARIO)
    result = project.run(
        "-p", "xdist", "-n", "2", "-m", "live", "--ooda-ai-cmd", project.fake_ai(PLAN)
    )
    result.assert_outcomes(passed=4)
    assert _said(result) == 0
