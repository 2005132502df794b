"""``--ooda-record-failures``: under ``--ooda-record-mode=once`` (and ``new``) a failed
first run — an infrastructure ``error``, or a status other than ``expect.status`` — is
not written into a scenario, so it cannot poison it; the option records it anyway, and
``all`` records everything. A scenario that holds a recorded failed run says, on
replay, how to record it again."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
import yaml

if TYPE_CHECKING:
    from ooda_project import Project

EMPTY = "procedure: greet\nmax_iterations: 2\nretry: 0\nexpect: {status: success}\niterations: []\n"
# Killed before a word (a signal the harness sees): the infrastructure's fault
# (agent-died), an ``error`` run.
DIES = "import os, signal, sys\nsys.stdin.read()\nos.kill(os.getpid(), signal.SIGKILL)\n"
# Answers, but never says it is done: the loop runs out (max-iters), a ``failure``.
STALLS = "import sys\nsys.stdin.read()\nprint('still looking')\n"
SUCCEEDS = "import sys\nsys.stdin.read()\nprint('Greeted.\\n<promise>SUCCESS</promise>')\n"


def _agent(project: Project, source: str) -> str:
    script = project.write("agent/agent.py", source)
    return f"{sys.executable} {script}"


def _live(project: Project, agent: str, *args: str) -> pytest.RunResult:
    return project.run("-m", "live", "--ooda-ai-cmd", agent, "-W", "always", *args)


@pytest.mark.parametrize(
    ("agent", "why"),
    [
        (DIES, "the run is an infrastructure error (it ended aborted)"),
        (STALLS, "the run ended max-iters, not success as expected"),
    ],
)
def test_once_does_not_record_a_failed_first_run(project: Project, agent: str, why: str) -> None:
    path = project.scenario("first", EMPTY)
    result = _live(project, _agent(project, agent), "--ooda-record-mode=once")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert path.read_text() == EMPTY
    result.stdout.fnmatch_lines(
        [
            f"*RecordingWarning: scenario greet/first: not recorded: {why}: a recording of it "
            "would replay the failure (--ooda-record-failures records failed runs, "
            "--ooda-record-mode=all every run)",
        ]
    )
    # Still empty, so the next run with an agent that works is recorded.
    done = _live(project, _agent(project, SUCCEEDS), "--ooda-record-mode=once")
    done.assert_outcomes(passed=1, deselected=7)
    assert yaml.safe_load(path.read_text())["recorded"]["status"] == "success"


def test_the_option_and_all_record_a_failed_run(project: Project) -> None:
    path = project.scenario("first", EMPTY)
    agent = _agent(project, STALLS)
    _live(project, agent, "--ooda-record-mode=once", "--ooda-record-failures")
    assert yaml.safe_load(path.read_text())["recorded"]["status"] == "max-iters"
    path.write_text(EMPTY)
    _live(project, agent, "--ooda-record-mode=all")
    assert yaml.safe_load(path.read_text())["recorded"]["status"] == "max-iters"
    # From the ini file too.
    path.write_text(EMPTY)
    project.write("pytest.ini", "[pytest]\nooda_record_failures = true\n")
    _live(project, agent, "--ooda-record-mode=once")
    assert yaml.safe_load(path.read_text())["recorded"]["status"] == "max-iters"


def test_a_run_that_ends_as_its_scenario_expects_is_recorded(project: Project) -> None:
    # A scenario that checks a procedure gives up when it cannot finish.
    gives_up = EMPTY.replace("{status: success}", "{status: max-iters}")
    path = project.scenario("first", gives_up)
    result = _live(project, _agent(project, STALLS), "--ooda-record-mode=once")
    result.assert_outcomes(passed=1, deselected=7)
    assert yaml.safe_load(path.read_text())["recorded"]["status"] == "max-iters"


def test_a_recorded_failed_run_says_on_replay_how_to_record_it_again(project: Project) -> None:
    path = project.scenario("first", EMPTY)
    _live(project, _agent(project, STALLS), "--ooda-record-mode=all")
    assert yaml.safe_load(path.read_text())["recorded"]["status"] == "max-iters"
    replayed = project.run("-k", "scenario")
    replayed.assert_outcomes(failed=1, deselected=7)
    replayed.stdout.fnmatch_lines(
        [
            "*expected status 'success', got 'max-iters'",
            "*this scenario holds a recorded failed run (the recorded run ended max-iters, "
            "not success as expected); record it again with",
            "*pytest -m live --ooda-record-mode=all 'ooda-config.yml::greet::live[[]first[]]'",
            "*(once and new keep an existing recording; or set iterations: [[]] and record once)",
        ]
    )
    # A recording that failed only a check (not its status) gets no such advice.
    project.scenario(
        "second", EMPTY.replace("{status: success}", "{status: success, files: {X: exists}}")
    )
    # (once records it only when told: it missed a per-run expectation.)
    _live(
        project,
        _agent(project, SUCCEEDS),
        "--ooda-record-mode=once",
        "--ooda-record-failures",
        "-k",
        "second",
    )
    checked = project.run("-k", "scenario and second")
    checked.assert_outcomes(failed=1, deselected=9)
    assert "holds a recorded failed run" not in checked.stdout.str()


@pytest.mark.parametrize("mode", ["once", "new"])
def test_a_run_that_missed_a_file_expectation_is_not_recorded(project: Project, mode: str) -> None:
    # The loop ends as expected (success), but the file the scenario expects is missing:
    # a recording of it would replay red for ever.
    wants_file = EMPTY.replace("{status: success}", "{status: success, files: {HELLO.md: exists}}")
    path = project.scenario("first", wants_file)
    agent = _agent(project, SUCCEEDS)
    result = _live(project, agent, f"--ooda-record-mode={mode}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert path.read_text() == wants_file
    result.stdout.fnmatch_lines(
        [
            "*RecordingWarning: scenario greet/first: not recorded: the run missed its "
            "expectations (*HELLO.md*): a recording of it would replay the failure "
            "(--ooda-record-failures records failed runs, --ooda-record-mode=all every run)",
        ]
    )
    _live(project, agent, f"--ooda-record-mode={mode}", "--ooda-record-failures")
    assert yaml.safe_load(path.read_text())["recorded"]["status"] == "success"
