"""The backend interface: ``Backend`` (one ``run`` per iteration), what a run returns
(``BackendResult``, ``Usage``, ``ToolCall``) and the tool-text cap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pytest_ooda.facts import ToolCall, Usage

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents import Activation
# ``ToolCall`` and ``Usage`` are the leaf ``facts``' (the results record keeps them too);
# the backends name them here, where what a run returns is declared.
__all__ = [
    "TOOL_TEXT_LIMIT",
    "Backend",
    "BackendResult",
    "StreamCallback",
    "ToolCall",
    "Usage",
    "tool_arguments",
    "tool_text",
]

StreamCallback = Callable[[bytes], None]


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
