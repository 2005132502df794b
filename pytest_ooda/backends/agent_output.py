"""Reading what agent CLIs report about a run, beyond its text: Claude Code's
``--output-format json`` and ``stream-json --verbose``, and Codex's ``exec --json``.

Each format becomes an :class:`AgentReport`: the final text (what signal detection
reads, exactly as plain output), token usage, cost, turns, duration, the tool calls
(name, a short summary of the input, whether it failed) and the permission denials.
Output that is not what the format promises — a line that is not JSON, a stream cut
off before its result — yields a report with ``error`` saying so, never an exception.

The streams are read as they arrive (:meth:`AgentStream.feed_bytes`), line by line in
bounded memory (the tool calls' texts within the run's :class:`ToolTextBudget`), and
rendered for a person watching (``→ Bash: pytest -q``). The command
backend merges stderr into stdout, so a line that does not start with ``{`` is the
CLI's own text (a warning, an error message): shown, kept for the error message, and
harmless when the stream completes. A line that starts like JSON and is not is broken
output. :func:`backend_result` turns a report into the iteration's ``BackendResult``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import AI_OUTPUTS, AiOutput
from pytest_ooda.agents import Activation, FiredWatch
from pytest_ooda.backends.base import BackendResult, ToolCall, Usage, tool_arguments
from pytest_ooda.backends.tool_calls import (
    ERROR_WIDTH,
    SUMMARY_WIDTH,
    ToolTextBudget,
    input_text,
    one_line,
    redacted_call,
    result_text,
    shown_lines,
    summarize,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "AI_OUTPUTS",
    "TOOL_REPORTING_OUTPUTS",
    "AgentReport",
    "AgentStream",
    "AiOutput",
    "ClaudeStream",
    "CodexStream",
    "ToolCall",
    "backend_result",
    "open_stream",
    "parse",
    "parse_claude_json",
    "parse_codex_json",
    "redacted_call",
]

#: The formats that list every tool call (``claude-json`` reports only the denied ones).
TOOL_REPORTING_OUTPUTS: tuple[AiOutput, ...] = ("claude-stream-json", "codex-json")
#: A line longer than this is skipped (the stream stays bounded, whatever it prints).
DEFAULT_MAX_LINE = 10_485_760
_FOREIGN_KEPT = 5


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
    #: The infrastructure's fault the agent reported (an API error it gave up retrying),
    #: as :func:`~pytest_ooda.backends.infra.infra_reason` writes it.
    infra_error: str | None = None
    #: Events the agent read at all (none: it died before saying anything).
    events: int = 0

    @property
    def usage(self) -> Usage | None:
        """The token counts and cost as a ``Usage``, ``None`` when nothing was reported."""
        counts = (
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_creation_tokens,
        )
        if all(count is None for count in counts) and self.cost_usd is None:
            return None
        return Usage(
            input_tokens=self.input_tokens or 0,
            output_tokens=self.output_tokens or 0,
            cost=self.cost_usd,
            cache_read_tokens=self.cache_read_tokens or 0,
            cache_creation_tokens=self.cache_creation_tokens or 0,
        )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class AgentStream(ABC):
    """One invocation's output in a machine-readable format, fed as it arrives.

    :meth:`feed_bytes` takes raw chunks and returns the text to show a person;
    :meth:`feed` takes one line; :meth:`report` says what the stream reported.
    Subclasses read the events of one format (:meth:`_event`).
    """

    kind: AiOutput = "text"

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        if max_line < 1:
            raise ValueError("max_line must be >= 1")
        self.max_line = max_line
        #: What a tool call's input (or a failed call's result) shown to a person is
        #: redacted with before its ``→ Bash:`` head is put in front of it: a line rule
        #: (``export API_TOKEN=…`` alone on its line) must see the line as it was.
        self.redact = redact
        #: Whether a person is shown the stream: a tool call's lines are rendered only
        #: then (the agent's own text and the closing line always are).
        self.watched = watched
        #: How much tool-call text the run may still hold (a run's, shared by its
        #: iterations' streams; a stream of its own when none is given).
        self.budget = budget if budget is not None else ToolTextBudget()
        self._line = 0
        self._partial = bytearray()
        self._skipping = False
        self._skipped: list[int] = []
        self._foreign: deque[str] = deque(maxlen=_FOREIGN_KEPT)
        self._events = 0
        self._error: str | None = None

    def activations(self, prompt: str) -> tuple[Activation, ...]:
        """What fired besides the tool calls (a format that says nothing: nothing)."""
        return ()

    def _clean(self, text: str) -> str:
        """``text`` as a person watching may see it (see ``redact``)."""
        return self.redact(text) if self.redact is not None and text else text

    # -- bytes in, lines out --------------------------------------------------------

    def feed_bytes(self, data: bytes) -> str:
        """Feed raw output; returns what to show a person (lines, ``\\n``-terminated)."""
        shown: list[str] = []
        start = 0
        size = len(data)
        while start < size:
            end = data.find(b"\n", start)
            stop = size if end < 0 else end
            if not self._skipping:
                if len(self._partial) + stop - start > self.max_line:
                    # Bounded memory: the rest of this line is dropped, not buffered.
                    self._skipping = True
                    self._partial.clear()
                elif end >= 0 and not self._partial:
                    # A whole line inside one chunk (the usual case): no copy to buffer.
                    self._line_read(data[start:end], shown)
                    start = end + 1
                    continue
                else:
                    self._partial += data[start:stop]
            if end < 0:
                break
            self._end_line(shown)
            start = end + 1
        return "".join(line + "\n" for line in shown)

    def close(self) -> str:
        """The end of the output: a last line without a newline is read too."""
        shown: list[str] = []
        if self._partial or self._skipping:
            self._end_line(shown)
        return "".join(line + "\n" for line in shown)

    def _end_line(self, shown: list[str]) -> None:
        if self._skipping:
            self._skipping = False
            self._line += 1
            self._skipped.append(self._line)
            return
        self._line_read(bytes(self._partial), shown)
        self._partial.clear()

    def _line_read(self, raw: bytes, shown: list[str]) -> None:
        rendered = self.feed(raw.decode("utf-8", errors="replace"))
        if rendered:
            shown.append(rendered)

    # -- lines in -------------------------------------------------------------------

    def feed(self, line: str) -> str | None:
        """Read one line; returns its readable form for a person, if it has one."""
        self._line += 1
        # Events start with "{" at once; only other lines pay for a stripped copy.
        stripped = line if line[:1] == "{" else line.strip()
        if not stripped:
            return None
        if not stripped.startswith(("{", "[")):
            # stderr shares the pipe: the CLI's own words, not broken JSON.
            self._foreign.append(one_line(stripped, 300))
            return line.rstrip("\n")
        try:
            event = json.loads(stripped)
        except json.JSONDecodeError as exc:
            if self._error is None:
                self._error = f"{self.kind}: line {self._line} is not JSON ({exc.msg})"
            return line.rstrip("\n")
        if not isinstance(event, dict):
            return None
        self._events += 1
        return self._event(event)

    @abstractmethod
    def _event(self, event: dict[str, Any]) -> str | None:
        """Take one JSON event of the format; a line to show a person, if any."""

    @abstractmethod
    def report(self) -> AgentReport:
        """What the stream said about the invocation, once it has ended."""

    def _foreign_infra(self) -> str | None:
        """An API failure the CLI reported in its own words (not as an event)."""
        from pytest_ooda.backends.infra import api_error_text

        return api_error_text("\n".join(self._foreign)) if self._foreign else None

    def _missing(self, what: str) -> str:
        """Why there is no final report: the stream's end came first, or it never was
        this format; with the CLI's own last words, and lines skipped for length."""
        refusal = next((line for line in self._foreign if ROOT_REFUSAL in line), None)
        if refusal is not None and not self._events:
            # Not a flags problem: Claude Code would not start at all.
            return f"{self.kind}: {ROOT_REFUSAL_HINT} (it printed: {refusal})"
        if self._events:
            text = f"{self.kind}: {what} (the CLI stopped mid-run)"
        else:
            text = f"{self.kind}: the output has no JSON events; {_FLAGS_HINT[self.kind]}"
        if self._skipped:
            text += (
                f"; line {self._skipped[-1]} was longer than max_output_buffer "
                f"({self.max_line} bytes) and was skipped"
            )
        if self._foreign:
            text += "; it printed: " + " | ".join(self._foreign)
        return text


