"""Reading what agent CLIs report about a run, beyond its text: Claude Code's
``--output-format json`` and ``stream-json --verbose``, and Codex's ``exec --json``.

Each format becomes an :class:`AgentReport`: the final text (what signal detection
reads, exactly as plain output), token usage, cost, turns, duration, the tool calls
(name, a short summary of the input, whether it failed) and the permission denials.
Output that is not what the format promises — a line that is not JSON, a stream cut
off before its result — yields a report with ``error`` saying so, never an exception.

This module only parses; wiring it into the command backend, the loop's results,
recordings and budgets is the agent-CLI issue's remaining work (see docs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from pytest_ooda._types import AI_OUTPUTS, AiOutput
from pytest_ooda.backends import ToolCall

__all__ = [
    "AI_OUTPUTS",
    "AgentReport",
    "AiOutput",
    "ClaudeStream",
    "ToolCall",
    "parse",
    "parse_claude_json",
    "parse_codex_json",
]

_SUMMARY_WIDTH = 120


@dataclass(frozen=True)
class AgentReport:
    """What an agent CLI reported about one invocation."""

    text: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cost_usd: float | None = None
    turns: int | None = None
    duration_ms: int | None = None
    model: str | None = None
    is_error: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    permission_denials: tuple[ToolCall, ...] = ()
    #: Why the output could not be read as the format promises (``None`` when it could).
    error: str | None = None


def summarize(name: str, arguments: Any) -> str:
    """A tool call's input in one short line: the command, the file, or the first
    scalar argument."""
    if not isinstance(arguments, dict):
        text = "" if arguments is None else str(arguments)
    else:
        for key in ("command", "file_path", "notebook_path", "path", "pattern", "url", "query"):
            value = arguments.get(key)
            if isinstance(value, str) and value:
                text = value
                break
        else:
            text = next((str(v) for v in arguments.values() if isinstance(v, str | int)), "")
    text = " ".join(text.split())
    return text if len(text) <= _SUMMARY_WIDTH else text[: _SUMMARY_WIDTH - 1] + "…"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _claude_result(event: dict[str, Any]) -> dict[str, Any]:
    """The report fields of a Claude Code ``result`` event."""
    usage = _mapping(event.get("usage"))
    denials = tuple(
        ToolCall(
            str(item.get("tool_name", "?")),
            summarize(str(item.get("tool_name", "")), item.get("tool_input")),
            ok=False,
            error="permission denied",
            id=item.get("tool_use_id"),
        )
        for item in event.get("permission_denials") or ()
        if isinstance(item, dict)
    )
    cost = event.get("total_cost_usd")
    model_usage = event.get("modelUsage")
    return {
        "text": event.get("result") if isinstance(event.get("result"), str) else "",
        "input_tokens": _int(usage.get("input_tokens")),
        "output_tokens": _int(usage.get("output_tokens")),
        "cache_read_tokens": _int(usage.get("cache_read_input_tokens")),
        "cache_creation_tokens": _int(usage.get("cache_creation_input_tokens")),
        "cost_usd": float(cost) if isinstance(cost, int | float) else None,
        "turns": _int(event.get("num_turns")),
        "duration_ms": _int(event.get("duration_ms")),
        "model": next(iter(model_usage), None) if isinstance(model_usage, dict) else None,
        "is_error": bool(event.get("is_error")),
        "permission_denials": denials,
    }


def parse_claude_json(text: str) -> AgentReport:
    """``claude -p --output-format json``: one ``result`` object."""
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        return AgentReport(text=text, error=f"claude-json: not JSON ({exc.msg} at {exc.pos})")
    if not isinstance(event, dict) or event.get("type") != "result":
        return AgentReport(text=text, error="claude-json: no result object in the output")
    return AgentReport(**_claude_result(event))


class ClaudeStream:
    """``claude -p --output-format stream-json --verbose``, read line by line as it
    arrives: :meth:`feed` returns a readable line for a person watching (assistant
    text, ``→ Bash: pytest -q``, ``✗ Write: denied``) and :meth:`report` the result."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCall] = {}
        self._order: list[str] = []
        self._texts: list[str] = []
        self._result: dict[str, Any] | None = None
        self._model: str | None = None
        self._error: str | None = None
        self._line = 0

    def feed(self, line: str) -> str | None:
        self._line += 1
        if not line.strip():
            return None
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            if self._error is None:
                self._error = f"claude-stream-json: line {self._line} is not JSON ({exc.msg})"
            return line.rstrip("\n")
        if not isinstance(event, dict):
            return None
        kind = event.get("type")
        if kind == "system" and isinstance(event.get("model"), str):
            self._model = event["model"]
        elif kind == "assistant":
            return self._assistant(event)
        elif kind == "user":
            return self._tool_results(event)
        elif kind == "result":
            self._result = _claude_result(event)
        return None

    def _assistant(self, event: dict[str, Any]) -> str | None:
        message = _mapping(event.get("message"))
        shown: list[str] = []
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self._texts.append(block["text"])
                shown.append(block["text"])
            elif block.get("type") == "tool_use":
                call_id = str(block.get("id", len(self._order)))
                name = str(block.get("name", "?"))
                call = ToolCall(name, summarize(name, block.get("input")), id=call_id)
                self._calls[call_id] = call
                self._order.append(call_id)
                shown.append(f"→ {name}: {call.summary}" if call.summary else f"→ {name}")
        return "\n".join(shown) or None

    def _tool_results(self, event: dict[str, Any]) -> str | None:
        message = _mapping(event.get("message"))
        shown: list[str] = []
        for block in message.get("content") or ():
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call = self._calls.get(str(block.get("tool_use_id")))
            if call is None:
                continue
            failed = bool(block.get("is_error"))
            content = block.get("content")
            detail = content if isinstance(content, str) else ""
            self._calls[call.id or ""] = replace(
                call, ok=not failed, error=" ".join(detail.split())[:200] if failed else None
            )
            if failed:
                shown.append(f"✗ {call.name}: {' '.join(detail.split())[:_SUMMARY_WIDTH]}")
        return "\n".join(shown) or None

    def report(self) -> AgentReport:
        calls = tuple(self._calls[call_id] for call_id in self._order)
        if self._result is None:
            error = self._error or (
                "claude-stream-json: the stream ended without a result event "
                "(the CLI stopped mid-run)"
            )
            return AgentReport(
                text="\n".join(self._texts), model=self._model, tool_calls=calls, error=error
            )
        fields = {**self._result, "tool_calls": calls, "error": self._error}
        fields["model"] = fields["model"] or self._model
        return AgentReport(**fields)


