"""``--ooda-results``: every live run appends one record to the session's results log,
redacted, from one writer even under xdist; and the session's summary."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from ooda_project import Project

SECRET = "s3cr3t-value-0123456789"
PLAN = (
    '[{"print": "Greeted Ann", "files": {"NOTES.md": "ann"}},'
    ' {"print": "All greeted.\\n<promise>SUCCESS</promise>", "files": {"DONE.md": "done"}}]'
)
SCENARIO = (
    "procedure: greet\nmax_iterations: 3\nexpect: {status: success, files: {DONE.md: exists}}\n"
    "iterations: []\n"
)


def records(directory: Path) -> list[dict[str, Any]]:
    files = sorted(directory.glob("*.jsonl"))
    return [json.loads(line) for file in files for line in file.read_text().splitlines()]


@pytest.fixture
def live(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("OODA_TEST_API_TOKEN", SECRET)
    project.ai_cmd = project.fake_ai(PLAN)  # type: ignore[attr-defined]
    subprocess.run(["git", "init", "-q"], cwd=project.path, check=True)
    return project


def run_live(project: Project, *args: str) -> pytest.RunResult:
    return project.run("-m", "live", "--ooda-ai-cmd", project.ai_cmd, *args)  # type: ignore[attr-defined]


def test_a_run_appends_one_complete_record(live: Project) -> None:
    live.scenario("first", SCENARIO)
    result = run_live(live)
    result.assert_outcomes(passed=1, deselected=7)
    [record] = records(live.path / ".ooda/results")
    assert record["schema"] == "pytest-ooda/results"
    assert record["version"] == 3
    assert "success" not in record
    assert record["outcome"] == "success"
    assert (record["procedure"], record["scenario"], record["run"], record["runs"]) == (
        "greet",
        "first",
        1,
        1,
    )
    assert record["nodeid"] == "ooda-config.yml::greet::live[first]"
    assert record["scenario_file"] == "scenarios/greet/first.yml"
    assert record["status"] == "success"
    assert record["outcome"] == "success"
    assert record["iteration_count"] == 2
    assert len(record["prompt_sha256"]) == 64
    fragments = {(f["phase"], f["source"]) for f in record["fragments"]}
    assert ("observe", "prompts/observe.md") in fragments
    assert ("orient", "builtin:fragments/orient/identify_drift.md") in fragments
    assert record["ai_command"].endswith("fake-ai/agent.py")
    assert record["pytest_ooda"] == "0.1.0"
    # the repository's commit: the project is a git repository without commits
    assert record["git_commit"] is None
    assert record["worker"] is None
    first, second = record["iterations"]
    assert (first["number"], first["outcome"], first["signal"], first["exit_code"]) == (
        1,
        "ok",
        None,
        0,
    )
    assert second["signal"] == "SUCCESS"
    assert first["files"] == {"NOTES.md": "created"}
    assert second["files"] == {"DONE.md": "created"}
    assert record["files_changed"] == {"DONE.md": "created", "NOTES.md": "created"}
    assert first["duration_s"] >= 0
    assert record["expect"] == {"status": "success", "files": {"DONE.md": "exists"}}
    assert record["problems"] == []
    # The agent printed a secret from the environment: never in the log.
    assert "token in use: <redacted>" in first["output_tail"]
    text = next((live.path / ".ooda/results").glob("*.jsonl")).read_text()
    assert SECRET not in text
    # The default directory keeps itself out of git.
    assert (live.path / ".ooda/.gitignore").read_text().splitlines()[-1] == "*"
    result.stdout.fnmatch_lines(["results: .ooda/results/*.jsonl (1 run; `ooda report *`)"])


def test_verification_commands_are_recorded_passed_or_not(live: Project) -> None:
    live.scenario(
        "verified",
        "procedure: greet\nmax_iterations: 3\nexpect:\n  status: success\n  commands:\n"
        "    - {run: 'cat DONE.md', output_contains: done}\n"
        "    - {run: 'echo token $OODA_TEST_API_TOKEN; exit 3', exit_code: 0}\n"
        "iterations: []\n",
    )
    result = run_live(live)
    result.assert_outcomes(failed=1, deselected=7)
    [record] = records(live.path / ".ooda/results")
    passed, failed = record["commands"]
    assert (passed["run"], passed["exit_code"], passed["passed"], passed["problem"]) == (
        "cat DONE.md",
        0,
        True,
        None,
    )
    assert passed["output_tail"] == "done"
    assert passed["duration_s"] >= 0
    assert (failed["exit_code"], failed["expected_exit_code"], failed["passed"]) == (3, 0, False)
    assert "exited 3, expected 0" in failed["problem"]
    # The command printed a secret from the environment: redacted in the log too.
    assert failed["output_tail"] == "token <redacted>"
    assert record["outcome"] != "success"
    assert len(record["problems"]) == 1


def test_the_repository_commit_is_recorded(live: Project) -> None:
    live.scenario("first", SCENARIO)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "add", "-A"], cwd=live.path, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=live.path, check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=live.path, capture_output=True, text=True, check=True
    ).stdout.strip()
    run_live(live).assert_outcomes(passed=1, deselected=7)
    [record] = records(live.path / ".ooda/results")
    assert record["git_commit"] == head
    # The run itself changed nothing tracked (results are git-ignored).
    assert record["git_dirty"] is False


def test_one_file_per_session_from_every_xdist_worker(live: Project) -> None:
    live.scenario("first", SCENARIO.replace("iterations: []", "repeat: 4\niterations: []"))
    live.write(
        "fake-ai/plan.json", '[{"print": "<promise>SUCCESS</promise>", "files": {"DONE.md": "x"}}]'
    )
    result = run_live(live, "-n", "2", "--ooda-results=out")
    result.assert_outcomes(passed=4)
    [log] = list((live.path / "out").glob("*.jsonl"))
    found = records(live.path / "out")
    assert sorted(record["run"] for record in found) == [1, 2, 3, 4]
    assert {record["worker"] for record in found} <= {"gw0", "gw1"}
    assert len({record["id"] for record in found}) == 4
    assert len({record["session"] for record in found}) == 1
    assert log.read_text().endswith("\n")
    # A directory of one's own choosing gets no .gitignore.
    assert not (live.path / ".ooda").exists()
    # A second session never touches the first one's file.
    before = log.read_text()
    run_live(live, "--ooda-results=out").assert_outcomes(passed=4, deselected=7)
    assert log.read_text() == before
    assert len(list((live.path / "out").glob("*.jsonl"))) == 2


def test_a_failed_run_is_recorded_as_not_a_success(live: Project) -> None:
    live.scenario("first", SCENARIO.replace("DONE.md: exists", "MISSING.md: exists"))
    result = run_live(live)
    result.assert_outcomes(failed=1, deselected=7)
    [record] = records(live.path / ".ooda/results")
    assert record["status"] == "success"
    assert record["outcome"] != "success"
    assert record["problems"] == ["file MISSING.md: expected to exist, but it is missing"]
    result.stdout.fnmatch_lines(["greet/first  *1   0       0    0%  0%–79%*"])


def test_results_in_a_file_is_a_usage_error(project: Project) -> None:
    project.write("taken", "a file\n")
    result = project.run("--ooda-results=taken")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ooda-results: not a directory: *taken"])


def test_an_unwritable_results_directory_fails_the_session_but_not_the_runs(
    live: Project,
) -> None:
    live.scenario("first", SCENARIO)
    blocked = live.path / "blocked"
    blocked.mkdir()
    (blocked / "results").write_text("a file where the directory should be")
    result = run_live(live, "--ooda-results=blocked/results/deeper")
    result.assert_outcomes(passed=1, deselected=7)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["error: cannot write the results log blocked/results/deeper: *"])


# Makes the sessions of one project wait for each other, then start together: each
# leaves a marker, and once all are there every one sleeps to the same whole second
# (two seconds after the last marker was made), so their start times are one second.
SAME_SECOND = """\
import math
import os
import time
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    gate = Path(os.environ["OODA_TEST_GATE"])
    (gate / str(os.getpid())).touch()
    deadline = time.monotonic() + 120
    while len(list(gate.iterdir())) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    last = max(marker.stat().st_mtime for marker in gate.iterdir())
    time.sleep(max(0.0, math.floor(last) + 2.05 - time.time()))
