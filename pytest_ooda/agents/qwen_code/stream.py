"""Reading Qwen Code's ``--output-format stream-json`` (measured against 0.24.4): one
JSON event per line — ``system`` (``init``: the model, the tools, the version),
``assistant`` messages whose content blocks are text or ``tool_use``, ``user`` messages
carrying each ``tool_result``, ``stream_event`` (progress, ignored), then one
``result`` (success, or ``is_error`` with ``error.message``; the tokens of every turn
summed; no cost). What its error words mean is :func:`qwen_fault`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.faults import Fault, message_fault
from pytest_ooda.agents.message_stream import MessageStream
from pytest_ooda.agents.report import AgentReport
from pytest_ooda.agents.stream import DEFAULT_MAX_LINE, as_int, as_mapping
from pytest_ooda.agents.text import (
    ToolTextBudget,
    one_line,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["STREAM_JSON", "QwenStream", "qwen_fault"]

STREAM_JSON = "qwen-stream-json"
HINT = "does the command have --output-format stream-json (or -o stream-json)?"


def qwen_fault(text: str) -> Fault | None:
    """What Qwen Code's own words ``text`` say went wrong, when it is the
    infrastructure's: an API error it gave up on (``[API Error: 401 Incorrect API key
    provided…]``, a 429 after its retries), a key it does not have (``Missing API key
    for OpenAI-compatible auth``), a connection that failed; ``None`` otherwise. Its
    messages name the HTTP status or the words the generic reading knows."""
    return message_fault(text)


class QwenStream(MessageStream):
    """``qwen --output-format stream-json``: :meth:`feed` returns a readable line for a
    person watching (the assistant's text, ``→ run_shell_command: pytest -q``, ``✗
    write_file: …``) and :meth:`report` the result."""

    kind = STREAM_JSON
    flags_hint = HINT

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(max_line=max_line, budget=budget, watched=watched, redact=redact)
        self._result: dict[str, Any] | None = None
        self._model: str | None = None

    def _event(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        if kind == "system" and isinstance(event.get("model"), str):
            self._model = event["model"]
        elif kind == "assistant":
            return self._assistant(as_mapping(event.get("message")))
        elif kind == "user":
            return self._tool_results(as_mapping(event.get("message")))
        elif kind == "result":
            self._result = _result(event)
            return _closing_line(self._result)
        return None

    def _assistant(self, message: dict[str, Any]) -> str | None:
        if isinstance(message.get("model"), str):
            self._model = message["model"]
        return super()._assistant(message)

    def _text_fault(self, text: str) -> Fault | None:
        return qwen_fault(text)

    def report(self) -> AgentReport:
        calls = self._tool_calls()
        if self._result is None:
            return AgentReport(
                text="\n".join(self._texts),
                model=self._model,
                tool_calls=calls,
                error=self._error or self._missing("the stream ended without a result event"),
                infra_error=self._foreign_infra(),
                events=self._events,
            )
        fields = dict(self._result)
        return AgentReport(
            **fields, model=self._model, tool_calls=calls, error=self._error, events=self._events
        )


def _result(event: dict[str, Any]) -> dict[str, Any]:
    """The report fields of a ``result`` event: the final text (or the error's message),
    the tokens of every turn, and the fault an error names."""
    usage = as_mapping(event.get("usage"))
    failed = bool(event.get("is_error"))
    message = as_mapping(event.get("error")).get("message")
    result = event.get("result")
    text = result if isinstance(result, str) else ""
    infra = None
    if failed:
        text = text or (message if isinstance(message, str) else "the CLI reported an error")
        fault = qwen_fault(text)
        infra = fault.reason if fault is not None else None
    return {
        "text": text,
        "input_tokens": as_int(usage.get("input_tokens")),
        "output_tokens": as_int(usage.get("output_tokens")),
        "cache_read_tokens": as_int(usage.get("cache_read_input_tokens")),
        "turns": as_int(event.get("num_turns")),
        "duration_ms": as_int(event.get("duration_ms")),
        "is_error": failed,
        "infra_error": infra,
    }


def _closing_line(fields: dict[str, Any]) -> str:
    """The closing line shown live: turns and tokens, or the error."""
    if fields["is_error"]:
        return f"✗ error: {one_line(fields['text'], 300)}"
    tokens = sum(
        fields.get(key) or 0 for key in ("input_tokens", "output_tokens", "cache_read_tokens")
    )
    parts = [f"{fields['turns']} turns"] if fields.get("turns") is not None else []
    if tokens:
        parts.append(f"{tokens} tokens")
    return "✓ done" + (": " + " · ".join(parts) if parts else "")
