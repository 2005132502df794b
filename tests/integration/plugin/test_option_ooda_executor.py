"""``--ooda-executor=ENGINE:ADDRESS`` / ini ``ooda_executor`` / ``OODA_EXECUTOR``: where
live runs are made. ``local`` (the default) is the session itself; an engine's mistakes
— a wrong scheme, an engine whose extra is missing, a cluster that cannot be reached,
``-n`` beside it — are usage errors before any run, naming what to do. (Sessions on real
clusters: ``tests/integration/scale/``.)"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = """\
import sys
from pathlib import Path
sys.stdin.read()
with open(Path(__file__).parent / "ran.txt", "a") as out:
    out.write("ran\\n")
print("<promise>SUCCESS</promise>")
"""


def _live(project: Project) -> str:
    script = project.write("agent/agent.py", AGENT)
    project.scenario(
        "s", "procedure: greet\nmax_iterations: 1\nexpect: {status: success}\niterations: []\n"
    )
    return f"--ooda-ai-cmd={sys.executable} {script}"


def _nothing_ran(project: Project) -> None:
    assert not (project.path / "agent/ran.txt").exists()
    assert not (project.path / ".ooda/results").exists()


@pytest.fixture(autouse=True)
def _no_executor_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OODA_EXECUTOR", raising=False)


def test_local_is_the_default_and_runs_here(project: Project) -> None:
    agent = _live(project)
    for extra in ([], ["--ooda-executor=local"]):
        result = project.run("-m", "live", agent, *extra)
        assert result.ret == 0, result.stdout.str()
    logs = list((project.path / ".ooda/results").glob("*.jsonl"))
    records = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    assert [record["worker"] for record in records] == [None, None]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("tcp://127.0.0.1:8786", "unknown engine 'tcp'"),
        ("dsak:tcp://127.0.0.1:8786", "did you mean 'dask'"),
        ("dask", "the dask engine needs the address of its cluster"),
    ],
)
def test_a_wrong_value_is_a_usage_error_before_any_run(
    project: Project, value: str, expected: str
) -> None:
    result = project.run("-m", "live", _live(project), f"--ooda-executor={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().startswith("ERROR: --ooda-executor: ")
    assert expected in result.stderr.str()
    _nothing_ran(project)


def test_an_unreachable_dask_scheduler_names_the_address(project: Project) -> None:
    pytest.importorskip("distributed")
    result = project.run("-m", "live", _live(project), "--ooda-executor=dask:tcp://127.0.0.1:1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: *cannot reach the Dask scheduler at tcp://127.0.0.1:1*", "*dask scheduler*"]
    )
    _nothing_ran(project)


def test_an_unreachable_ray_head_names_the_address(project: Project) -> None:
    pytest.importorskip("ray")
    result = project.run("-m", "live", _live(project), "--ooda-executor=ray:127.0.0.1:1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *cannot reach the Ray cluster at 127.0.0.1:1*"])
    _nothing_ran(project)


@pytest.mark.parametrize(("engine", "module"), [("dask", "distributed"), ("ray", "ray")])
def test_a_missing_extra_names_what_to_install(project: Project, engine: str, module: str) -> None:
    # As if not installed: importing a module mapped to None raises ImportError.
    project.write("conftest.py", f"import sys\nsys.modules[{module!r}] = None\n")
    result = project.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-m", "live", _live(project), f"--ooda-executor={engine}:x:1"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str()
    assert f"the {engine} engine is not installed ({module})" in text
    assert f"install it: pip install 'pytest-ooda[{engine}]'" in text
    _nothing_ran(project)


def test_xdist_beside_an_engine_is_refused(project: Project) -> None:
    pytest.importorskip("xdist")
    result = project.run(
        "-m", "live", _live(project), "--ooda-executor=dask:tcp://127.0.0.1:1", "-n", "2"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*this pytest session is their one controller: drop -n*"])
    _nothing_ran(project)


def test_the_environment_and_the_ini_key_set_it_the_command_line_wins(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = _live(project)
    monkeypatch.setenv("OODA_EXECUTOR", "nope:x")
    result = project.run("-m", "live", agent)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: environment variable OODA_EXECUTOR: unknown engine*"])
    assert project.run("-m", "live", agent, "--ooda-executor=local").ret == 0
    monkeypatch.delenv("OODA_EXECUTOR")
    project.write("pytest.ini", "[pytest]\nooda_executor = nope:x\n")
    result = project.run("-m", "live", agent)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini option ooda_executor: unknown engine*"])
    monkeypatch.setenv("OODA_EXECUTOR", "local")
    assert project.run("-m", "live", agent).ret == 0


@pytest.mark.parametrize("args", [[], ["-m", "live", "--collect-only"]])
def test_without_live_runs_no_cluster_is_reached(project: Project, args: list[str]) -> None:
    # Nothing runs live: the address (nobody there) is never tried.
    result = project.run(_live(project), "--ooda-executor=dask:tcp://127.0.0.1:1", *args)
    assert result.ret != pytest.ExitCode.USAGE_ERROR
    assert "cannot reach" not in result.stderr.str()
    _nothing_ran(project)
