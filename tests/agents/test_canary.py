"""The upgrade canary with two real Claude Code versions: a scenario recorded live with
the pinned CLI (2.1.197) through the offline agent mock, its cassette replayed offline by
``ooda canary`` through the pinned CLI and the newest one on npm (installed at test time,
once per session): what the new one sends otherwise — its system prompt, tool list,
headers and fields, by diff — and whether its replay still passes."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from claude_mock import CLAUDE, require_claude
from external_tools import NODE_INSTALL, require
from ooda_project import greet_project

from tests.unit.apireplay.helpers import Gone

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from claude_mock import AgentMock

#: Writes a script, runs it, says SUCCESS: three answers, two tool calls.
STEPS: list[dict[str, Any]] = [
    {"text": "Writing the script.", "tool": "Write",
     "input": {"file_path": "hello.sh", "content": "echo hello from the canary\n"}},
    {"tool": "Bash", "input": {"command": "sh hello.sh > ran.txt", "description": "Run it"}},
    {"text": "Done.\n<promise>SUCCESS</promise>"},
]  # fmt: skip
SCENARIO = (
    "procedure: greet\nmax_iterations: 1\n"
    "expect:\n  status: success\n"
    "  files: {ran.txt: {contains: hello from the canary}}\n"
    "  tools: {called: [Write, Bash]}\n"
    "iterations: []\n"
)

# The newest Claude Code on npm, installed at test time into a temporary prefix once per
# test session (every pytest-xdist worker shares it); when the newest is the pinned one,
# the newest other version.
PACKAGE = "@anthropic-ai/claude-code"


def _npm(*args: str) -> str:
    done = subprocess.run(["npm", *args], capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        pytest.fail(f"npm {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def other_version(pinned: str) -> str:
    """The newest version on npm, or the newest other than ``pinned`` when it is that."""
    newest = _npm("view", PACKAGE, "version").strip()
    if newest != pinned:
        return newest
    versions = json.loads(_npm("view", PACKAGE, "versions", "--json"))
    return next(version for version in reversed(versions) if version != pinned)


def install_other_claude(shared: Path, pinned: str) -> Path:
    """The ``claude`` executable of the other version, installed under ``shared`` (once:
    a lock holds back the other workers until it is there)."""
    require(shutil.which("npm") is not None, "npm", NODE_INSTALL)
    shared.mkdir(parents=True, exist_ok=True)
    with (shared / "install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "installed.json"
        if done.is_file():
            return shared / json.loads(done.read_text())["claude"]
        version = other_version(pinned)
        prefix = shared / version
        _npm("install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             f"{PACKAGE}@{version}")  # fmt: skip
        claude = prefix / "node_modules" / ".bin" / "claude"
        if not claude.exists():
            pytest.fail(f"npm installed {PACKAGE}@{version} without a claude executable")
        done.write_text(json.dumps({"claude": str(claude.relative_to(shared))}))
        return claude


def _pinned_version() -> str:
    done = subprocess.run(
        [require_claude(), "--version"], capture_output=True, text=True, check=True
    )
    return done.stdout.split()[0]


@pytest.fixture(scope="session")
def other_claude(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The newest other Claude Code, shared by the session's xdist workers."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return install_other_claude(shared / "other-claude", _pinned_version())


def _canary(project_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "canary", *args],
        cwd=project_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_canary_replays_a_cassette_through_the_newest_claude_code(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    agent_mock: Callable[..., AgentMock],
    other_claude: Path,
) -> None:
    project = greet_project(pytester, monkeypatch)
    mock = agent_mock([STEPS])
    mock.use(monkeypatch)
    scenario = project.scenario("canary", SCENARIO)
    recorded = project.run(
        "-m", "live", "-k", "canary", f"--ooda-ai-cmd={CLAUDE}", "--ooda-record-mode=once",
        "--ooda-record-api",
    )  # fmt: skip
    recorded.assert_outcomes(passed=1, deselected=7)
    cassette = scenario.with_name("canary.cassette.jsonl")
    assert cassette.is_file()
    mock.process.terminate()
    mock.process.wait(timeout=10)
    # Offline: the mock is gone, its address a port that answers nothing, no key.
    gone = Gone()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gone.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    pinned = _pinned_version()
    try:
        done = _canary(project.path, "--pinned-cmd", CLAUDE, "--agent-cmd", str(other_claude))
    finally:
        gone.close()
    assert gone.connections == 0
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    new = re.search(r"^  new:    (\S+) .*\((\S+) \(Claude Code\)\)", out, re.MULTILINE)
    assert new is not None, out
    assert new.group(1) == str(other_claude)
    assert new.group(2) != pinned
    # The pinned CLI sends exactly what was recorded; the new one gets the nearest answers.
    assert re.search(rf"^  pinned: .*\({re.escape(pinned)} \(Claude Code\)\): (\d+) of \1 "
                     r"request\(s\) as recorded; passes$", out, re.MULTILINE), out  # fmt: skip
    assert re.search(r"^  new:    .*: \d+ of \d+ request\(s\) as recorded; passes$", out,
                     re.MULTILINE), out  # fmt: skip
    # What it sends otherwise, by diff: the version in its user agent, its tools, its prompt.
    assert "  what it sends otherwise:" in out
    assert re.search(
        rf"^      user-agent: claude-cli/{re.escape(pinned)} .* -> claude-cli/{new.group(2)} ",
        out,
        re.MULTILINE,
    ), out
    removed = r"^    system prompt: \d+ line\(s\) removed, \d+ added$"
    assert re.search(removed, out, re.MULTILINE), out
    assert re.search(r"^    tools: ", out, re.MULTILINE), out
    assert "  safe to unpin (what it sends changed: re-record the cassette with it)" in out
    assert out.rstrip().endswith(
        f"1 of 1 scenario(s) safe to unpin with {other_claude} " + (CLAUDE.split(" ", 1)[1])
    )
