"""The HTTP backend against ``responses`` stubs of both wire formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
import responses

from pytest_ooda.backends import Backend, BackendResult, Usage
from pytest_ooda.backends.http import HttpBackend
from pytest_ooda.errors import BackendError

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
OPENAI_URL = "https://api.openai.com/v1/chat/completions"
ENV = {"ANTHROPIC_API_KEY": "ak-test", "OPENAI_API_KEY": "ok-test", "MY_KEY": "mine"}


def anthropic(**kwargs: Any) -> HttpBackend:
    return HttpBackend(provider="anthropic", model="claude-test", env=ENV, **kwargs)


def openai(**kwargs: Any) -> HttpBackend:
    return HttpBackend(provider="openai", model="gpt-test", env=ENV, **kwargs)


def call(
    backend: HttpBackend,
    prompt: str = "do it",
    *,
    timeout: float | None = None,
    max_output: int = 1 << 20,
) -> BackendResult:
    return backend.run(
        prompt, iteration=1, workdir=Path("."), timeout=timeout, max_output=max_output, stream=None
    )


def anthropic_reply(text: str, tokens_in: int = 10, tokens_out: int = 5) -> dict[str, object]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    }


def openai_reply(text: str, tokens_in: int = 7, tokens_out: int = 3) -> dict[str, object]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out},
    }


def test_satisfies_protocol() -> None:
    assert isinstance(anthropic(), Backend)


@responses.activate
def test_anthropic_success_request_and_usage() -> None:
    reply = anthropic_reply("done\n<promise>SUCCESS</promise>", 1200, 300)
    responses.post(ANTHROPIC_URL, json=reply)
    backend = anthropic(max_tokens=99, price_input_per_mtok=3.0, price_output_per_mtok=15.0)
    result = call(backend, "the prompt")
    assert result.exit_code == 0
    assert result.output == "done\n<promise>SUCCESS</promise>"
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (1200, 300)
    assert result.usage.cost == pytest.approx(1200 * 3 / 1e6 + 300 * 15 / 1e6)
    sent = responses.calls[0].request
    assert sent.headers["x-api-key"] == "ak-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body is not None
    assert json.loads(sent.body) == {
        "model": "claude-test",
        "max_tokens": 99,
        "messages": [{"role": "user", "content": "the prompt"}],
    }


@responses.activate
def test_openai_success_custom_base_url_and_key_env() -> None:
    url = "http://localhost:8080/v1/chat/completions"
    responses.post(url, json=openai_reply("hello"))
    backend = openai(base_url="http://localhost:8080/v1/", api_key_env="MY_KEY")
    result = call(backend)
    assert result.output == "hello"
    assert result.usage == Usage(7, 3, None)
    assert responses.calls[0].request.headers["Authorization"] == "Bearer mine"


@pytest.mark.parametrize("status", [429, 500])
@responses.activate
def test_http_error_is_a_failed_iteration_with_status_and_body(status: int) -> None:
    responses.post(ANTHROPIC_URL, status=status, json={"error": {"message": "slow down please"}})
    result = call(anthropic())
    assert result.exit_code != 0
    assert result.usage is None
    assert result.error is not None
    assert result.error.startswith(f"HTTP {status}")
    assert "slow down please" in result.error


@responses.activate
def test_long_error_body_is_excerpted() -> None:
    responses.post(OPENAI_URL, status=500, body="E" * 5000)
    result = call(openai())
    assert result.error is not None
    assert len(result.error) < 700
    assert result.error.endswith("…")


@responses.activate
def test_timeout_is_a_timed_out_iteration() -> None:
    responses.post(ANTHROPIC_URL, body=requests.exceptions.ReadTimeout("read timed out"))
    result = call(anthropic(timeout=30.0), timeout=2.0)
    assert result.timed_out
    assert result.exit_code != 0
    assert result.error == f"request to {ANTHROPIC_URL} timed out after 2s"


@responses.activate
def test_connection_error_is_a_failed_iteration() -> None:
    responses.post(ANTHROPIC_URL, body=requests.exceptions.ConnectionError("refused"))
    result = call(anthropic())
    assert result.exit_code == 1
    assert result.error is not None
    assert "refused" in result.error


@responses.activate
def test_malformed_success_body_is_a_failure() -> None:
    responses.post(OPENAI_URL, json={"choices": []})
    result = call(openai())
    assert result.exit_code == 1
    assert result.error is not None
    assert result.error.startswith("unexpected response")


@responses.activate
def test_usage_accumulates_over_requests() -> None:
    responses.post(OPENAI_URL, json=openai_reply("a", 100, 10))
    responses.post(OPENAI_URL, json=openai_reply("b", 50, 20))
    backend = openai(price_input_per_mtok=1.0)
    first, second = call(backend), call(backend)
    assert first.output == "a"
    assert second.output == "b"
    assert first.usage is not None
    assert second.usage is not None
    total = first.usage + second.usage
    assert (total.input_tokens, total.output_tokens) == (150, 30)
    assert total.cost == pytest.approx(150 / 1e6)


@responses.activate
def test_reply_longer_than_buffer_keeps_tail() -> None:
    responses.post(ANTHROPIC_URL, json=anthropic_reply("x" * 100 + "END"))
    result = call(anthropic(), max_output=10)
    assert result.output == "xxxxxxxEND"
    assert result.truncated
    assert result.dropped_bytes == 93


def test_missing_api_key_is_a_backend_error() -> None:
    backend = HttpBackend(provider="anthropic", model="m", env={})
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):
        call(backend)


def test_unknown_provider_rejected() -> None:
    with pytest.raises(BackendError, match="expected one of: anthropic, openai"):
        HttpBackend(provider="gemini", model="m")


def test_refused_connection_error_is_short_and_names_the_cause() -> None:
    # A real socket to a port nothing listens on: urllib3's message nests three reprs.
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = call(openai(base_url=f"http://127.0.0.1:{port}/v1"), timeout=5)
    assert result.exit_code == 1
    assert result.error == (
        f"request to http://127.0.0.1:{port}/v1/chat/completions failed: Connection refused"
    )


@pytest.mark.parametrize(
    "base_url",
    ["https://gateway.example/anthropic", "https://gateway.example/anthropic/v1/"],
)
def test_anthropic_base_url_with_or_without_v1(base_url: str) -> None:
    backend = anthropic(base_url=base_url)
    assert backend.url == "https://gateway.example/anthropic/v1/messages"


@responses.activate
def test_not_found_points_at_the_base_url() -> None:
    url = "http://localhost:8000/chat/completions"
    responses.post(url, status=404, body="Not Found")
    result = call(openai(base_url="http://localhost:8000"))
    assert result.exit_code == 1
    assert result.error == (
        f"HTTP 404 Not Found: Not Found (requested {url}; check ai_api.base_url)"
    )
