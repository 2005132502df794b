"""The whole action (``action.yml``, run step by step as GitHub's runner runs it) on a
pull request of the git fixture's project, against the GitHub REST stand-in on
127.0.0.1: a push that edits one private fragment runs exactly that scenario, live, on
both sides, comments once and uploads the report; the next push edits the same comment,
and a regression there fails the check. The agent is a real subprocess whose success
depends on the prompt's text."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from git_project import git, make_project, write
from ooda_project import OUTER_VARIABLES

from .github_standin import TOKEN, GitHubStandIn, serve
from .runner import ARTIFACT_URL, run_action

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

MARKER = "<!-- pytest-ooda:pr-comment -->"

#: Succeeds unless the prompt asks for odd numbers; counts its starts beside itself.
AGENT = """\
import sys
from pathlib import Path
prompt = sys.stdin.read()
with open(Path(__file__).with_name("starts.txt"), "a") as starts:
    starts.write("started\\n")
print("could not" if "odd numbers" in prompt else "done <promise>SUCCESS</promise>")
"""


@pytest.fixture
def github() -> Iterator[tuple[GitHubStandIn, str]]:
    state = GitHubStandIn()
    server, url = serve(state)
    yield state, url
    server.shutdown()
    server.server_close()


def test_one_comment_per_pull_request_edited_on_each_push_and_a_regression_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: tuple[GitHubStandIn, str]
) -> None:
    for name in (*OUTER_VARIABLES, "PYTEST_ADDOPTS", "COV_CORE_SOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(tmp_path / "no-config"))
    state, api = github
    project = tmp_path / "project"
    project.mkdir()
    make_project(project)
    agent = tmp_path / "agent" / "agent.py"
    write(tmp_path, "agent/agent.py", AGENT)
    option = f"--ooda-ai-cmd={sys.executable} {agent}"
    # The base: every scenario recorded (the untouched replay), committed on main.
    write(project, ".gitignore", ".ooda/\n")
    recorded = _pytest(project, "-m", "live", option, "--ooda-record-mode=all")
    assert recorded.returncode == 0, recorded.stdout
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "recorded")
    base = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "-b", "change")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    env = {
        "GITHUB_API_URL": api,
        "GITHUB_REPOSITORY": state.repository,
        "GITHUB_EVENT_PATH": str(event),
    }
    inputs = {
        "base": base,
        "pytest-args": f"'{option}' --ooda-repeat=8",  # one string, split as a shell does
        "github-token": TOKEN,
        # The recording session's results (ignored by git, kept in the checkout) and a
        # glob that matches nothing yet, as a first run's cache would.
        "history": ".ooda/results\nnightly/*.jsonl",
    }
    state.add(7, "LGTM", user="reviewer")

    # Push 0: an edit no prompt reads touches nothing — nothing runs, the check passes
    # and the comment says so.
    write(project, "NOTES.md", "Nothing to do with prompts.\n")
    git(project, "add", "NOTES.md")
    git(project, "commit", "-q", "-m", "notes")
    (tmp_path / "run0").mkdir()
    nothing = run_action(project, inputs, env, tmp_path / "run0")
    assert not nothing.failed, nothing.log
    assert nothing.outputs["sessions"]["touched"] == "0"
    assert nothing.outputs["sessions"]["regressed"] == "false"
    [mine] = [c for c in state.on(7) if c["body"].startswith(MARKER)]
    assert "nothing was run live" in mine["body"]
    assert "0 scenario(s) touched by this change (3 untouched: replayed, not run)" in mine["body"]
    assert len((agent.parent / "starts.txt").read_text().splitlines()) == 3

    # Push 1: a harmless edit of count/numbers' private fragment.
    write(project, "prompts/count.md", "Find the numbers, all of them.\n")
    git(project, "commit", "-q", "-am", "count: all of them")
    (tmp_path / "run1").mkdir()
    first = run_action(project, inputs, env, tmp_path / "run1")
    assert not first.failed, first.log
    assert first.outputs["sessions"]["touched"] == "1"
    assert first.outputs["sessions"]["regressed"] == "false"
    # Exactly the touched scenario ran live: 8 runs on each side.
    assert len((agent.parent / "starts.txt").read_text().splitlines()) == 3 + 16
    [mine] = [c for c in state.on(7) if c["body"].startswith(MARKER)]
    assert "count/numbers" in mine["body"]
    assert "greet/hello" not in mine["body"]
    assert "- touched: observe[0] prompts/count.md" in mine["body"]
    assert "1 scenario(s) touched by this change (2 untouched: replayed, not run)" in mine["body"]
    assert f"[HTML report]({ARTIFACT_URL})" in mine["body"]
    # The history: the recording session and the base session, one run and eight.
    assert "history (2 session(s) on the base side): stable-pass: 100% (9/9" in mine["body"]
    assert "history: nothing at nightly/*.jsonl" in first.log
    assert first.outputs["comment"]["comment-url"] == mine["html_url"]
    assert ("upload", "success") in first.steps

    # Push 2: the edit breaks the scenario; the same comment says so, the check fails.
    write(project, "prompts/count.md", "Find the odd numbers.\n")
    git(project, "commit", "-q", "-am", "count: odd ones")
    state.requests.clear()
    (tmp_path / "run2").mkdir()
    second = run_action(project, inputs, env, tmp_path / "run2")
    assert second.failed
    assert second.steps[-1] == ("step-4", "failure")
    assert second.outputs["sessions"]["regressed"] == "true"
    [again] = [c for c in state.on(7) if c["body"].startswith(MARKER)]
    assert again["id"] == mine["id"]
    assert ":x: regressed" in again["body"]
    assert "this broke: 0/8 (0%) here, and it never failed before" in again["body"]
    assert [method for method, _ in state.requests].count("PATCH") == 1
    assert "POST" not in [method for method, _ in state.requests]
    assert [c["body"] for c in state.on(7) if not c["body"].startswith(MARKER)] == ["LGTM"]


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
