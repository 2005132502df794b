"""No silent loss on a Dask cluster (issue 39, item 5): the scheduler dies in the middle
of a session. The session ends with a message naming the cause, every run that finished
is in the results log once, and each run under way is there as a ``worker-lost`` error.
This module's cluster is its own: the test leaves it without its scheduler."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from external_tools import require

from .clusters import DaskCluster
from .helpers import agent, agent_pids, records, scenario, wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ooda_project import Project

QUIET = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest")


@pytest.fixture
def doomed_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    from importlib.util import find_spec

    require(find_spec("distributed") is not None, "Dask", "pip install 'pytest-ooda[dask]'")
    cluster = DaskCluster(tmp_path_factory.mktemp("dask-lost"), workers=2, threads=2)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def test_the_scheduler_dying_ends_the_session_saying_so_and_loses_no_run(
    project: Project, doomed_cluster: DaskCluster
) -> None:
    command = agent(project, sleep=3.0)
    scenario(project, repeat=12)
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", *QUIET, "-m", "live", f"--ooda-ai-cmd={command}",
         f"--ooda-executor=dask:{doomed_cluster.address}"],
        cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    # A run back in the results log, and others under way: then the scheduler goes.
    wait_until(lambda: len(records(project)) >= 1, 180, "a run in the results log")
    wait_until(lambda: bool(agent_pids()), 120, "a run under way")
    assert doomed_cluster.scheduler is not None
    doomed_cluster.scheduler.send_signal(signal.SIGKILL)
    output, _ = session.communicate(timeout=600)
    assert session.returncode not in (0, None), output
    assert "INTERNALERROR" not in output, output
    assert "ooda: the connection to the cluster (dask:" in output, output
    found = records(project)
    assert [r for r in found if r["outcome"] == "success"], output
    lost = [r for r in found if r["outcome"] == "error"]
    assert lost, output
    assert all(r["error_reason"].startswith("worker-lost: ") for r in lost), lost
    assert max(Counter(r["run"] for r in found).values()) == 1
