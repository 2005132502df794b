"""The backend interface: ``Backend`` (one ``run`` per iteration) and what a run returns
(``BackendResult``; its ``Usage`` and ``ToolCall`` values are the leaf ``facts``', the
tool-text cap the agents package's: re-exported here)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pytest_ooda.agents import TOOL_TEXT_LIMIT, tool_arguments, tool_text
from pytest_ooda.facts import ToolCall, Usage

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents import Activation

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
    #: What ``infra_error`` rests on: ``"agent"`` (its own words: ``API Error: 529``,
    #: ``Not logged in``) or ``"harness"`` (what was observed: a status received, an
    #: exit before any output); the outcome policy weighs the two.
    infra_evidence: str | None = None
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
