"""Aggregate gates decide a measured scenario's verdict: a failed run is a sample
(``xfail``), an infrastructure error is not counted (``skip``), a gate needs enough valid
runs, and a run whose xdist worker dies is recorded as an ``error``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

# Start k (counted in a file next to the script) fails when k is in FAIL, is killed
# without a word when k is in DIE (a signal: the harness sees it, an infrastructure
# error; an agent's own silent exit would be the agent's word, a failure), kills its
# pytest worker when k is in CRASH.
AGENT = """\
import fcntl, json, os, signal, sys
from pathlib import Path
sys.stdin.read()
here = Path(__file__).parent
plan = json.loads((here / "plan.json").read_text())
counter = here / "count"
# Two xdist workers start agents at once: the count is read and written under a lock,
# so every start has a number of its own.
with open(here / "count.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    k = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(k))
with open(here / "cwd.log", "a") as log:
    log.write(os.getcwd() + "\\n")
if k in plan.get("crash", []):
    os.kill(os.getppid(), signal.SIGKILL)
if plan.get("die") == "all" or k in plan.get("die", []):
    os.kill(os.getpid(), signal.SIGKILL)
if k in plan.get("fail", []):
    print("could not do it")
else:
    print("done <promise>SUCCESS</promise>")
"""


def _agent(project: Project, plan: dict[str, object]) -> str:
    script = project.write("agent/agent.py", AGENT)
    project.write("agent/plan.json", json.dumps(plan))
    return f"{sys.executable} {script}"


def _scenario(project: Project, gate: str, repeat: int, extra: str = "") -> None:
    project.scenario(
        "s",
        f"procedure: greet\nmax_iterations: 1\nrepeat: {repeat}\n{extra}"
        f"expect: {{status: success{gate}}}\niterations: []\n",
    )


def _records(project: Project) -> list[dict[str, object]]:
    return [
        json.loads(line)
        for path in (project.path / ".ooda/results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]


def test_with_a_gate_a_failed_run_is_a_sample_and_the_gate_decides(project: Project) -> None:
    agent = _agent(project, {"fail": [2, 5]})
    _scenario(project, ", success_rate: {min: 0.6}", 6)
    result = project.run("-m", "live", "--ooda-ai-cmd", agent, "-rx")
    result.assert_outcomes(passed=4, xfailed=2, deselected=7)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "gate passed greet/s: success rate >= 60%",
            # pytest 8.0 puts "reason: " before the reason; later versions do not.
            "XFAIL *live[[]s#2[]] - *failed run, a sample of the aggregate expectations "
            "(which decide): expected status 'success', got 'max-iters'",
        ],
        consecutive=False,
    )
    assert (
        sorted(record["outcome"] for record in _records(project))
        == ["failure"] * 2 + ["success"] * 4
    )


def test_a_missed_gate_fails_the_session_and_without_a_gate_each_failure_does(
    project: Project,
) -> None:
    agent = _agent(project, {"fail": [1, 2, 3]})
    _scenario(project, ", success_rate: {min: 0.6}", 4)
    gated = project.run("-m", "live", "--ooda-ai-cmd", agent)
    gated.assert_outcomes(passed=1, xfailed=3, deselected=7)
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    gated.stdout.fnmatch_lines(["gate FAILED greet/s: success rate 25% (1/4, *"])
    # The last line says so first: pytest's counts alone (passed, xfailed) look fine.
    last = gated.stdout.lines[-1]
    assert "= 1 gate failed, 1 passed, 7 deselected, 3 xfailed in " in last, last
    (project.path / "agent/count").unlink()
    _scenario(project, "", 4)
    plain = project.run("-m", "live", "--ooda-ai-cmd", agent)
    plain.assert_outcomes(passed=1, failed=3, deselected=7)


def test_errors_are_not_counted_and_a_gate_needs_enough_valid_runs(project: Project) -> None:
    agent = _agent(project, {"die": "all"})
    _scenario(project, ", success_rate: {min: 0.5}", 4, extra="retry: {attempts: 1, delay: 0}\n")
    result = project.run("-m", "live", "--ooda-ai-cmd", agent, "-rs")
    result.assert_outcomes(skipped=4, deselected=7)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "greet/s  *4   0       4     -  0%–100%*",
            "gate FAILED greet/s: inconclusive: 4 of 4 runs errored (agent-died 4), more than "
            "max_error_rate 20% allows",
            "SKIPPED [[]4[]] *: infrastructure error, not counted in the success rate: "
            "agent-died: killed by SIGKILL before any output (after 1 retry)",
        ],
        consecutive=False,
    )
    records = _records(project)
    assert [record["outcome"] for record in records] == ["error"] * 4
    assert all(record["retries"] == 1 for record in records)
    # Each run was tried twice: the first try and one retry.
    assert (project.path / "agent/count").read_text() == "8"


def test_errors_past_max_error_rate_make_the_session_and_the_report_inconclusive(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ooda.cli.app import main as ooda

    # 4 of 10 runs die before a word (the agent's infrastructure); the 6 left succeed.
    agent = _agent(project, {"die": [1, 3, 5, 7]})
    _scenario(project, ", success_rate: {min: 0.8}", 10, extra="retry: 0\n")
    result = project.run("-m", "live", "--ooda-ai-cmd", agent)
    result.assert_outcomes(passed=6, skipped=4, deselected=7)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    inconclusive = (
        "inconclusive: 4 of 10 runs errored (agent-died 4), more than max_error_rate 20% allows"
    )
    result.stdout.fnmatch_lines([f"gate FAILED greet/s: {inconclusive}"])
    assert "gate passed" not in result.stdout.str()
    capsys.readouterr()
    assert ooda(["report", str(project.path / ".ooda/results"), "--check"]) == 1
    out, err = capsys.readouterr()
    assert inconclusive in out + err
    # Written beside success_rate, a looser bound lets the same runs pass.
    (project.path / "agent/count").unlink()
    _scenario(project, ", success_rate: {min: 0.8}, max_error_rate: 0.5", 10, extra="retry: 0\n")
    looser = project.run("-m", "live", "--ooda-ai-cmd", agent)
    assert looser.ret == pytest.ExitCode.OK
    looser.stdout.fnmatch_lines(["gate passed greet/s: success rate >= 80%, errors <= 50% of runs"])


def test_without_a_gate_an_error_run_fails_its_item_saying_whose_fault(project: Project) -> None:
    agent = _agent(project, {"die": [1, 2]})
    _scenario(project, "", 1, extra="retry: 1\n")
    result = project.run("-m", "live", "--ooda-ai-cmd", agent)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        ["*infrastructure error, not the procedure's fault (left out of the success rate)*"]
    )


def test_a_run_whose_worker_dies_is_recorded_as_an_error(project: Project) -> None:
    pytest.importorskip("xdist")
    agent = _agent(project, {"crash": [2, 4]})
    _scenario(project, ", success_rate: {min: 0.5}", 6)
    result = project.run("-m", "live", "--ooda-ai-cmd", agent, "-n", "2")
    records = _records(project)
    crashed = [record for record in records if record["outcome"] == "error"]
    assert len(records) == 6
    assert len(crashed) == 2
    finished = next(record for record in records if record["outcome"] != "error")
    for record in crashed:
        assert str(record["error_reason"]).startswith("worker-crashed: ")
        # Built by the one record builder from the plan the worker left: the same
        # session, plan identity, fragments and agent as a run that finished.
        for field in ("session", "series", "fragments", "ai_command", "aggregate_expect"):
            assert record[field] == finished[field], field
        assert record["run_id"] not in (None, finished["run_id"])
    result.stdout.fnmatch_lines(["greet/s  *6   4       2  100%*"])
    # 2 of 6 runs crashed: past the default bound of 20%, the 100% left decide nothing.
    result.stdout.fnmatch_lines(
        [
            "gate FAILED greet/s: inconclusive: 2 of 6 runs errored (worker-crashed 2), more "
            "than max_error_rate 20% allows"
        ]
    )
    # pytest-xdist reports the crashed items as failed.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # The dead workers' workspaces are gone with the rest.
    for workspace in (project.path / "agent/cwd.log").read_text().split():
        assert not (project.path / workspace).exists(), workspace
