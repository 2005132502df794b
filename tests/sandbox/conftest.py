"""Fixtures for the sandbox end-to-end tests: a pytester project (as the plugin's
integration tests write it), with the environment kept out of the inner sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest
from claude_mock import ANSWER_USAGE, MOCK, AgentMock, require_claude
from ooda_project import Project, greet_project

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    return greet_project(pytester, monkeypatch)


@pytest.fixture
def claude_mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., AgentMock]]:
    """``claude_mock(sessions)`` starts the shared agent mock (as tests/agents does) for
    the real Claude Code CLI; stopped when the test ends."""
    require_claude()
    if not MOCK.is_file():
        pytest.fail(f"missing {MOCK}: the tests expect ../shared beside the checkout")
    started: list[subprocess.Popen[bytes]] = []

    def start(sessions: list[Any]) -> AgentMock:
        directory = tmp_path_factory.mktemp("agent-mock")
        scenario = directory / "scenario.json"
        scenario.write_text(json.dumps({"sessions": sessions, "usage": ANSWER_USAGE}))
        port_file = directory / "port"
        process = subprocess.Popen(
            [sys.executable, str(MOCK), "--scenario", str(scenario), "--port", "0",
             "--port-file", str(port_file), "--log", str(directory / "requests.jsonl"),
             "--watch-pid", str(os.getpid()), "--max-seconds", "600"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        started.append(process)
        deadline = time.monotonic() + 15
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the agent mock did not start")
            time.sleep(0.02)
        return AgentMock(int(port_file.read_text()), directory, process)

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=10)
