"""ini ``ooda_scenario_dir``: where scenario files are looked up."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

SCENARIO = (
    "procedure: greet\nexpect: {status: success}\n"
    "iterations:\n  - output: '<promise>SUCCESS</promise>'\n"
)


def test_default_is_scenarios_next_to_the_config(project: Project) -> None:
    project.scenario("near", SCENARIO)
    project.write("qa/greet/far.yml", SCENARIO)
    result = project.run("--collect-only", "-q")
    assert "scenario[near]" in result.stdout.str()
    assert "scenario[far]" not in result.stdout.str()


def test_ini_moves_the_root(project: Project) -> None:
    project.scenario("near", SCENARIO)
    project.write("qa/greet/far.yml", SCENARIO)
    project.write("pytest.ini", "[pytest]\nooda_scenario_dir = qa\n")
    result = project.run("-k", "scenario")
    result.assert_outcomes(passed=1, deselected=7)
    result.stdout.fnmatch_lines(["*ooda: 1 procedure, 1 scenario in 1 config file*"])
    assert "near" not in project.run("--collect-only", "-q").stdout.str()


def test_missing_directory_is_a_usage_error(project: Project) -> None:
    project.write("pytest.ini", "[pytest]\nooda_scenario_dir = qa\n")
    result = project.run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini option ooda_scenario_dir: *not found: */qa"])
    project.write("qa", "a file, not a directory\n")
    result = project.run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini option ooda_scenario_dir: not a directory: */qa"])
