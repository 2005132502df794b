"""The action's comment step against a stand-in of the GitHub REST API on 127.0.0.1:
the first push creates the comment, the next edits that same comment (found by its
hidden marker, past a page of other comments), nobody else's comment is touched."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from sample_records import sample, write

from .github_standin import TOKEN, GitHubStandIn, serve
from .runner import ROOT

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

MARKER = "<!-- pytest-ooda:pr-comment -->"


@pytest.fixture
def github() -> Iterator[tuple[GitHubStandIn, str]]:
    state = GitHubStandIn()
    server, url = serve(state)
    yield state, url
    server.shutdown()
    server.server_close()


def comment(out: Path, github: tuple[GitHubStandIn, str], tmp_path: Path, url: str = "") -> str:
    state, api = github
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    outputs = tmp_path / "outputs.txt"
    outputs.write_text("")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "action/ooda_pr.py"),
            "comment",
            "--out",
            str(out),
            "--report-url",
            url,
        ],
        env={
            "PATH": "/usr/bin:/bin",
            "GITHUB_API_URL": api,
            "GITHUB_REPOSITORY": state.repository,
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_OUTPUT": str(outputs),
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return outputs.read_text()


def test_one_comment_made_then_edited(github: tuple[GitHubStandIn, str], tmp_path: Path) -> None:
    state, _ = github
    state.add(7, "LGTM", user="reviewer")
    for _ in range(120):
        state.add(7, "noise from another bot")
    out = tmp_path / "ooda"
    write(out / "base/s.jsonl", sample(10, 10, session="b"))
    write(out / "new/s.jsonl", sample(9, 10, session="n", prompt="q" * 64))
    first = comment(out, github, tmp_path, url="https://ci.example/artifact/1")
    mine = [c for c in state.on(7) if c["body"].startswith(MARKER)]
    assert len(mine) == 1
    assert "[HTML report](https://ci.example/artifact/1)" in mine[0]["body"]
    assert f"comment-url={mine[0]['html_url']}" in first
    assert ("POST", f"/repos/{state.repository}/issues/7/comments") in state.requests
    # The second push: a new measurement; the same comment is edited.
    write(out / "new/s.jsonl", sample(2, 10, session="n2", prompt="r" * 64))
    state.requests.clear()
    second = comment(out, github, tmp_path, url="https://ci.example/artifact/2")
    again = [c for c in state.on(7) if c["body"].startswith(MARKER)]
    assert [c["id"] for c in again] == [mine[0]["id"]]
    assert ":x: regressed" in again[0]["body"]
    assert "artifact/2" in again[0]["body"]
    methods = [method for method, _ in state.requests]
    assert methods.count("PATCH") == 1
    assert "POST" not in methods
    # It read past the first page of 100 comments to find its own.
    assert any("page=2" in path for _, path in state.requests)
    assert f"comment-url={mine[0]['html_url']}" in second
    others = [c for c in state.on(7) if not c["body"].startswith(MARKER)]
    assert len(others) == 121
    assert others[0]["body"] == "LGTM"


def test_the_comment_step_keeps_the_history_sessions_found(
    github: tuple[GitHubStandIn, str], tmp_path: Path
) -> None:
    # `sessions` wrote history.json (what --history matched); the comment step renders the
    # Markdown again with the report's link, and the history must still be there.
    state, _ = github
    out = tmp_path / "ooda"
    older = write(tmp_path / "older/s.jsonl", sample(20, 20, session="o", finished_at="2025-01"))
    write(out / "base/s.jsonl", sample(10, 10, session="b", finished_at="2025-02"))
    write(out / "new/s.jsonl", sample(6, 10, session="n", prompt="q" * 64))
    (out / "history.json").write_text(json.dumps([str(older)]))
    comment(out, github, tmp_path, url="https://ci.example/artifact/3")
    [mine] = [c for c in state.on(7) if c["body"].startswith(MARKER)]
    assert "history (2 session(s) on the base side): stable-pass: 100% (30/30" in mine["body"]
    assert "this broke: 6/10 (60%) here, and it never failed before" in mine["body"]


def test_history_globs_that_match_nothing_are_said_and_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("results/s1.jsonl", "results/s2.jsonl", "nightly/a b/s3.jsonl"):
        write(tmp_path / name, sample(1, 1))
    spec = importlib.util.spec_from_file_location("ooda_pr", ROOT / "action/ooda_pr.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = module.history_paths("results/*.jsonl\n'nightly/a b'\ncache/none", cwd=tmp_path)
    assert found == [
        str(tmp_path / "results/s1.jsonl"),
        str(tmp_path / "results/s2.jsonl"),
        str(tmp_path / "nightly/a b"),
    ]
    assert "history: nothing at cache/none" in capsys.readouterr().err


def test_a_refused_token_fails_the_step(github: tuple[GitHubStandIn, str], tmp_path: Path) -> None:
    state, api = github
    out = tmp_path / "ooda"
    write(out / "base/s.jsonl", sample(1, 1))
    write(out / "new/s.jsonl", sample(1, 1))
    (out / "comment.md").write_text(MARKER + "\nhello\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    done = subprocess.run(
        [sys.executable, str(ROOT / "action/ooda_pr.py"), "comment", "--out", str(out)],
        env={
            "PATH": "/usr/bin:/bin",
            "GITHUB_API_URL": api,
            "GITHUB_REPOSITORY": state.repository,
            "GITHUB_TOKEN": "wrong",
            "GITHUB_EVENT_PATH": str(event),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "HTTP 401" in done.stderr
    assert "Bad credentials" in done.stderr
    assert state.on(7) == []