#: What Claude Code prints (exit 1) when --dangerously-skip-permissions or
#: --permission-mode bypassPermissions is used as root outside a sandbox.
ROOT_REFUSAL = "cannot be used with root/sudo privileges"
ROOT_REFUSAL_HINT = (
    "Claude Code refuses to skip permission prompts as root unless IS_SANDBOX is exactly "
    "1 (true or yes do not count); set IS_SANDBOX=1 in the environment when this runs in "
    "a container or CI sandbox (or run it in a sandbox, or as another user)"
)

_FLAGS_HINT: dict[str, str] = {
    "claude-json": "does the command have --output-format json?",
    "claude-stream-json": "does the command have --output-format stream-json --verbose?",
    "codex-json": "does the command run `codex exec --json`?",
}


# ----------------------------------------------------------------------------- Claude


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
            arguments=tool_arguments(item.get("tool_input")),
        )
        for item in event.get("permission_denials") or ()
        if isinstance(item, dict)
    )
    cost = event.get("total_cost_usd")
    model_usage = event.get("modelUsage")
    result = event.get("result")
    text = result if isinstance(result, str) else ""
    return {
        "text": text,
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
        "infra_error": _claude_infra(event, text) if event.get("is_error") else None,
    }


def _claude_infra(event: dict[str, Any], text: str) -> str | None:
    """An error result blames the API when Claude Code says so: its
    ``api_error_status`` (429, 529, 5xx) or its ``API Error: …`` text."""
    from pytest_ooda.backends.infra import api_error_text, infra_reason, kind_of_status

    status = _int(event.get("api_error_status"))
    if status is not None:
        kind = kind_of_status(status)
        if kind is not None:
            return infra_reason(kind, text or f"API status {status}")
        return None
    return api_error_text(text)


