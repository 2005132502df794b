"""The shared fixture of the real-CLI tests: ``agent_mock(sessions)`` starts a fresh agent
mock on 127.0.0.1 (port 0) for one test; ``mock.use(monkeypatch)`` points every
``claude`` the test starts at it (the environment the mock's README gives)."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from claude_mock import MOCK, AgentMock, require_claude, start_agent_mock

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

    def start(sessions: list[Any], *, dump: bool = False, **top: Any) -> AgentMock:
        mock = start_agent_mock(tmp_path_factory.mktemp("agent-mock"), sessions, dump=dump, **top)
        started.append(mock.process)
        return mock

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
