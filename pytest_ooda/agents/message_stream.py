"""The stream of an agent CLI that prints its conversation as messages of content blocks
— ``assistant`` messages whose blocks are text or ``tool_use``, ``user`` messages
carrying each ``tool_result`` — as Claude Code and Qwen Code do: the tool calls (their
inputs and results within the run's budget) and the tail of the assistant's text. Each
agent's stream adds its own events (its ``system`` and ``result``) and its report.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.report import ToolCall
from pytest_ooda.agents.stream import DEFAULT_MAX_LINE, AgentStream
from pytest_ooda.agents.text import (
    ERROR_WIDTH,
    SUMMARY_WIDTH,
    input_text,
    one_line,
    result_text,
    shown_lines,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ooda.agents.text import ToolTextBudget

__all__ = ["MessageStream"]


class MessageStream(AgentStream):
    """What a stream of content-block messages reports of its tool calls and text."""

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
        # Only a stream cut off before its result needs these: the tail is enough.
        self._texts: deque[str] = deque(maxlen=20)

    def _tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls in the order they were made (a call sent again keeps its place)."""
        return tuple(self._calls[call_id] for call_id in self._order)

    def _assistant(self, message: dict[str, Any]) -> str | None:
        """An assistant message: its text shown, each ``tool_use`` a call (``→ Bash:
        pytest -q`` for a person watching)."""
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
                if call_id not in self._calls:
                    self._order.append(call_id)
                self._calls[call_id] = ToolCall(
                    name,
                    one_line(source, SUMMARY_WIDTH),
                    id=call_id,
                    input=text,
                    arguments=arguments,
                    texts_kept=kept,
                )
                if self.watched:
                    shown.append(shown_lines(f"→ {name}", self._clean(source)))
        return "\n".join(shown) or None

    def _tool_results(self, message: dict[str, Any]) -> str | None:
        """A user message's ``tool_result`` blocks: each call's outcome (``✗ Write:
        denied`` shown for a failed one)."""
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
