"""A live session killed mid-way leaves a results log of whole records: every run that
finished before the kill, readable by ``ooda report``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.results import read_results

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"


def test_a_killed_session_keeps_every_finished_run(project: Project) -> None:
    # Two quick successes, then every later run hangs until it is killed.
    plan = [{"print": "<promise>SUCCESS</promise>"}] * 2 + [{"sleep": 120}]
    project.write("plan.json", json.dumps(plan))
    project.scenario("s", "procedure: greet\nmax_iterations: 1\nrepeat: 4\niterations: []\n")
    command = f"{sys.executable} {AGENT} --plan {project.path / 'plan.json'}"
    session = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-m",
            "live",
            "-p",
            "no:cacheprovider",
            "--ooda-ai-cmd",
            command,
        ],
        cwd=project.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    results = project.path / ".ooda/results"
    try:
        deadline = time.monotonic() + 60
        while True:
            logs = list(results.glob("*.jsonl")) if results.is_dir() else []
            if logs and logs[0].read_text().count("\n") >= 2:
                break
            assert session.poll() is None, "the session ended before it was killed"
            assert time.monotonic() < deadline, "no two runs were logged in time"
            time.sleep(0.05)
        # No clean-up of any kind: the whole process group dies at once.
        os.killpg(session.pid, signal.SIGKILL)
        session.wait(timeout=30)
    finally:
        if session.poll() is None:
            os.killpg(session.pid, signal.SIGKILL)
            session.wait(timeout=30)
    found = read_results([results])
    assert found.warnings == ()
    assert sorted(record.head.run for record in found.records) == [1, 2]
    assert all(record.outcome == "success" for record in found.records)
