"""``--ooda-repeat`` / ``ooda_repeat`` / a scenario's ``repeat:``: each run its own item
in its own fresh workspace; recordings are made by run 1 only."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest
import yaml

if TYPE_CHECKING:
    from ooda_project import Project

# Fails when the workspace already holds the file an earlier run would have left.
FRESH_AGENT = """\
import os, sys
from pathlib import Path
sys.stdin.read()
here = Path(__file__).parent
with open(here / "workspaces.log", "a") as log:
    log.write(os.getcwd() + "\\n")
if Path("LEFTOVER.md").exists():
    print("stale workspace")
    sys.exit(3)
Path("LEFTOVER.md").write_text("left by a run")
print("done <promise>SUCCESS</promise>")
"""
SCENARIO = "procedure: greet\nmax_iterations: 2\nexpect: {status: success}\niterations: []\n"


@pytest.fixture
def agent(project: Project) -> str:
    script = project.write("fresh-ai/agent.py", FRESH_AGENT)
    return f"{__import__('sys').executable} {script}"


def live(project: Project, agent: str, *args: str) -> pytest.RunResult:
    return project.run("-m", "live", "--ooda-ai-cmd", agent, *args)


def test_each_run_is_its_own_item_in_a_fresh_workspace(project: Project, agent: str) -> None:
    project.scenario("s", SCENARIO)
    result = live(project, agent, "--ooda-repeat", "3", "-v")
    result.assert_outcomes(passed=3, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "*ooda-config.yml::greet::live[[]s#1[]] PASSED*",
            "*ooda-config.yml::greet::live[[]s#2[]] PASSED*",
            "*ooda-config.yml::greet::live[[]s#3[]] PASSED*",
        ]
    )
    workspaces = (project.path / "fresh-ai/workspaces.log").read_text().split()
    assert len(workspaces) == len(set(workspaces)) == 3
    # The scenario counts once; the progress lines say which run finished.
    result.stdout.fnmatch_lines(["ooda: 1 procedure, 1 scenario in 1 config file"])
    for run in (1, 2, 3):
        assert (
            f"ooda: greet/s {run}/3: success status=success iterations=1 time="
            in result.stdout.str()
        )


def test_the_scenario_key_sets_the_runs(project: Project, agent: str) -> None:
    project.scenario("s", SCENARIO.replace("iterations: []", "repeat: 2\niterations: []"))
    project.scenario("t", SCENARIO)
    result = live(project, agent, "-v")
    result.assert_outcomes(passed=3, deselected=8)
    result.stdout.fnmatch_lines(
        ["*live[[]s#1[]] PASSED*", "*live[[]s#2[]] PASSED*", "*live[[]t[]] PASSED*"],
        consecutive=False,
    )


def test_command_line_beats_the_scenario_which_beats_the_ini(project: Project, agent: str) -> None:
    project.write("pytest.ini", "[pytest]\nooda_repeat = 4\n")
    project.scenario("s", SCENARIO.replace("iterations: []", "repeat: 2\niterations: []"))
    project.scenario("t", SCENARIO)
    # ini 4 for t (no repeat: of its own), the scenario's 2 for s
    live(project, agent).assert_outcomes(passed=6, deselected=8)
    # the command line for both
    live(project, agent, "--ooda-repeat", "1").assert_outcomes(passed=2, deselected=8)


def test_without_live_selected_a_repeated_scenario_is_one_deselected_item(
    project: Project,
) -> None:
    project.scenario(
        "s", "procedure: greet\nrepeat: 5\niterations:\n  - output: <promise>SUCCESS</promise>\n"
    )
    result = project.run("--ooda-repeat", "5", "--collect-only", "-q")
    assert "greet::live[s]" not in result.stdout.str()
    result = project.run("-m", "live", "--ooda-repeat", "5", "--collect-only", "-q")
    assert re.findall(r"live\[s#\d\]", result.stdout.str()) == [f"live[s#{i}]" for i in range(1, 6)]


@pytest.mark.parametrize("value", ["0", "many", "-2", "10001"])
def test_bad_repeat_is_a_usage_error(project: Project, value: str) -> None:
    result = project.run(f"--ooda-repeat={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--ooda-repeat: expected a number of runs from 1 to 10000, got '{value}'*"]
    )


def test_bad_repeat_in_ini_names_the_key(project: Project) -> None:
    project.write("pytest.ini", "[pytest]\nooda_repeat = twice\n")
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option ooda_repeat: expected a number of runs from 1 to 10000, got 'twice'*"]
    )


def test_a_bad_repeat_key_fails_its_item_at_the_line(project: Project, agent: str) -> None:
    project.scenario("s", SCENARIO.replace("iterations: []", "repeat: 0\niterations: []"))
    result = live(project, agent)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        ["scenarios/greet/s.yml:4:9: repeat: expected an integer >= 1, got 0"]
    )


def test_only_run_1_of_a_repeated_scenario_is_recorded(project: Project, agent: str) -> None:
    path = project.scenario("s", SCENARIO.replace("iterations: []", "repeat: 3\niterations: []"))
    result = live(project, agent, "--ooda-record-mode=all", "-n", "2")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["recorded: greet/s -> scenarios/greet/s.yml"])
    assert result.stdout.str().count("recorded -> ") == 1
    data = yaml.safe_load(path.read_text())
    # The recording keeps the scenario's own keys.
    assert data["repeat"] == 3
    assert len(data["iterations"]) == 1
    # In parallel, too, every run had a fresh workspace of its own.
    workspaces = (project.path / "fresh-ai/workspaces.log").read_text().split()
    assert len(set(workspaces)) == 3
    records = [
        json.loads(line)
        for file in (project.path / ".ooda/results").glob("*.jsonl")
        for line in file.read_text().splitlines()
    ]
    assert sorted(record["run"] for record in records) == [1, 2, 3]
