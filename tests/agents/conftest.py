"""The shared fixture of the real-CLI tests: ``agent_mock(sessions)`` starts a fresh agent
mock on 127.0.0.1 (port 0) for one test; ``mock.use(monkeypatch)`` points every
``claude`` the test starts at it (the environment the mock's README gives)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest
from claude_mock import ANSWER_USAGE, MOCK, AgentMock, require_claude

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@pytest.fixture
def agent_mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., AgentMock]]:
    """``agent_mock(sessions, **top_level)`` starts a mock serving ``sessions`` (see the
    mock's README); every answer reports ``ANSWER_USAGE`` unless the scenario says."""
    require_claude()
    if not MOCK.is_file():
        pytest.fail(f"missing {MOCK}: the tests expect ../shared beside the checkout")
    started: list[subprocess.Popen[bytes]] = []

    def start(sessions: list[Any], **top: Any) -> AgentMock:
        directory = tmp_path_factory.mktemp("agent-mock")
        scenario = directory / "scenario.json"
        top.setdefault("usage", ANSWER_USAGE)
        scenario.write_text(json.dumps({"sessions": sessions, **top}), encoding="utf-8")
        port_file = directory / "port"
        with open(directory / "server.err", "wb") as err:
            process = subprocess.Popen(
                [sys.executable, str(MOCK), "--scenario", str(scenario), "--port", "0",
                 "--port-file", str(port_file), "--log", str(directory / "requests.jsonl"),
                 "--watch-pid", str(os.getpid()), "--max-seconds", "600"],
                stdout=subprocess.DEVNULL,
                stderr=err,
            )  # fmt: skip
        started.append(process)
        deadline = time.monotonic() + 15
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    "the agent mock did not start: "
                    + (directory / "server.err").read_text(errors="replace")
                )
            time.sleep(0.02)
        return AgentMock(int(port_file.read_text()), directory, process)

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
