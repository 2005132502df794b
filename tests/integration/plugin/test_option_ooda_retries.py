"""Retries after infrastructure errors (``retry:``, ``--ooda-retries``), with the HTTP
backend against a real local server that answers 429 with ``Retry-After``."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
import requests
from ooda_project import GREET_CONFIG

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ooda_project import Project


# The inner sessions run in this process: requests must be imported before them, or each
# would import its own copy, and the second's session objects trip over the first's.
assert requests.Session


class _Api:
    """A Messages API that answers the first ``limited`` requests 429 (Retry-After: 1),
    then succeeds; it keeps the time of every request."""

    def __init__(self, limited: int) -> None:
        self.limited = limited
        self.times: list[float] = []


@pytest.fixture
def api() -> Iterator[tuple[_Api, str]]:
    state = _Api(limited=0)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.times.append(time.monotonic())
            if len(state.times) <= state.limited:
                body = b'{"type": "error", "error": {"type": "rate_limit_error"}}'
                self.send_response(429)
                self.send_header("Retry-After", "1")
            else:
                reply: dict[str, Any] = {
                    "content": [{"type": "text", "text": "Hi. <promise>SUCCESS</promise>"}],
                    "usage": {"input_tokens": 10, "output_tokens": 2},
                }
                body = json.dumps(reply).encode()
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _project(project: Project, url: str, monkeypatch: pytest.MonkeyPatch, retry: str) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    project.write(
        "ooda-config.yml",
        f"loop:\n  ai_api:\n    provider: anthropic\n    model: m\n    base_url: {url}\n"
        + GREET_CONFIG,
    )
    project.scenario(
        "s",
        f"procedure: greet\nmax_iterations: 1\n{retry}expect: {{status: success}}\n"
        "iterations: []\n",
    )


def _record(project: Project) -> dict[str, Any]:
    [path] = (project.path / ".ooda/results").glob("*.jsonl")
    [line] = path.read_text().splitlines()
    result: dict[str, Any] = json.loads(line)
    return result


def test_a_429_is_retried_after_its_retry_after(
    project: Project, api: tuple[_Api, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = api
    state.limited = 1
    # A short back-off: only Retry-After can explain a wait of a second.
    _project(project, url, monkeypatch, "retry: {attempts: 2, delay: 0.01}\n")
    result = project.run("-m", "live")
    result.assert_outcomes(passed=1, deselected=7)
    assert len(state.times) == 2
    assert state.times[1] - state.times[0] >= 1.0
    record = _record(project)
    assert (record["outcome"], record["retries"]) == ("success", 1)
    assert record["iterations"][0]["retries"] == 1
    result.stdout.fnmatch_lines(["ooda: greet/s: success status=success iterations=1 * retries=1"])


def test_retries_used_up_make_the_run_an_error(
    project: Project, api: tuple[_Api, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = api
    state.limited = 100
    _project(project, url, monkeypatch, "retry: {attempts: 5, delay: 0.01}\n")
    # The command line beats the scenario: one retry, not five.
    result = project.run("-m", "live", "--ooda-retries", "1")
    result.assert_outcomes(failed=1, deselected=7)
    assert len(state.times) == 2
    record = _record(project)
    assert record["outcome"] == "error"
    assert record["error_reason"].startswith("rate-limit: HTTP 429 Too Many Requests")
    assert record["retries"] == 1
    result.stdout.fnmatch_lines(["*infrastructure error, not the procedure's fault*"])