"""


def test_three_sessions_started_in_the_same_second_are_three_series(
    live: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from pytest_ooda.cli.app import main as ooda

    live.scenario("first", SCENARIO)
    live.write("conftest.py", SAME_SECOND)
    gate = live.path / "gate"
    gate.mkdir()
    monkeypatch.setenv("OODA_TEST_GATE", str(gate))
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:benchmark",
        "-m", "live", "-k", "first", "--ooda-ai-cmd", live.ai_cmd,  # type: ignore[attr-defined]
        "--ooda-repeat=5", "--ooda-results=res",
    ]  # fmt: skip
    sessions = [
        subprocess.Popen(command, cwd=live.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(3)
    ]
    outputs = [session.communicate(timeout=600)[0].decode() for session in sessions]
    assert [session.returncode for session in sessions] == [0, 0, 0], outputs
    files = sorted((live.path / "res").glob("*.jsonl"))
    assert len(files) == 3
    found = records(live.path / "res")
    names = {record["session"] for record in found}
    # Started in one second, yet three sessions: the time, then a part of their own.
    assert len(names) == 3
    assert len({name.split("-")[0] for name in names}) == 1, names
    assert {record["series"] for record in found} == names
    assert {file.stem for file in files} == names
    capsys.readouterr()
    assert ooda(["report", str(live.path / "res")]) == 0
    out, err = capsys.readouterr()
    assert "1 scenario(s), 15 run(s) from 3 file(s)" in out
    assert "counted once" not in err
