"""``pytest -m live --ooda-executor=dask:ADDRESS`` sessions, run as real subprocesses
against a real Dask cluster (a scheduler and two ``dask worker`` processes, all on
127.0.0.1): one results log with every run once, the agent run by the workers (both of
them), the same verdicts and tables as the same session run locally, nothing lost when
a worker is killed mid-session or the session is interrupted, early stopping cancelling
runs, and ``--ooda-max-concurrent`` holding across the cluster."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from .helpers import (
    agent,
    agent_lines,
    agent_pids,
    ancestors,
    peak,
    records,
    scenario,
    wait_until,
)

if TYPE_CHECKING:
    from ooda_project import Project

    from .clusters import DaskCluster

#: Plugins with no part in these sessions (as ooda_project.Project.run leaves out).
QUIET = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest")


def _session(project: Project, *args: str) -> pytest.RunResult:
    return project.pytester.runpytest_subprocess(*QUIET, "-m", "live", *args, timeout=300)


def _table(output: str) -> list[str]:
    """The per-scenario table and gate lines, without times."""
    lines = output.split("ooda live runs", 1)[1].splitlines()
    kept = [line for line in lines if line.startswith(("greet/", "gate ", "scenario"))]
    return [" ".join(part for part in line.split() if not part.endswith("s")) for line in kept]


def test_runs_are_made_by_both_workers_and_recorded_once(
    project: Project, dask_cluster: DaskCluster
) -> None:
    command = agent(project, sleep=1.0)
    scenario(project, repeat=1)
    result = _session(
        project,
        "--ooda-repeat",
        "8",
        f"--ooda-ai-cmd={command}",
        f"--ooda-executor=dask:{dask_cluster.address}",
    )
    assert result.parseoutcomes()["passed"] == 8, result.stdout.str()
    found = records(project)
    assert len(found) == 8
    assert sorted(record["run"] for record in found) == list(range(1, 9))
    assert len({record["id"] for record in found}) == 8
    assert len(list((project.path / ".ooda/results").glob("*.jsonl"))) == 1
    # Made by the workers, both of them; the controller is none of the agent's ancestors.
    workers = {f"dask:{address}" for address in dask_cluster.worker_addresses()}
    assert {record["worker"] for record in found} == workers
    lines = agent_lines(project)
    assert len(lines) == 8
    for line in lines:
        assert not any("--ooda-executor" in command for command in line["chain"])
        assert any("dask" in command or "distributed" in command for command in line["chain"])
    # Four slots: well under the eight seconds one after another.
    span = max(line["ended"] for line in lines) - min(line["started"] for line in lines)
    assert span < 5.0
    result.stdout.fnmatch_lines(["*ooda: greet/s */8: success*"])


def test_the_same_verdicts_and_tables_as_a_local_session(
    project: Project, dask_cluster: DaskCluster
) -> None:
    # Every third run fails: 4 of 12 whichever order they run in, on both sides.
    command = agent(project, sleep=0.1, fail_every=3)
    scenario(project, repeat=12, gate="success_rate: {min: 0.9}\n")
    args = ["-q", f"--ooda-ai-cmd={command}"]
    local = _session(project, *args)
    (project.path / "agent/counter").unlink(missing_ok=True)
    remote = _session(project, *args, f"--ooda-executor=dask:{dask_cluster.address}")
    assert local.ret == remote.ret == pytest.ExitCode.TESTS_FAILED
    assert local.parseoutcomes() == remote.parseoutcomes()
    assert _table(local.stdout.str()) == _table(remote.stdout.str())
    assert any(line.startswith("gate FAILED") for line in _table(remote.stdout.str()))


def test_a_worker_killed_mid_session_loses_and_duplicates_nothing(
    project: Project, dask_cluster: DaskCluster
) -> None:
    spare = dask_cluster.add_worker("spare")
    dask_cluster.wait_for(3)
    command = agent(project, sleep=2.0)
    scenario(project, repeat=10)
    session = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            *QUIET,
            "-m",
            "live",
            f"--ooda-ai-cmd={command}",
            f"--ooda-executor=dask:{dask_cluster.address}",
        ],
        cwd=project.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    # Once an agent runs under the spare worker, the worker goes.
    def running_on_spare() -> bool:
        return any(spare.pid in ancestors(pid) for pid in agent_pids())

    wait_until(running_on_spare, 240, "a run on the spare worker")
    dask_cluster.kill_worker(spare)
    output, _ = session.communicate(timeout=300)
    assert session.returncode == 0, output
    found = records(project)
    assert sorted(record["run"] for record in found) == list(range(1, 11)), output
    assert all(record["outcome"] == "success" for record in found)
    # The run the spare was making when it died was made again on another worker.
    assert len(agent_lines(project)) >= 10
    assert len({record["worker"] for record in found}) >= 2


def test_an_interrupted_session_keeps_its_finished_runs_and_resumes(
    project: Project, dask_cluster: DaskCluster
) -> None:
    command = agent(project, sleep=1.0)
    scenario(project, repeat=12)
    args = [f"--ooda-ai-cmd={command}", f"--ooda-executor=dask:{dask_cluster.address}"]
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", *QUIET, "-m", "live", *args],
        cwd=project.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_until(lambda: len(records(project)) >= 3, 120, "three finished runs")
    session.send_signal(signal.SIGINT)
    output, _ = session.communicate(timeout=120)
    assert session.returncode == pytest.ExitCode.INTERRUPTED, output
    kept = records(project)
    assert kept
    assert len(kept) < 12
    assert len({record["run"] for record in kept}) == len(kept)
    time.sleep(1.0)  # a new session name
    resumed = _session(project, *args, "--ooda-resume")
    assert resumed.ret == 0, resumed.stdout.str()
    found = records(project)
    assert sorted(record["run"] for record in found) == list(range(1, 13))
    resumed.stdout.fnmatch_lines([f"*resumed: {len(kept)} earlier run(s) counted*"])


def test_early_stopping_cancels_the_runs_not_begun(
    project: Project, dask_cluster: DaskCluster
) -> None:
    # Every run fails: a 90% gate is settled as failed after a few runs.
    command = agent(project, sleep=0.3, fail_every=1)
    scenario(project, repeat=40, gate="success_rate: {min: 0.9}\n")
    result = _session(
        project,
        "--ooda-stop-early",
        f"--ooda-ai-cmd={command}",
        f"--ooda-executor=dask:{dask_cluster.address}",
    )
    outcomes = result.parseoutcomes()
    assert outcomes["skipped"] >= 20, result.stdout.str()
    found = records(project)
    # Every run that began was recorded (an item reports its run when it came back
    # before the item's turn); the rest, most of them, never began.
    assert len(found) == len(agent_lines(project)) <= 16
    assert outcomes["xfailed"] <= len(found)
    assert outcomes["xfailed"] + outcomes["skipped"] == 40
    result.stdout.fnmatch_lines(["*gate FAILED*settled early*"])


def test_the_cap_holds_across_the_cluster(project: Project, dask_cluster: DaskCluster) -> None:
    command = agent(project, sleep=0.8)
    scenario(project, repeat=6)
    result = _session(
        project,
        "--ooda-max-concurrent=2",
        f"--ooda-ai-cmd={command}",
        f"--ooda-executor=dask:{dask_cluster.address}",
    )
    assert result.parseoutcomes()["passed"] == 6
    lines = agent_lines(project)
    assert peak([(line["started"], line["ended"]) for line in lines]) == 2
    # Four slots, two of them allowed: runs waited, on the workers, and say so.
    assert any(record["queued_s"] and record["queued_s"] > 0.3 for record in records(project))
    assert len({record["worker"] for record in records(project)}) == 2


def test_a_run_recorded_on_a_worker_is_written_to_the_projects_scenario(
    project: Project, dask_cluster: DaskCluster
) -> None:
    command = agent(project, sleep=0.1)
    scenario(project)
    result = _session(
        project,
        "--ooda-record-mode=once",
        f"--ooda-ai-cmd={command}",
        f"--ooda-executor=dask:{dask_cluster.address}",
    )
    assert result.ret == 0, result.stdout.str()
    # Recorded by the controller into the project's file, not the worker's copy of it.
    text = (project.path / "scenarios/greet/s.yml").read_text()
    assert "iterations:" in text
    assert "<promise>SUCCESS</promise>" in text
    result.stdout.fnmatch_lines(["recorded: greet/s -> scenarios/greet/s.yml"])
    cached = dask_cluster.cache / "pytest-ooda/sources"
    assert all("SUCCESS" not in path.read_text() for path in cached.glob("*/scenarios/greet/s.yml"))
