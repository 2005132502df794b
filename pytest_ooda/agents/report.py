"""What an agent reports about one invocation: its token ``Usage`` and cost, each
``ToolCall`` (and the cap on the texts one keeps), and the whole :class:`AgentReport` a
format's stream reader makes. A leaf: the backends, the loop and the records all use
these values, so they sit below everything that reads an agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_ooda.facts import ToolCall, Usage

__all__ = [
    "TOOL_TEXT_LIMIT",
    "AgentReport",
    "ToolCall",
    "Usage",
    "tool_arguments",
    "tool_text",
]


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
    #: The infrastructure's fault the agent reported in its own words (an API error it
    #: gave up retrying, a refused login), as ``"kind: detail"``; the evidence is the
    #: agent's word, never something the harness saw (see :mod:`.faults`).
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
