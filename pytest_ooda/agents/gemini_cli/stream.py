"""Reading Gemini CLI's machine-readable output (0.61): ``--output-format stream-json``,
one JSON event a line — ``init``, ``message`` (the user's prompt, the assistant's text
in deltas), ``tool_use`` and ``tool_result`` (each call and its outcome), ``error``
(warnings and non-fatal errors) and the closing ``result`` (``success`` or ``error``
with its message, and the token counts per model) — and ``--output-format json``, one
pretty-printed object at the end (``response``, ``stats``, or ``error``).

What its error messages mean is :func:`gemini_fault`: the CLI words an API failure as
``[API Error: …]`` (the API's JSON error body, or the message it made of it), and a
missing or refused login in words of its own. Gemini CLI reports tokens, never cost.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.faults import Fault, kind_of_status, message_fault
from pytest_ooda.agents.report import AgentReport, ToolCall
from pytest_ooda.agents.stream import DEFAULT_MAX_LINE, AgentStream, as_int, as_mapping
from pytest_ooda.agents.text import (
    ERROR_WIDTH,
    SUMMARY_WIDTH,
    ToolTextBudget,
    input_text,
    one_line,
    shown_lines,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ooda._types import InfraErrorKind

__all__ = ["JSON", "STREAM_JSON", "GeminiJsonStream", "GeminiStream", "gemini_fault"]

JSON = "gemini-json"
STREAM_JSON = "gemini-stream-json"
HINTS = {
    JSON: "does the command have --output-format json?",
    STREAM_JSON: "does the command have --output-format stream-json?",
}

#: The API's own status names (its error bodies' ``status``), by what they mean.
_STATUS_KINDS: dict[str, InfraErrorKind] = {
    "RESOURCE_EXHAUSTED": "rate-limit",
    "UNAVAILABLE": "overloaded",
    "UNAUTHENTICATED": "auth",
    "PERMISSION_DENIED": "auth",
    "INTERNAL": "server-error",
}
#: Gemini CLI's words (0.61) for a login it does not have, and the API's for a key it
#: refused; and for a quota that ran out (``RESOURCE_EXHAUSTED`` without its body).
_WORDS: tuple[tuple[re.Pattern[str], InfraErrorKind], ...] = (
    (
        re.compile(
            r"API key not valid|API_KEY_INVALID|Invalid auth method selected|"
            r"you must specify the GEMINI_API_KEY|Please set an Auth method|"
            r"When using Vertex AI, you must specify",
            re.IGNORECASE,
        ),
        "auth",
    ),
    (
        re.compile(
            r"Resource has been exhausted|exhausted your (?:daily )?quota|"
            r"exhausted your capacity|exceeded your current quota|Quota exceeded for|"
            r"request a quota increase",
            re.IGNORECASE,
        ),
        "rate-limit",
    ),
)
_API_ERROR = "[API Error: "


def _body_fault(text: str) -> Fault | None:
    """The fault an ``[API Error: {…}]`` names by the API's JSON error body (its code,
    else its status name)."""
    start = text.find(_API_ERROR)
    if start < 0 or text[start + len(_API_ERROR) : start + len(_API_ERROR) + 1] != "{":
        return None
    try:
        body, _ = json.JSONDecoder().raw_decode(text, start + len(_API_ERROR))
    except ValueError:
        return None
    error = as_mapping(as_mapping(body).get("error"))
    detail = error.get("message") if isinstance(error.get("message"), str) else text
    code = as_int(error.get("code"))
    kind = kind_of_status(code) if code is not None else None
    kind = kind or _STATUS_KINDS.get(str(error.get("status")))
    return Fault(kind, f"API Error {code or error.get('status')}: {detail}") if kind else None


def gemini_fault(text: str) -> Fault | None:
    """What Gemini CLI's own words ``text`` say went wrong, when it is the
    infrastructure's: an API error it gave up on (``[API Error: {"error": {"code":
    429, …}}]``, ``[API Error: The model is overloaded…]``), a key the API refused, a
    login it does not have (``When using Gemini API, you must specify the
    GEMINI_API_KEY environment variable``, ``Invalid auth method selected``);
    ``None`` for anything else."""
    found = _body_fault(text)
    if found is not None:
        return found
    for pattern, kind in _WORDS:
        match = pattern.search(text)
        if match is not None:
            return Fault(kind, _line_of(text, match.start()))
    return message_fault(text)


def _line_of(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end >= 0 else len(text)].strip()


def _stream_stats(stats: dict[str, Any]) -> dict[str, Any]:
    """The report fields of a stream-json ``result``'s ``stats``: tokens (``input`` is
    the prompt tokens not read from the cache), the duration, and the model that did
    most of the work (the router's small model also has a row)."""
    models = {str(name): as_mapping(row) for name, row in as_mapping(stats.get("models")).items()}
    main = max(models, key=lambda name: (as_int(models[name].get("total_tokens")) or 0, name))
    input_tokens = as_int(stats.get("input"))
    if input_tokens is None:
        input_tokens = as_int(stats.get("input_tokens"))
    return {
        "input_tokens": input_tokens,
        "output_tokens": as_int(stats.get("output_tokens")),
        "cache_read_tokens": as_int(stats.get("cached")),
        "duration_ms": as_int(stats.get("duration_ms")),
        "model": main if models else None,
    }


class GeminiStream(AgentStream):
    """``gemini --output-format stream-json``: :meth:`feed` returns a readable line for a
    person watching (the assistant's text, ``→ run_shell_command: pytest -q``, ``✗
    write_file: …``) and :meth:`report` the result."""

    kind = STREAM_JSON
    flags_hint = HINTS[STREAM_JSON]

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(max_line=max_line, budget=budget, watched=watched, redact=redact)
        self._calls: dict[str, ToolCall] = {}
        self._order: list[str] = []
        # The assistant's text arrives in deltas; the final answer is all of them.
        self._text: list[str] = []
        self._warnings: deque[str] = deque(maxlen=5)
        self._result: dict[str, Any] | None = None
        self._model: str | None = None

    def feed(self, line: str) -> str | None:
        # Every event is an object: a line opening with "[" is the CLI's own words on
        # the shared stderr ("[STARTUP] Phase … never ended", "[API Error: …]").
        stripped = line.strip()
        if stripped[:1] != "[":
            return super().feed(line)
        self._line += 1
        self._foreign.append(one_line(stripped, 300))
        return line.rstrip("\n")

    def _event(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        if kind == "init" and isinstance(event.get("model"), str):
            self._model = event["model"]
        elif kind == "message" and event.get("role") == "assistant":
            content = event.get("content")
            if isinstance(content, str) and content:
                self._text.append(content)
                # Deltas are shown as they come: a person sees the text being written.
                return content.rstrip("\n") or None
        elif kind == "tool_use":
            return self._tool_use(event)
        elif kind == "tool_result":
            return self._tool_result(event)
        elif kind == "error" and isinstance(event.get("message"), str):
            self._warnings.append(event["message"])
            return f"! {event.get('severity', 'error')}: {one_line(event['message'], 300)}"
        elif kind == "result":
            self._result = self._read_result(event)
            return self._closing_line()
        return None

    def _tool_use(self, event: dict[str, Any]) -> str | None:
        call_id = str(event.get("tool_id", len(self._order)))
        name = str(event.get("tool_name", "?"))
        parameters = event.get("parameters")
        text, arguments, kept = self.budget.input(parameters)
        source = input_text(parameters)
        call = ToolCall(
            name,
            one_line(source, SUMMARY_WIDTH),
            id=call_id,
            input=text,
            arguments=arguments,
            texts_kept=kept,
        )
        if call_id not in self._calls:
            self._order.append(call_id)
        self._calls[call_id] = call
        if not self.watched:
            return None
        return shown_lines(f"→ {name}", self._clean(source))

    def _tool_result(self, event: dict[str, Any]) -> str | None:
        call = self._calls.get(str(event.get("tool_id")))
        if call is None:
            return None
        failed = event.get("status") == "error"
        error = as_mapping(event.get("error"))
        output = event.get("output")
        detail = str(error.get("message") or "") if failed else ""
        if not detail:
            detail = output if isinstance(output, str) else ""
        kept = call.texts_kept and not self.budget.spent
        result = self.budget.result(detail, failed=failed) if detail or failed else None
        self._calls[call.id or ""] = replace(
            call,
            ok=not failed,
            error=one_line(detail, ERROR_WIDTH) if failed else None,
            result=result,
            texts_kept=kept,
        )
        if failed and self.watched:
            return shown_lines(f"✗ {call.name}", self._clean(detail or "failed"))
        return None

    def _read_result(self, event: dict[str, Any]) -> dict[str, Any]:
        fields = _stream_stats(as_mapping(event.get("stats")))
        failed = event.get("status") == "error"
        message = as_mapping(event.get("error")).get("message")
        text = "".join(self._text)
        infra = None
        if failed:
            message = message if isinstance(message, str) else "the CLI reported an error"
            text = text or message
            fault = gemini_fault(message)
            infra = fault.reason if fault is not None else None
        return {
            **fields,
            "text": text,
            "is_error": failed,
            "error_message": message if failed else None,
            "infra_error": infra,
        }

    def _closing_line(self) -> str:
        fields = self._result or {}
        if fields.get("is_error"):
            return f"✗ error: {one_line(str(fields.get('error_message') or ''), 300)}"
        tokens = sum(
            fields.get(key) or 0 for key in ("input_tokens", "output_tokens", "cache_read_tokens")
        )
        return f"✓ done: {tokens} tokens" if tokens else "✓ done"

    def _text_fault(self, text: str) -> Fault | None:
        return gemini_fault(text)

    def report(self) -> AgentReport:
        calls = tuple(self._calls[call_id] for call_id in self._order)
        if self._result is None:
            return AgentReport(
                text="".join(self._text),
                model=None,
                tool_calls=calls,
                error=self._error or self._missing("the stream ended without a result event"),
                infra_error=self._foreign_infra(),
                events=self._events,
            )
        fields = dict(self._result)
        fields.pop("error_message")
        fields["model"] = fields["model"] or self._model
        return AgentReport(**fields, tool_calls=calls, error=self._error, events=self._events)


class GeminiJsonStream(AgentStream):
    """``gemini --output-format json``: one object, pretty-printed over many lines, at
    the end of the output (``response`` and ``stats``, or ``error``); the CLI's own
    words (stderr) before it. The object's lines are gathered, within ``max_line``
    bytes, and read when its closing brace comes."""

    kind = JSON
    flags_hint = HINTS[JSON]

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(max_line=max_line, budget=budget, watched=watched, redact=redact)
        self._object: list[str] | None = None
        self._held = 0
        self._too_long = False
        self._fields: dict[str, Any] | None = None

    def feed(self, line: str) -> str | None:
        self._line += 1
        text = line.rstrip("\n")
        if self._object is None:
            if text.rstrip() != "{":
                stripped = text.strip()
                if stripped:
                    self._foreign.append(one_line(stripped, 300))
                return text if stripped else None
            self._object, self._held, self._too_long = [], 0, False
        self._held += len(text) + 1
        if self._held > self.max_line:
            self._too_long = True
        elif not self._too_long:
            self._object.append(text)
        if text.rstrip() != "}":
            return None
        lines, self._object = self._object, None
        if self._too_long:
            self._skipped.append(self._line)
            return None
        return self._take("\n".join(lines))

    def _take(self, text: str) -> str | None:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            if self._error is None:
                self._error = f"{self.kind}: the output object is not JSON ({exc.msg})"
            return None
        except (ValueError, RecursionError):
            if self._error is None:
                self._error = f"{self.kind}: the output object nests too deep to be read"
            return None
        self._events += 1
        return self._event(value) if isinstance(value, dict) else None

    def _event(self, event: dict[str, Any]) -> str | None:
        error = as_mapping(event.get("error"))
        stats = as_mapping(event.get("stats"))
        rows = {str(k): as_mapping(v) for k, v in as_mapping(stats.get("models")).items()}
        tokens = {name: as_mapping(row.get("tokens")) for name, row in rows.items()}

        def total(key: str) -> int | None:
            counts = [as_int(row.get(key)) for row in tokens.values()]
            return sum(count or 0 for count in counts) if tokens else None

        thoughts = total("thoughts") or 0
        output = total("candidates")
        fields: dict[str, Any] = {
            "text": event.get("response") if isinstance(event.get("response"), str) else "",
            "input_tokens": total("input"),
            # Thinking is billed as output: the object counts it apart.
            "output_tokens": None if output is None else output + thoughts,
            "cache_read_tokens": total("cached"),
            "model": max(tokens, key=lambda n: (as_int(tokens[n].get("total")) or 0, n))
            if tokens
            else None,
            "is_error": bool(error),
            "infra_error": None,
        }
        if error:
            message = error.get("message")
            message = message if isinstance(message, str) else "the CLI reported an error"
            fields["text"] = fields["text"] or message
            fault = _coded_fault(as_int(error.get("code")), message) or gemini_fault(message)
            fields["infra_error"] = fault.reason if fault is not None else None
            self._fields = fields
            return f"✗ error: {one_line(message, 300)}"
        self._fields = fields
        return fields["text"] or None

    def _text_fault(self, text: str) -> Fault | None:
        return gemini_fault(text)

    def report(self) -> AgentReport:
        if self._fields is None:
            return AgentReport(
                error=self._error or self._missing("no output object"),
                infra_error=self._foreign_infra(),
                events=self._events,
            )
        return AgentReport(**self._fields, error=self._error, events=self._events)


def _coded_fault(code: int | None, message: str) -> Fault | None:
    """The json format's ``error.code``: an HTTP status the API answered with."""
    kind = kind_of_status(code) if code is not None else None
    return Fault(kind, f"API Error {code}: {gemini_detail(message)}") if kind else None


def gemini_detail(message: str) -> str:
    """An error message without the API's JSON around it (its ``error.message``)."""
    try:
        body = json.loads(message)
    except (ValueError, RecursionError):
        return message
    inner = as_mapping(as_mapping(body).get("error")).get("message")
    return inner if isinstance(inner, str) else message