def parse_codex_json(text: str) -> AgentReport:
    """``codex exec --json``: JSON lines of thread, turn and item events."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    turns = 0
    error: str | None = None
    completed = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            error = error or f"codex-json: line {number} is not JSON ({exc.msg})"
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "turn.completed":
            turns += 1
            completed = True
            for key in usage:
                usage[key] += _int((event.get("usage") or {}).get(key)) or 0
        elif kind in ("turn.failed", "error"):
            detail = event.get("error") if kind == "turn.failed" else event
            message = detail.get("message") if isinstance(detail, dict) else None
            error = f"codex-json: {message or kind}"
        elif kind == "item.completed":
            found = _codex_item(_mapping(event.get("item")))
            if isinstance(found, str):
                texts.append(found)
            elif found is not None:
                calls.append(found)
    if not completed and error is None:
        error = "codex-json: no turn.completed event (the CLI stopped mid-run)"
    return AgentReport(
        text="\n".join(texts),
        input_tokens=usage["input_tokens"] if completed else None,
        output_tokens=usage["output_tokens"] if completed else None,
        cache_read_tokens=usage["cached_input_tokens"] if completed else None,
        turns=turns if completed else None,
        tool_calls=tuple(calls),
        error=error,
    )


def _codex_item(item: dict[str, Any]) -> ToolCall | str | None:
    """A completed Codex item: the agent's text, a tool call, or nothing of interest."""
    item_type = item.get("type")
    failed = item.get("status") == "failed"
    if item_type == "agent_message":
        return item.get("text") if isinstance(item.get("text"), str) else None
    if item_type == "command_execution":
        code = _int(item.get("exit_code"))
        failed = failed or (code is not None and code != 0)
        summary = summarize("shell", {"command": item.get("command")})
        return ToolCall("shell", summary, ok=not failed, error=f"exit {code}" if failed else None)
    if item_type == "file_change":
        changes = [_mapping(change) for change in item.get("changes") or ()]
        paths = ", ".join(str(change.get("path", "")) for change in changes)
        return ToolCall("file_change", paths[:_SUMMARY_WIDTH], ok=not failed)
    if item_type == "mcp_tool_call":
        return ToolCall(f"{item.get('server', '?')}.{item.get('tool', '?')}", ok=not failed)
    if item_type == "web_search":
        return ToolCall("web_search", summarize("", {"query": item.get("query")}))
    return None


def parse(output: str, kind: AiOutput) -> AgentReport:
    """The report for a finished invocation's whole stdout in format ``kind``."""
    if kind == "claude-json":
        return parse_claude_json(output)
    if kind == "claude-stream-json":
        stream = ClaudeStream()
        for line in output.splitlines():
            stream.feed(line)
        return stream.report()
    if kind == "codex-json":
        return parse_codex_json(output)
    return AgentReport(text=output)
