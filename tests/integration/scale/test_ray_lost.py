"""No silent loss on a Ray cluster (issue 39, item 5): the raylet of the controller's own
node (the head, where the session's driver and ledger live) is killed in the middle of a
session. The session ends with a message naming the cause, every run that finished is
in the results log once, each run under way is there as a ``worker-lost`` error, and
``--ooda-resume`` makes exactly those (and the runs never started) again on a fresh
cluster. This module's cluster is its own: the test leaves it without its head."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from external_tools import require

from .clusters import RayCluster
from .helpers import agent, agent_pids, ancestors, records, scenario, wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from ooda_project import Project

QUIET = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest")


@pytest.fixture
def doomed_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    from importlib.util import find_spec

    require(find_spec("ray") is not None, "Ray", "pip install 'pytest-ooda[ray]'")
    cluster = RayCluster(tmp_path_factory.mktemp("ray-lost"), cpus=2)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def _session(cluster: RayCluster, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = cluster.command(sys.executable, "-m", "pytest", *QUIET, "-m", "live", *args)
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def test_the_controllers_raylet_dying_ends_the_session_saying_so_and_loses_no_run(
    project: Project, doomed_cluster: RayCluster, tmp_path_factory: pytest.TempPathFactory
) -> None:
    command = agent(project, sleep=3.0)
    scenario(project, repeat=12)
    argv = doomed_cluster.command(
        sys.executable, "-m", "pytest", *QUIET, "-m", "live", f"--ooda-ai-cmd={command}",
        f"--ooda-executor=ray:{doomed_cluster.address}",
    )  # fmt: skip
    session = subprocess.Popen(
        argv, cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    head = doomed_cluster.head_raylet()
    # A run back in the results log, and one under way on the head: then the head goes.
    wait_until(lambda: len(records(project)) >= 1, 180, "a run in the results log")
    wait_until(
        lambda: any(head in ancestors(pid) for pid in agent_pids()), 120, "a run on the head"
    )
    doomed_cluster.kill(head)
    output, _ = session.communicate(timeout=600)
    assert session.returncode not in (0, None), output
    assert "INTERNALERROR" not in output, output
    assert "Traceback" not in output, output
    # The message names the cause.
    assert "ooda: the connection to the cluster (ray:" in output, output
    found = records(project)
    finished = [r for r in found if r["outcome"] == "success"]
    lost = [r for r in found if r["outcome"] == "error"]
    assert finished, output
    assert lost, output
    assert all(r["error_reason"].startswith("worker-lost: ") for r in lost), lost
    # Each run once.
    assert max(Counter(r["run"] for r in found).values()) == 1
    # --ooda-resume on a fresh cluster makes the lost runs and the ones never made, and
    # only those: every run of the twelve then counts once, as a success.
    fresh = RayCluster(tmp_path_factory.mktemp("ray-again"), cpus=2).start()
    try:
        again = _session(
            fresh, project.path, f"--ooda-ai-cmd={command}", "--ooda-resume",
            f"--ooda-executor=ray:{fresh.address}",
        )  # fmt: skip
    finally:
        fresh.stop()
    assert again.returncode == 0, again.stdout + again.stderr
    latest = {}
    for record in records(project):
        if record["outcome"] != "error":
            latest[record["run"]] = record
    assert sorted(latest) == list(range(1, 13))
