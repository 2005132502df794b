"""Repeated live runs with the real Claude Code CLI (driven offline by the shared agent
mock): each run in its own workspace, each logged with the files the agent wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ooda_project import Project

MOCK = Path(__file__).resolve().parents[4] / "shared" / "tools" / "agent-mock" / "agent_mock.py"
SCRIPT = {
    "after_last": "repeat_last",
    "sessions": [
        [
            {
                "text": "Writing the greeting.",
                "tool": "Write",
                "input": {"file_path": "hello.py", "content": "print('hello')\n"},
            },
            {"text": "Wrote hello.py.\n<promise>SUCCESS</promise>"},
        ]
    ],
}
CLAUDE = (
    "claude -p --no-session-persistence --permission-mode bypassPermissions "
    "--output-format stream-json --verbose"
)


@pytest.fixture
def claude_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The agent mock on a loopback port, and the environment that points the real
    ``claude`` at it (as ``shared/tools/agent-mock/README.md`` describes)."""
    assert shutil.which("claude"), (
        "the Claude Code CLI is needed (npm i -g @anthropic-ai/claude-code)"
    )
    assert MOCK.is_file(), f"the shared agent mock is missing: {MOCK}"
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    port_file = tmp_path / "port"
    log = tmp_path / "requests.jsonl"
    server = subprocess.Popen(
        [
            sys.executable,
            str(MOCK),
            "--scenario",
            str(tmp_path / "script.json"),
            "--port",
            "0",
            "--port-file",
            str(port_file),
            "--log",
            str(log),
            "--watch-pid",
            str(os.getpid()),
            "--max-seconds",
            "300",
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text().strip()):
            assert server.poll() is None, "the agent mock exited"
            assert time.monotonic() < deadline, "the agent mock did not start"
            time.sleep(0.05)
        home = tmp_path / "home"
        (home / ".claude").mkdir(parents=True)
        for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
        monkeypatch.setenv(
            "ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port_file.read_text().strip()}"
        )
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        for name in (
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_AUTOUPDATER",
            "DISABLE_TELEMETRY",
            "DISABLE_ERROR_REPORTING",
            "CLAUDE_CODE_MAX_RETRIES",
            # bypassPermissions refuses to run as root outside a sandbox
            "IS_SANDBOX",
        ):
            monkeypatch.setenv(name, "1")
        yield log
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_claude_runs_repeat_each_in_a_fresh_workspace(project: Project, claude_env: Path) -> None:
    project.scenario(
        "hello",
        "procedure: greet\nmax_iterations: 2\nrepeat: 2\n"
        "expect: {status: success, files: {hello.py: {contains: hello}}}\niterations: []\n",
    )
    result = project.run("-m", "live", "--ooda-ai-cmd", CLAUDE, "-v")
    result.assert_outcomes(passed=2, deselected=7)
    result.stdout.fnmatch_lines(
        ["*live[[]hello#1[]] PASSED*", "*live[[]hello#2[]] PASSED*"], consecutive=False
    )
    [log] = (project.path / ".ooda/results").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(record["run"] for record in records) == [1, 2]
    for record in records:
        assert record["ai_command"] == CLAUDE
        assert record["outcome"] == "success"
        # Had the runs shared a workspace, the second would have modified hello.py.
        assert record["files_changed"] == {"hello.py": "created"}
        [iteration] = record["iterations"]
        assert iteration["files"] == {"hello.py": "created"}
        assert iteration["output_tail"].rstrip().endswith("<promise>SUCCESS</promise>")
        # What the CLI reported of itself, read from its stream: the tool it called, the
        # tokens it spent, the model it used.
        assert [call["name"] for call in iteration["tool_calls"]] == ["Write"]
        assert iteration["tool_calls"][0]["ok"] is True
        assert iteration["usage"]["total_tokens"] > 0
        assert record["usage"]["total_tokens"] == iteration["usage"]["total_tokens"]
        assert record["model"]
    # One CLI session per run reached the mock.
    sessions = {
        entry["session"]
        for entry in map(json.loads, claude_env.read_text().splitlines())
        if entry.get("kind") == "main"
    }
    assert len(sessions) == 2
