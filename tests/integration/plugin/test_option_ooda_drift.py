"""``--ooda-drift``: a recorded prompt that no longer matches today's fails, warns or passes."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

PLAN = '[{"print": "Greeted.\\n<promise>SUCCESS</promise>"}]'


@pytest.fixture
def recorded(project: Project) -> Project:
    """A scenario recorded live (with prompt hashes), then a fragment edited."""
    ai_cmd = project.fake_ai(PLAN)
    project.scenario("rec", "procedure: greet\nexpect: {status: success}\niterations: []\n")
    project.run("-m", "live", "--ooda-ai-cmd", ai_cmd, "--ooda-record-mode=once").assert_outcomes(
        passed=1, deselected=7
    )
    project.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)
    project.write("prompts/observe.md", "Read the README twice.\nList the people present.\n")
    return project


def test_fail_is_the_default_and_shows_the_diff_and_fragment(recorded: Project) -> None:
    result = recorded.run("-k", "scenario")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenario greet/rec (scenarios/greet/rec.yml) replay: status=success, 1 iteration(s)",
            "*",
            "prompt of iteration 1 drifted from the recording (sha256 *",
            "  changed fragments: prompts/observe.md",
            "--- recorded prompt (rec.yml, iteration 1)",
            "+++ current prompt (iteration 1)",
            "*",
            "-Read the README.",
            "+Read the README twice.",
        ]
    )
    explicit = recorded.run("-k", "scenario", "--ooda-drift=fail")
    explicit.assert_outcomes(failed=1, deselected=7)


def test_warn_passes_with_a_warning(recorded: Project) -> None:
    result = recorded.run("-k", "scenario", "--ooda-drift=warn")
    result.assert_outcomes(passed=1, deselected=7, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "  */scenarios/greet/rec.yml:1: DriftWarning: scenario greet/rec: prompt of iteration"
            " 1 drifted*"
        ]
    )
    assert "pytest_ooda/" not in result.stdout.str()
    strict = recorded.run("-k", "scenario", "--ooda-drift=warn", "-W", "error::UserWarning")
    strict.assert_outcomes(failed=1, deselected=7)
    strict.stdout.fnmatch_lines(["DriftWarning (an error under -W / filterwarnings): *"])
    assert "pytest_ooda/" not in strict.stdout.str()


def test_ignore_passes_silently(recorded: Project) -> None:
    result = recorded.run("-k", "scenario", "--ooda-drift=ignore")
    result.assert_outcomes(passed=1, deselected=7)
    assert "drifted" not in result.stdout.str()


def test_ini_sets_the_mode_and_the_command_line_wins(recorded: Project) -> None:
    recorded.write("pytest.ini", "[pytest]\nooda_drift = ignore\n")
    recorded.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)
    recorded.run("-k", "scenario", "--ooda-drift=fail").assert_outcomes(failed=1, deselected=7)


def test_hand_written_scenarios_without_hashes_never_drift(project: Project) -> None:
    project.scenario(
        "hand",
        "procedure: greet\nexpect: {status: success}\n"
        "iterations:\n  - output: '<promise>SUCCESS</promise>'\n",
    )
    project.write("prompts/observe.md", "Something else entirely.\n")
    project.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)


def test_bad_drift_value_is_a_usage_error(project: Project) -> None:
    result = project.run("--ooda-drift=loud")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--ooda-drift: invalid choice: 'loud' (choose from *fail*warn*ignore*)"]
    )


def test_the_hint_re_records_only_the_drifted_scenario(recorded: Project) -> None:
    # Another recorded scenario that has not drifted must not be touched by the hint.
    other = recorded.scenario(
        "other",
        "procedure: greet\nexpect: {status: success}\n"
        "iterations: [{output: '<promise>SUCCESS</promise>'}]\n",
    )
    before = other.read_text()
    result = recorded.run("-k", "scenario")
    result.assert_outcomes(failed=1, passed=1, deselected=8)
    line = next(text for text in result.stdout.lines if "re-record only this scenario:" in text)
    command = line.split("re-record only this scenario: ", 1)[1]
    assert command == ("pytest -m live --ooda-record-mode=new 'ooda-config.yml::greet::live[rec]'")
    # Run as printed (with the agent): only rec is selected, re-recorded, and replays.
    args = shlex.split(command)[1:]
    rerun = recorded.run(*args, f"--ooda-ai-cmd={recorded.fake_ai(PLAN)}")
    rerun.assert_outcomes(passed=1)
    assert other.read_text() == before
    recorded.run("-k", "scenario").assert_outcomes(passed=2, deselected=8)
