"""``success_rate: {min: …, stop_early: true}`` and ``--ooda-stop-early``: once the
sequential test has settled a scenario's gate, its remaining runs are skipped, saying
why — under pytest-xdist too, through the session's shared tally."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = """\
import sys, time
sys.stdin.read()
time.sleep(0.05)
print("done <promise>SUCCESS</promise>" if "{ok}" == "yes" else "could not")
"""


def _agent(project: Project, ok: bool) -> str:
    script = project.write("agent/agent.py", AGENT.replace("{ok}", "yes" if ok else "no"))
    return f"{sys.executable} {script}"


def _records(project: Project) -> list[dict[str, object]]:
    return [
        json.loads(line)
        for path in (project.path / ".ooda/results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]


def test_a_settled_gate_skips_the_remaining_runs_under_xdist(project: Project) -> None:
    pytest.importorskip("xdist")
    project.scenario(
        "s",
        "procedure: greet\nmax_iterations: 1\nrepeat: 40\n"
        "expect: {status: success, success_rate: {min: 0.5, stop_early: true}}\n"
        "iterations: []\n",
    )
    result = project.run("-m", "live", "--ooda-ai-cmd", _agent(project, True), "-n", "2", "-rs")
    outcomes = result.parseoutcomes()
    # SPRT of 40% against 60%: eight successes settle it; runs already started on the
    # other worker finish too.
    assert 8 <= outcomes["passed"] <= 12, outcomes
    assert outcomes["skipped"] == 40 - outcomes["passed"]
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "gate passed greet/s: success rate >= 50%",
            "SKIPPED [[]*[]] *: stopped early: greet/s's success rate gate (min 50%) is "
            "settled as passed after * valid run(s), * successful (SPRT of 40% against 60%, "
            "error rates <= 0.05 each way)",
        ],
        consecutive=False,
    )
    records = _records(project)
    assert len(records) == outcomes["passed"]
    assert {record["worker"] for record in records} == {"gw0", "gw1"}


def test_the_switch_stops_every_gate_early_and_a_failure_settles_too(project: Project) -> None:
    project.scenario(
        "s",
        "procedure: greet\nmax_iterations: 1\nrepeat: 20\n"
        "expect: {status: success, success_rate: {min: 0.9}}\niterations: []\n",
    )
    agent = _agent(project, False)
    result = project.run("-m", "live", "--ooda-ai-cmd", agent, "--ooda-stop-early")
    # Three failures put the rate below 85% against 95% at the stated error rates.
    result.assert_outcomes(xfailed=3, skipped=17, deselected=7)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "gate FAILED greet/s: success rate 0% (0/3, 95% CI 0%–56%) is below the expected "
            "minimum 90%, settled early (SPRT of 85% against 95%, error rates <= 0.05 each way)"
        ]
    )
    assert all(
        record["aggregate_expect"]["success_rate"]["stop_early"] is True
        for record in _records(project)
    )
    # Without the switch (and without stop_early) every run is made.
    again = project.run("-m", "live", "--ooda-ai-cmd", agent)
    again.assert_outcomes(xfailed=20, deselected=7)


def test_each_variant_settles_on_its_own(project: Project) -> None:
    """Gates are per variant, so is early stopping: a failing variant's runs never
    settle a passing variant's gate, nor the other way round."""
    good = _agent(project, True)
    bad = f"{sys.executable} {project.write('agent/bad.py', AGENT.replace('{ok}', 'no'))}"
    project.scenario(
        "s",
        "procedure: greet\nmax_iterations: 1\nrepeat: 20\n"
        "expect: {status: success, success_rate: {min: 0.5, stop_early: true}}\n"
        f"variants:\n  good: {{ai_cmd: '{good}'}}\n  bad: {{ai_cmd: '{bad}'}}\n"
        "iterations: []\n",
    )
    result = project.run("-m", "live", "-rs")
    by_variant: dict[str, list[str]] = {"good": [], "bad": []}
    for record in _records(project):
        by_variant[str(record["variant"])].append(str(record["outcome"]))
    # SPRT of 40% against 60%: eight successes settle the good variant, and eight
    # failures the bad one; had they shared a tally, neither would have settled so soon.
    assert by_variant["good"] == ["success"] * 8
    assert by_variant["bad"] == ["failure"] * 8
    for verdict in ("bad's * settled as failed after 8", "good's * settled as passed after 8"):
        result.stdout.fnmatch_lines([f"SKIPPED [[]12[]] *: stopped early: greet/s@{verdict} *"])
    result.stdout.fnmatch_lines(
        ["gate FAILED greet/s@bad: *", "gate passed greet/s@good: *"], consecutive=False
    )
