"""``pytest -m live --ooda-executor=ray:ADDRESS`` sessions against a real two-node Ray
cluster (``ray start``, every node on 127.0.0.1 in a loopback-only network namespace;
each session runs in that namespace too): one results log with every run once, made by
Ray workers on both nodes, the same verdicts and tables as a local session, the
cluster-wide cap, and nothing lost or duplicated when a node dies mid-session (last: the
module's cluster has one node left after it)."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from .helpers import agent, agent_lines, agent_pids, ancestors, peak, records, scenario, wait_until

if TYPE_CHECKING:
    from ooda_project import Project

    from .clusters import RayCluster

QUIET = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest")


def _argv(cluster: RayCluster, *args: str) -> list[str]:
    return cluster.command(sys.executable, "-m", "pytest", *QUIET, "-m", "live", *args)


def _session(project: Project, cluster: RayCluster, *args: str) -> pytest.RunResult:
    return project.pytester.run(*_argv(cluster, *args), timeout=300)


def _table(output: str) -> list[str]:
    lines = output.split("ooda live runs", 1)[1].splitlines()
    kept = [line for line in lines if line.startswith(("greet/", "gate ", "scenario"))]
    return [" ".join(part for part in line.split() if not part.endswith("s")) for line in kept]


def test_runs_are_made_on_both_nodes_and_recorded_once(
    project: Project, ray_cluster: RayCluster
) -> None:
    command = agent(project, sleep=1.0)
    scenario(project)
    result = _session(
        project,
        ray_cluster,
        "--ooda-repeat",
        "8",
        f"--ooda-ai-cmd={command}",
        f"--ooda-executor=ray:{ray_cluster.address}",
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=8)
    found = records(project)
    assert sorted(record["run"] for record in found) == list(range(1, 9))
    assert len({record["id"] for record in found}) == 8
    nodes = {record["worker"] for record in found}
    assert len(nodes) == 2
    assert all(node.startswith("ray:node-") for node in nodes)
    lines = agent_lines(project)
    assert len(lines) == 8
    for line in lines:
        assert not any("--ooda-executor" in command for command in line["chain"])
        assert any(command.startswith("ray::") for command in line["chain"]), line["chain"]
    span = max(line["ended"] for line in lines) - min(line["started"] for line in lines)
    assert span < 5.0  # four CPUs: well under the eight seconds one after another


def test_the_same_verdicts_and_tables_as_a_local_session(
    project: Project, ray_cluster: RayCluster
) -> None:
    command = agent(project, sleep=0.1, fail_every=3)
    scenario(project, repeat=12, gate="success_rate: {min: 0.9}\n")
    local = project.pytester.runpytest_subprocess(
        *QUIET, "-m", "live", "-q", f"--ooda-ai-cmd={command}", timeout=300
    )
    (project.path / "agent/counter").unlink(missing_ok=True)
    remote = _session(
        project, ray_cluster, "-q", f"--ooda-ai-cmd={command}", "--ooda-executor=ray:auto"
    )
    assert local.ret == remote.ret == pytest.ExitCode.TESTS_FAILED
    assert local.parseoutcomes() == remote.parseoutcomes()
    assert _table(local.stdout.str()) == _table(remote.stdout.str())


def test_the_cap_holds_across_the_cluster(project: Project, ray_cluster: RayCluster) -> None:
    command = agent(project, sleep=0.8)
    scenario(project, repeat=6)
    result = _session(
        project,
        ray_cluster,
        "--ooda-max-concurrent=2",
        f"--ooda-ai-cmd={command}",
        f"--ooda-executor=ray:{ray_cluster.address}",
    )
    assert result.ret == 0, result.stdout.str()
    lines = agent_lines(project)
    assert len(lines) == 6
    assert peak([(line["started"], line["ended"]) for line in lines]) == 2
    assert any(record["queued_s"] and record["queued_s"] > 0.3 for record in records(project))


def test_a_node_lost_mid_session_loses_and_duplicates_nothing(
    project: Project, ray_cluster: RayCluster
) -> None:
    command = agent(project, sleep=2.0)
    scenario(project, repeat=8)
    session = subprocess.Popen(
        _argv(
            ray_cluster, f"--ooda-ai-cmd={command}", f"--ooda-executor=ray:{ray_cluster.address}"
        ),
        cwd=project.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    raylet = ray_cluster.second_raylet()
    wait_until(
        lambda: any(raylet in ancestors(pid) for pid in agent_pids()),
        120,
        "a run on the second node",
    )
    ray_cluster.kill(raylet)
    output, _ = session.communicate(timeout=300)
    assert session.returncode == 0, output
    found = records(project)
    assert sorted(record["run"] for record in found) == list(range(1, 9)), output
    assert all(record["outcome"] == "success" for record in found)
    # The runs the lost node was making were made again on the head, and only they.
    assert len(agent_lines(project)) >= 8
