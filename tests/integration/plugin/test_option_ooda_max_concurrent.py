"""``--ooda-max-concurrent N`` / ``ooda_max_concurrent``: at most N live runs at once per
AI command across every pytest-xdist worker; a run that waited says so."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = """\
import json, sys, time
from pathlib import Path
sys.stdin.read()
log = Path(__file__).parent / "spans.jsonl"
started = time.time()
time.sleep(0.8)
with log.open("a") as out:
    out.write(json.dumps([started, time.time()]) + "\\n")
print("done <promise>SUCCESS</promise>")
"""


def _peak(spans: list[list[float]]) -> int:
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    level = peak = 0
    for _, step in sorted(events, key=lambda item: (item[0], item[1])):
        level += step
        peak = max(peak, level)
    return peak


@pytest.mark.parametrize("how", ["option", "ini"])
def test_runs_wait_for_a_slot_across_workers(project: Project, how: str) -> None:
    pytest.importorskip("xdist")
    script = project.write("agent/agent.py", AGENT)
    project.scenario(
        "s",
        "procedure: greet\nmax_iterations: 1\nrepeat: 4\nexpect: {status: success}\n"
        "iterations: []\n",
    )
    args = ["-m", "live", "--ooda-ai-cmd", f"{sys.executable} {script}", "-n", "2"]
    if how == "option":
        args += ["--ooda-max-concurrent", "1"]
    else:
        project.write("pytest.ini", "[pytest]\nooda_max_concurrent = 1\n")
    result = project.run(*args)
    assert result.parseoutcomes()["passed"] == 4
    spans = [
        json.loads(line) for line in (project.path / "agent/spans.jsonl").read_text().splitlines()
    ]
    assert len(spans) == 4
    assert _peak(spans) == 1
    # Two workers, one slot: runs queued, and the progress line says for how long.
    result.stdout.re_match_lines([r"ooda: greet/s \d/4: success status=success .* queued=\d+\.\ds"])


def test_without_a_cap_two_workers_overlap(project: Project) -> None:
    pytest.importorskip("xdist")
    script = project.write("agent/agent.py", AGENT)
    project.scenario(
        "s",
        "procedure: greet\nmax_iterations: 1\nrepeat: 4\nexpect: {status: success}\n"
        "iterations: []\n",
    )
    result = project.run("-m", "live", "--ooda-ai-cmd", f"{sys.executable} {script}", "-n", "2")
    assert result.parseoutcomes()["passed"] == 4
    spans = [
        json.loads(line) for line in (project.path / "agent/spans.jsonl").read_text().splitlines()
    ]
    assert _peak(spans) == 2


def test_a_bad_cap_is_a_usage_error(project: Project) -> None:
    result = project.run("-m", "live", "--ooda-max-concurrent", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ooda-max-concurrent: expected an integer >= 1, got '0'*"])
