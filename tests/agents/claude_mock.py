"""Helpers for the real-CLI tests: ``../shared/tools/agent-mock/agent_mock.py`` (beside
the checkout, in CI too) is an offline Anthropic-API stand-in that makes the real Claude
Code CLI execute scripted tool calls; :class:`AgentMock` is one running instance (the
``agent_mock`` fixture in conftest.py starts them). Tests skip only when the ``claude``
binary is missing, and fail instead when ``CI`` is set.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from external_tools import CLAUDE_INSTALL, require

if TYPE_CHECKING:
    import subprocess

    import pytest

MOCK = Path(__file__).resolve().parents[3] / "shared" / "tools" / "agent-mock" / "agent_mock.py"
#: How the tests run Claude Code unattended: bypassPermissions (IS_SANDBOX=1 as root).
CLAUDE = (
    "claude -p --no-session-persistence --permission-mode bypassPermissions "
    "--output-format stream-json --verbose"
)
#: Per model answer, so costs are known: Opus rates ($5 in, $25 out per MTok) give
#: $0.00625 per answer.
ANSWER_USAGE = {"input_tokens": 1000, "output_tokens": 50}
ANSWER_COST = 1000 * 5e-6 + 50 * 25e-6


def require_claude() -> str:
    found = shutil.which("claude")
    require(found is not None, "the Claude Code CLI", CLAUDE_INSTALL)
    assert found is not None
    return found


@dataclass
class AgentMock:
    """One running mock: its URL, request log and the environment for ``claude``."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        home = self.directory / "home"
        (home / ".claude").mkdir(parents=True, exist_ok=True)
        env = {
            # Its own home: the CLI writes state there, never into the user's.
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "1",
        }
        if os.geteuid() == 0:
            # bypassPermissions refuses to start as root unless told it is sandboxed.
            env["IS_SANDBOX"] = "1"
        return env

    def use(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Point every ``claude`` this test starts at the mock."""
        for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL"):
            monkeypatch.delenv(name, raising=False)
        for name, value in self.env().items():
            monkeypatch.setenv(name, value)

    def requests(self) -> list[dict[str, Any]]:
        log = self.directory / "requests.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

    def bodies(self) -> list[dict[str, Any]]:
        """The raw request bodies, in order (a mock started with ``dump=True``)."""
        folder = self.directory / "bodies"
        return [json.loads(path.read_text()) for path in sorted(folder.glob("req-*.json"))]

    def sessions(self) -> list[int]:
        """The sessions (CLI invocations) the mock served main-loop answers to."""
        return sorted({r["session"] for r in self.requests() if r.get("kind") == "main"})


def start_agent_mock(
    directory: Path, sessions: list[Any], *, dump: bool = False, **top: Any
) -> AgentMock:
    """Start a mock serving ``sessions`` in ``directory`` (see the mock's README); every
    answer reports ``ANSWER_USAGE`` unless the scenario says; with ``dump`` each raw
    request body is kept (:meth:`AgentMock.bodies`). The caller stops it."""
    import subprocess
    import sys
    import time

    import pytest

    scenario = directory / "scenario.json"
    top.setdefault("usage", ANSWER_USAGE)
    scenario.write_text(json.dumps({"sessions": sessions, **top}), encoding="utf-8")
    port_file = directory / "port"
    with open(directory / "server.err", "wb") as err:
        process = subprocess.Popen(
            [sys.executable, str(MOCK), "--scenario", str(scenario), "--port", "0",
             "--port-file", str(port_file), "--log", str(directory / "requests.jsonl"),
             "--watch-pid", str(os.getpid()), "--max-seconds", "600",
             *(["--dump-dir", str(directory / "bodies")] if dump else [])],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )  # fmt: skip
    deadline = time.monotonic() + 15
    while not (port_file.exists() and port_file.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                "the agent mock did not start: "
                + (directory / "server.err").read_text(errors="replace")
            )
        time.sleep(0.02)
    return AgentMock(int(port_file.read_text()), directory, process)