class ClaudeStream(AgentStream):
    """``claude -p --output-format stream-json --verbose`` (or ``json``, whose one line is
    the ``result`` event alone): :meth:`feed` returns a readable line for a person
    watching (assistant text, ``→ Bash: pytest -q``, ``✗ Write: denied``) and
    :meth:`report` the result."""

    def __init__(
        self,
        kind: AiOutput = "claude-stream-json",
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
    ) -> None:
        super().__init__(max_line=max_line, budget=budget, watched=watched)
        self.kind = kind
        self._calls: dict[str, ToolCall] = {}
        self._order: list[str] = []
        # Only a stream cut off before its result needs these: the tail is enough.
        self._texts: deque[str] = deque(maxlen=20)
        self._result: dict[str, Any] | None = None
        self._fired = FiredWatch()
        self._model: str | None = None

    def _event(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        self._fired.event(event)
        if kind == "system" and isinstance(event.get("model"), str):
            self._model = event["model"]
        elif kind == "assistant":
            return self._assistant(event)
        elif kind == "user":
            return self._tool_results(event)
        elif kind == "result":
            self._result = _claude_result(event)
            closing = _result_line(self._result)
            if self._result["is_error"] and self._texts and self._texts[-1] == self._result["text"]:
                closing = "✗ the agent CLI reported that error"  # its text was just shown
            if self.kind == "claude-json" and self._result["text"]:
                # json mode prints nothing before its result: show the final text too.
                return f"{self._result['text']}\n{closing}"
            return closing
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
                text, arguments, kept = self.budget.input(block.get("input"))
                # The summary and the lines shown are made from the same argument.
                source = input_text(block.get("input"))
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
                if self.watched:
                    shown.append(shown_lines(f"→ {name}", self._clean(source)))
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
            detail = result_text(block.get("content"))
            failed = bool(block.get("is_error"))
            # A call whose input was kept keeps its result while the budget lasts.
            kept = call.texts_kept and not self.budget.spent
            result = self.budget.result(detail, failed=failed)
            error = one_line(detail, ERROR_WIDTH) if failed else None
            self._calls[call.id or ""] = replace(
                call, ok=not failed, error=error, result=result, texts_kept=kept
            )
            if failed and self.watched:
                shown.append(shown_lines(f"✗ {call.name}", self._clean(detail)))
        return "\n".join(shown) or None

    def activations(self, prompt: str) -> tuple[Activation, ...]:
        return self._fired.activations(prompt, self._result["text"] if self._result else "")

    def report(self) -> AgentReport:
        calls = tuple(self._calls[call_id] for call_id in self._order)
        if self._result is None:
            what = (
                "no result event"
                if self.kind == "claude-json"
                else ("the stream ended without a result event")
            )
            return AgentReport(
                text="\n".join(self._texts),
                model=self._model,
                tool_calls=calls,
                error=self._error or self._missing(what),
                infra_error=self._foreign_infra(),
                events=self._events,
            )
        fields = {**self._result, "tool_calls": calls, "error": self._error}
        fields["model"] = fields["model"] or self._model
        return AgentReport(**fields, events=self._events)


def _result_line(fields: dict[str, Any]) -> str:
    """The closing line shown live: turns, tokens and cost, or the error."""
    if fields.get("is_error"):
        return f"✗ error: {one_line(fields.get('text') or '', 300)}"
    parts = []
    if fields.get("turns") is not None:
        parts.append(f"{fields['turns']} turns")
    tokens = sum(
        fields.get(key) or 0
        for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    )
    if tokens:
        parts.append(f"{tokens} tokens")
    if fields.get("cost_usd") is not None:
        parts.append(f"${fields['cost_usd']:.4f}")
    return "✓ done" + (": " + " · ".join(parts) if parts else "")


def parse_claude_json(text: str) -> AgentReport:
    """``claude -p --output-format json``: one ``result`` object."""
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        return AgentReport(text=text, error=f"claude-json: not JSON ({exc.msg} at {exc.pos})")
    if not isinstance(event, dict) or event.get("type") != "result":
        return AgentReport(text=text, error="claude-json: no result object in the output")
    return AgentReport(**_claude_result(event), events=1)


# ----------------------------------------------------------------------------- Codex


class CodexStream(AgentStream):
    """``codex exec --json``: JSON lines of thread, turn and item events."""

    kind: AiOutput = "codex-json"

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
    ) -> None:
        super().__init__(max_line=max_line, budget=budget, watched=watched)
        self._texts: deque[str] = deque(maxlen=20)
        self._calls: list[ToolCall] = []
        self._usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
        self._turns = 0
        self._failed: str | None = None
        self._infra: str | None = None

    def _event(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        if kind == "turn.completed":
            self._turns += 1
            for key in self._usage:
                self._usage[key] += _int(_mapping(event.get("usage")).get(key)) or 0
            return None
        if kind in ("turn.failed", "error"):
            detail = event.get("error") if kind == "turn.failed" else event
            message = detail.get("message") if isinstance(detail, dict) else None
            self._failed = f"codex-json: {message or kind}"
            if isinstance(message, str):
                from pytest_ooda.backends.infra import error_message

                self._infra = error_message(message) or self._infra
            return f"✗ error: {message or kind}"
        if kind == "item.completed":
            found = _codex_item(_mapping(event.get("item")), self.budget)
            if isinstance(found, str):
                self._texts.append(found)
                return found
            if found is not None:
                self._calls.append(found)
                if not self.watched:
                    return None
                mark = "✗" if found.ok is False else "→"
                if found.arguments is not None:
                    text = self._clean(input_text(found.arguments))
                    return shown_lines(f"{mark} {found.name}", text)
                summary = self._clean(found.summary)
                return f"{mark} {found.name}: {summary}" if summary else None
        return None

    def report(self) -> AgentReport:
        completed = self._turns > 0
        error = self._failed or self._error
        if not completed and error is None:
            error = self._missing("no turn.completed event")
        return AgentReport(
            text="\n".join(self._texts),
            input_tokens=self._usage["input_tokens"] if completed else None,
            output_tokens=self._usage["output_tokens"] if completed else None,
            cache_read_tokens=self._usage["cached_input_tokens"] if completed else None,
            turns=self._turns if completed else None,
            tool_calls=tuple(self._calls),
            error=error,
            # A turn that completed after an error event (a retry that worked) is fine.
            infra_error=None if completed else (self._infra or self._foreign_infra()),
            events=self._events,
        )


def _codex_item(item: dict[str, Any], budget: ToolTextBudget) -> ToolCall | str | None:
    """A completed Codex item: the agent's text, a tool call, or nothing of interest
    (its texts kept as far as the run's ``budget`` goes)."""
    item_type = item.get("type")
    failed = item.get("status") == "failed"
    if item_type == "agent_message":
        return item.get("text") if isinstance(item.get("text"), str) else None
    if item_type == "command_execution":
        code = _int(item.get("exit_code"))
        failed = failed or (code is not None and code != 0)
        summary = summarize("shell", {"command": item.get("command")})
        text, arguments, kept = budget.input(item.get("command"))
        output = item.get("aggregated_output")
        result = budget.text(output) if kept else None
        return ToolCall(
            "shell",
            summary,
            ok=not failed,
            error=f"exit {code}" if failed else None,
            input=text,
            result=result,
            arguments=arguments,
            texts_kept=kept and (result is not None or output is None),
        )
    if item_type == "file_change":
        changes = [_mapping(change) for change in item.get("changes") or ()]
        paths = ", ".join(str(change.get("path", "")) for change in changes)
        text = budget.text(changes or None)
        kept = text is not None or not changes
        return ToolCall(
            "file_change", paths[:SUMMARY_WIDTH], ok=not failed, input=text, texts_kept=kept
        )
    if item_type == "mcp_tool_call":
        return ToolCall(f"{item.get('server', '?')}.{item.get('tool', '?')}", ok=not failed)
    if item_type == "web_search":
        query = {"query": item.get("query")}
        return ToolCall("web_search", summarize("", query), arguments=tool_arguments(query))
    return None


def parse_codex_json(text: str) -> AgentReport:
    """``codex exec --json``: a finished invocation's whole output."""
    return parse(text, "codex-json")


# ----------------------------------------------------------------------------- entry points


def open_stream(
    kind: AiOutput,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    budget: ToolTextBudget | None = None,
    watched: bool = True,
    redact: Callable[[str], str] | None = None,
) -> AgentStream:
    """A reader for output format ``kind`` (not ``text``, which needs none); ``budget``:
    the run's tool-call text budget (a fresh one when ``None``); ``watched``: whether
    what it returns is shown to anyone (tool calls are rendered only then); ``redact``:
    what a tool call's text shown is redacted with before its head is put in front."""
    if kind in ("claude-json", "claude-stream-json"):
        stream: AgentStream = ClaudeStream(kind, max_line=max_line, budget=budget, watched=watched)
    elif kind == "codex-json":
        stream = CodexStream(max_line=max_line, budget=budget, watched=watched)
    else:
        raise ValueError(f"no structured reader for ai_output {kind!r}")
    stream.redact = redact
    return stream


def parse(output: str, kind: AiOutput) -> AgentReport:
    """The report for a finished invocation's whole stdout in format ``kind``."""
    if kind == "text":
        return AgentReport(text=output)
    if kind == "claude-json":
        return parse_claude_json(output)
    stream = open_stream(kind)
    for line in output.splitlines():
        stream.feed(line)
    return stream.report()


def backend_result(
    report: AgentReport,
    kind: AiOutput,
    *,
    exit_code: int,
    max_output: int,
    duration: float = 0.0,
    timed_out: bool = False,
    term_signal: int | None = None,
    broken_pipe: bool = False,
    total_bytes: int | None = None,
    activations: tuple[Activation, ...] = (),
) -> BackendResult:
    """One iteration's result from the agent's report: the final text (its tail, at most
    ``max_output`` bytes) is the output signal detection reads; broken output, or an
    error the agent itself reported, is the iteration's ``error`` (a failure) — unless it
    was the infrastructure's fault (an API error, an agent that died before printing
    anything: ``total_bytes`` 0), then also its ``infra_error``."""
    data = report.text.encode("utf-8", errors="surrogateescape")
    kept = data[len(data) - max_output :] if len(data) > max_output else data
    error = report.error
    if error is None and report.is_error:
        error = f"the agent CLI reported an error: {one_line(report.text, 300) or '(no text)'}"
    infra = report.infra_error if error is not None or exit_code != 0 else None
    if infra is None and total_bytes == 0 and exit_code != 0 and not timed_out:
        from pytest_ooda.backends.infra import died_silently

        infra = died_silently(exit_code, term_signal)
    return BackendResult(
        output=kept.decode("utf-8", errors="replace"),
        exit_code=exit_code,
        duration=duration,
        timed_out=timed_out,
        term_signal=term_signal,
        truncated=len(kept) < len(data),
        dropped_bytes=len(data) - len(kept),
        total_bytes=len(data),
        broken_pipe=broken_pipe,
        usage=report.usage,
        error=error,
        tool_calls=report.tool_calls,
        permission_denials=report.permission_denials,
        turns=report.turns,
        model=report.model,
        tools_reported=kind in TOOL_REPORTING_OUTPUTS,
        infra_error=infra,
        activations=activations,
    )
