"""The backend interface: ``Backend`` (one ``run`` per iteration), what a run returns
(``BackendResult``, ``Usage``, ``ToolCall``) and the tool-text cap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents import Activation

StreamCallback = Callable[[bytes], None]


@dataclass(frozen=True)
class Usage:
    """Token accounting an AI backend reported: an HTTP API's usage block, or an agent
    CLI's JSON report. ``cost`` (US dollars) only when the backend priced it (an agent
    CLI's own figure, or the prices configured for an HTTP API)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Every token counted: input, output and both kinds of cache tokens."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_creation_tokens
        )

    def as_dict(self) -> dict[str, Any]:
        """The counts and the cost (``None`` when not priced), as scenario files and
        results logs write them."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cost": self.cost,
        }

    def __add__(self, other: Usage) -> Usage:
        if self.cost is None and other.cost is None:
            cost = None
        else:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
        )


@dataclass(frozen=True)
class ToolCall:
    """One tool an agent called, as its CLI reported it: ``summary`` is a short line of
    the input (the command, the file); ``ok`` is ``None`` until its result is known."""

    name: str
    summary: str = ""
    ok: bool | None = None
    error: str | None = None
    id: str | None = field(default=None, compare=False)
    #: The whole input (JSON text) and result text as the CLI reported them, capped at
    #: ``TOOL_TEXT_LIMIT`` characters; kept for transcripts, never in ``as_dict``.
    input: str | None = field(default=None, compare=False)
    result: str | None = field(default=None, compare=False)
    #: The decoded input the summary and ``input`` were made from (strings capped at
    #: ``TOOL_TEXT_LIMIT``), so a redactor sees each value's own lines before they are
    #: joined into one summary line or escaped into JSON (``redacted_call``); never
    #: written anywhere itself.
    arguments: Any = field(default=None, compare=False, repr=False)
    #: ``False``: the run's budget for tool-call text was spent before this call, so
    #: ``input`` and ``result`` are not kept and ``arguments`` holds only what the
    #: summary is made from (``tool_calls.ToolTextBudget``).
    texts_kept: bool = field(default=True, compare=False, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The call as scenario files and results logs write it (without the CLI's id)."""
        return {"name": self.name, "summary": self.summary, "ok": self.ok, "error": self.error}


#: How much of a tool call's input or result a ``ToolCall`` keeps (the start).
TOOL_TEXT_LIMIT = 8192


def tool_arguments(value: Any, depth: int = 0) -> Any:
    """``value`` (a decoded tool input) with every string capped at ``TOOL_TEXT_LIMIT``
    characters and nesting cut at 20 levels: what a ``ToolCall`` keeps of it."""
    if isinstance(value, str):
        return value[:TOOL_TEXT_LIMIT]
    if depth >= 20:
        return None
    if isinstance(value, dict):
        return {str(key): tool_arguments(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [tool_arguments(item, depth + 1) for item in value]
    return value


def tool_text(value: Any) -> str | None:
    """A tool call's input or result as text for a transcript, capped with a note."""
    import json

    if value is None:
        return None
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)
        except (TypeError, ValueError):
            text = str(value)
    if len(text) > TOOL_TEXT_LIMIT:
        text = text[:TOOL_TEXT_LIMIT] + f"\n… ({len(text) - TOOL_TEXT_LIMIT} more characters)"
    return text


@dataclass(frozen=True)
class BackendResult:
    """What one iteration of an AI backend produced.

    ``exit_code`` follows ``subprocess`` conventions: negative when the process was killed
    by a signal (``term_signal`` then holds the signal number). ``output`` is the tail of
    the captured output, at most ``max_output`` bytes before decoding; ``dropped_bytes``
    says how much of the head was discarded. ``error`` carries a short human-readable
    explanation for failures that are not visible in the output (HTTP status, timeout).
    An agent CLI whose output format is machine-readable also reports the ``tool_calls``
    it made, the ones it was refused (``permission_denials``), its ``turns`` and
    ``model``; ``output`` is then the agent's final text. ``tools_reported`` says the
    format lists every tool call, so an empty ``tool_calls`` means "none were made"
    rather than "not known". ``infra_error`` says the infrastructure spoiled the
    iteration (``"rate-limit: HTTP 429 …"``, see :mod:`.infra`): the loop retries it and
    never counts it as the procedure's failure; ``retry_after`` is how long the backend
    was told to wait (an HTTP ``Retry-After``).
    """

    output: str
    exit_code: int
    duration: float = 0.0
    timed_out: bool = False
    term_signal: int | None = None
    truncated: bool = False
    dropped_bytes: int = 0
    total_bytes: int = 0
    broken_pipe: bool = False
    usage: Usage | None = None
    error: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    permission_denials: tuple[ToolCall, ...] = ()
    turns: int | None = None
    model: str | None = None
    tools_reported: bool = False
    infra_error: str | None = None
    retry_after: float | None = None
    #: What the agent reported as having fired besides its tool calls: skills,
    #: subagents, its prompt's slash command, MCP tools, hooks (``expect.activation``).
    activations: tuple[Activation, ...] = ()


@runtime_checkable
class Backend(Protocol):
    """One AI invocation per call; a fresh process/request every time (no shared context)."""

    def run(
        self,
        prompt: str,
        *,
        iteration: int,
        workdir: Path,
        timeout: float | None,
        max_output: int,
        stream: StreamCallback | None,
    ) -> BackendResult:
        """Run one iteration with ``prompt``; ``iteration`` is 1-based."""
        ...
