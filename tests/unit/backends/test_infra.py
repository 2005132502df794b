"""Telling the infrastructure's faults from the procedure's, per backend and format."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest
import responses

from pytest_ooda.agents import message_fault
from pytest_ooda.agents.claude_code import api_error_fault
from pytest_ooda.backends.agent_output import backend_result, parse
from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.backends.http import HttpBackend
from pytest_ooda.backends.infra import parse_retry_after


def api_error_text(text: str) -> str | None:
    fault = api_error_fault(text)
    return fault.reason if fault is not None else None


if TYPE_CHECKING:
    from pathlib import Path

CLAUDE_529 = {
    "type": "result",
    "subtype": "success",
    "is_error": True,
    "api_error_status": 529,
    "num_turns": 1,
    "result": "API Error: 529 overloaded. This is a server-side issue, usually temporary.",
    "total_cost_usd": 0,
    "usage": {"input_tokens": 0, "output_tokens": 0},
}


@pytest.mark.parametrize(
    ("status", "kind"), [(529, "overloaded"), (429, "rate-limit"), (500, "server-error")]
)
def test_claude_result_with_an_api_error_status_is_infrastructure(status: int, kind: str) -> None:
    event = {**CLAUDE_529, "api_error_status": status}
    for output, fmt in (
        (json.dumps(event), "claude-json"),
        (
            json.dumps({"type": "system", "model": "m"}) + "\n" + json.dumps(event),
            "claude-stream-json",
        ),
    ):
        result = backend_result(parse(output, fmt), fmt, exit_code=1, max_output=10_000)  # type: ignore[arg-type]
        assert result.infra_error is not None
        assert result.infra_error.startswith(f"{kind}: API Error: 529")
        assert result.error is not None


def test_claude_error_result_of_the_procedure_is_not_infrastructure() -> None:
    event = {**CLAUDE_529, "api_error_status": None, "result": "I could not finish the task."}
    result = backend_result(
        parse(json.dumps(event), "claude-json"), "claude-json", exit_code=1, max_output=999
    )
    assert result.error is not None
    assert result.infra_error is None
    # A 400 (a bad request: the prompt is too long) is the procedure's own problem.
    event = {**CLAUDE_529, "api_error_status": 400, "result": "API Error: 400 prompt is too long"}
    result = backend_result(
        parse(json.dumps(event), "claude-json"), "claude-json", exit_code=1, max_output=999
    )
    assert result.infra_error is None


def test_claude_api_error_text() -> None:
    assert (
        api_error_text("API Error: 429 rate limited") == "rate-limit: API Error: 429 rate limited"
    )
    assert api_error_text("working\nAPI Error: Connection error.") == (
        "connection: API Error: Connection error."
    )
    assert api_error_text("API Error: 400 bad") is None
    assert api_error_text("the API Error: 529 is discussed in the docs") is None


def test_codex_error_events() -> None:
    lines = [
        {"type": "thread.started"},
        {
            "type": "error",
            "message": "stream error: exceeded retry limit, last status: 429 Too Many Requests",
        },
        {
            "type": "turn.failed",
            "error": {"message": "exceeded retry limit, last status: 429 Too Many Requests"},
        },
    ]
    report = parse("\n".join(json.dumps(line) for line in lines), "codex-json")
    assert report.infra_error is not None
    assert report.infra_error.startswith("rate-limit: ")
    result = backend_result(report, "codex-json", exit_code=1, max_output=999)
    assert result.infra_error == report.infra_error
    # A turn that completed after a transient error is fine.
    lines.insert(2, {"type": "turn.completed", "usage": {"input_tokens": 1}})
    lines.pop()
    assert parse("\n".join(json.dumps(line) for line in lines), "codex-json").infra_error is None
    assert message_fault("stream disconnected before completion") is not None
    assert message_fault("the model refused the request") is None


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "agent.py"
    path.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("ai_output", ["text", "claude-stream-json"])
def test_an_agent_that_dies_before_any_output_is_infrastructure(
    tmp_path: Path, ai_output: str
) -> None:
    backend = CommandBackend([_script(tmp_path, "sys.exit(3)")], ai_output=ai_output)  # type: ignore[arg-type]
    result = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=30, max_output=1000, stream=None
    )
    assert result.infra_error == "agent-died: exited with code 3 before any output"


def test_a_text_agent_that_fails_with_output_is_the_procedures_failure(tmp_path: Path) -> None:
    backend = CommandBackend([_script(tmp_path, "print('tests fail'); sys.exit(1)")])
    result = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=30, max_output=1000, stream=None
    )
    assert result.infra_error is None
    backend = CommandBackend([_script(tmp_path, "print('API Error: 529 overloaded'); sys.exit(1)")])
    result = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=30, max_output=1000, stream=None
    )
    assert result.infra_error == "overloaded: API Error: 529 overloaded"
    # The same words with a successful exit are only words.
    backend = CommandBackend([_script(tmp_path, "print('API Error: 529 overloaded')")])
    result = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=30, max_output=1000, stream=None
    )
    assert result.infra_error is None


@responses.activate
def test_http_statuses_and_retry_after(tmp_path: Path) -> None:
    url = "https://api.anthropic.com/v1/messages"
    responses.post(url, status=429, body="slow down", headers={"Retry-After": "12"})
    responses.post(url, status=503, body="unavailable")
    responses.post(url, status=401, body="bad key")
    backend = HttpBackend(provider="anthropic", model="m", env={"ANTHROPIC_API_KEY": "x" * 12})
    run = {"iteration": 1, "workdir": tmp_path, "timeout": None, "max_output": 999, "stream": None}
    first = backend.run("p", **run)  # type: ignore[arg-type]
    assert first.infra_error is not None
    assert first.infra_error.startswith("rate-limit: HTTP 429")
    assert first.retry_after == 12
    second = backend.run("p", **run)  # type: ignore[arg-type]
    assert second.infra_error is not None
    assert second.infra_error.startswith("overloaded: HTTP 503")
    third = backend.run("p", **run)  # type: ignore[arg-type]
    # A refused key measured nothing about the prompt: an ``auth`` error (issue 36).
    assert third.infra_error == "auth: HTTP 401 Unauthorized: bad key"
    assert third.error is not None


def test_http_connection_failure_is_infrastructure(tmp_path: Path) -> None:
    backend = HttpBackend(
        provider="openai", model="m", base_url="http://127.0.0.1:9", env={"OPENAI_API_KEY": "k" * 9}
    )
    result = backend.run("p", iteration=1, workdir=tmp_path, timeout=5, max_output=99, stream=None)
    assert result.infra_error is not None
    assert result.infra_error.startswith("connection: ")


def test_retry_after_forms() -> None:
    assert parse_retry_after("3") == 3
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("-4") == 0
