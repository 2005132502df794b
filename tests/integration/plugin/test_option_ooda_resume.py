"""``--ooda-resume``: a measurement killed half way is finished, not restarted: runs the
results directory holds are not made again, errors and missing runs are, and the table
and gates cover them all."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from ooda_project import Project

AGENT = """\
import sys, time
from pathlib import Path
sys.stdin.read()
with open(Path(__file__).parent / "runs.log", "a") as log:
    log.write("run\\n")
time.sleep(0.3)
print("done <promise>SUCCESS</promise>")
"""
RUNS = 12


def _records(directory: Path) -> list[dict[str, object]]:
    found = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):  # the line the kill cut short
                found.append(json.loads(line))
    return found


def test_a_session_killed_half_way_is_resumed_with_exactly_the_missing_runs(
    project: Project,
) -> None:
    pytest.importorskip("xdist")
    script = project.write("agent/agent.py", AGENT)
    agent = f"{sys.executable} {script}"
    project.scenario(
        "s",
        f"procedure: greet\nmax_iterations: 1\nrepeat: {RUNS}\n"
        "expect: {status: success, success_rate: {min: 0.8}}\niterations: []\n",
    )
    results = project.path / "results"
    args = ["-m", "live", "--ooda-ai-cmd", agent, "-n", "2", "--ooda-results=results"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    first = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:benchmark", *args],
        cwd=project.path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_records(results)) < 4:
            assert first.poll() is None, "the session ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    before = _records(results)
    done = {record["run"] for record in before}
    assert 4 <= len(done) < RUNS
    # The agents run in sessions of their own, so the kill spares those in flight:
    # let them finish (0.3 s each) before counting the runs the resumed session makes.
    time.sleep(1.5)
    (project.path / "agent/runs.log").unlink()

    second = project.run(*args, "--ooda-resume", "-rs")
    outcomes = second.parseoutcomes()
    assert (outcomes["passed"], outcomes["skipped"]) == (RUNS - len(done), len(done))
    assert second.ret == pytest.ExitCode.OK
    # Exactly the missing runs were made.
    made = (project.path / "agent/runs.log").read_text().count("run")
    assert made == RUNS - len(done)
    after = [record for record in _records(results) if record not in before]
    assert sorted(record["run"] for record in after) == sorted(set(range(1, RUNS + 1)) - done)
    # One measurement: the resumed runs continue the first session's series.
    assert {record["series"] for record in after} == {before[0]["series"]}
    second.stdout.fnmatch_lines(
        [
            f"greet/s  *{RUNS}  *{RUNS}       0  100%*",
            "gate passed greet/s: success rate >= 80%",
            f"resumed: {len(done)} earlier run(s) counted, not run again",
            "SKIPPED [[]*[]] *: resumed: run * of greet/s is already in the results "
            "(success, session *); not run again",
        ],
        consecutive=False,
    )


def test_error_runs_are_run_again_and_the_report_counts_each_run_once(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ooda.cli.app import main as ooda

    flaky = project.write(
        "agent/flaky.py",
        "import os, signal, sys\nfrom pathlib import Path\nsys.stdin.read()\n"
        "if not Path(__file__).with_name('healthy').exists():\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "print('done <promise>SUCCESS</promise>')\n",
    )
    agent = f"{sys.executable} {flaky}"
    project.scenario(
        "s",
        "procedure: greet\nmax_iterations: 1\nrepeat: 3\nretry: 0\n"
        "expect: {status: success, success_rate: {min: 0.5}}\niterations: []\n",
    )
    args = ["-m", "live", "--ooda-ai-cmd", agent, "--ooda-results=results"]
    broken = project.run(*args)
    broken.assert_outcomes(skipped=3, deselected=7)
    (project.path / "agent/healthy").write_text("")
    resumed = project.run(*args, "--ooda-resume")
    resumed.assert_outcomes(passed=3, deselected=7)
    assert resumed.ret == pytest.ExitCode.OK
    records = _records(project.path / "results")
    assert sorted(record["outcome"] for record in records) == ["error"] * 3 + ["success"] * 3
    # Each run made again names the error it replaces, by id.
    errors = {record["id"] for record in records if record["outcome"] == "error"}
    assert {record["replaces"] for record in records if record["outcome"] == "success"} == errors
    # Two files, one series: `ooda report` counts each run once, the valid one.
    capsys.readouterr()
    assert ooda(["report", str(project.path / "results"), "--check"]) == 0
    out, err = capsys.readouterr()
    assert "1 scenario(s), 3 run(s) from 2 file(s)" in out
    assert "3 run(s) counted once: a resumed session ran them again" in err
    assert "greet/s      3   3       0  100%" in out


def test_a_results_line_nested_too_deep_is_left_out_with_a_warning(project: Project) -> None:
    agent = project.write(
        "agent/ok.py", "import sys\nsys.stdin.read()\nprint('done <promise>SUCCESS</promise>')\n"
    )
    project.scenario(
        "s",
        "procedure: greet\nmax_iterations: 1\nrepeat: 2\nexpect: {status: success}\n"
        "iterations: []\n",
    )
    planted = project.path / "results" / "planted.jsonl"
    planted.parent.mkdir()
    planted.write_text("[" * 1000 + "]" * 1000 + "\n")
    args = ["-m", "live", "--ooda-ai-cmd", f"{sys.executable} {agent}", "--ooda-results=results"]
    resumed = project.run(*args, "--ooda-resume")
    resumed.assert_outcomes(passed=2, deselected=7)
    out = resumed.stdout.str()
    assert "INTERNALERROR" not in out
    assert "Traceback" not in out
    assert "planted.jsonl:1: the record nests deeper than 100 levels; the line is left out" in out
