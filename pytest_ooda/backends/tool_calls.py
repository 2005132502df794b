"""A tool call's decoded texts redacted before its summary or JSON text is made again
(:func:`redacted_call`); the summaries, the live lines and the run's budget of tool-call
text are :mod:`pytest_ooda.agents`'."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_ooda.agents import ERROR_WIDTH, ToolCall, one_line, summarize, tool_text

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["redacted_call"]


def redacted_call(call: ToolCall, redact: Callable[[str], str]) -> ToolCall:
    """``call`` with ``redact`` applied to each decoded text before it is joined or
    encoded: every string of its input on its own (a multi-line command keeps its lines,
    so ``export API_TOKEN=…`` on the second line is still a line of its own), then the
    summary and the JSON text made again from what is left; the result text, and the
    error made from it, likewise. A call read back from a file (no decoded input) has
    its stored texts redacted as they are."""
    from pytest_ooda.redact import redact_value

    if call.arguments is not None:
        clean = redact_value(call.arguments, redact)
        summary = summarize(call.name, clean)
        text = tool_text(clean) if call.input is not None else None
    else:
        clean = None
        summary = redact(call.summary)
        text = redact(call.input) if call.input is not None else None
    result = redact(call.result) if call.result is not None else None
    error = call.error
    if (
        error is not None
        and call.result is not None
        and result is not None
        and (error == one_line(call.result, ERROR_WIDTH))
    ):
        error = one_line(result, ERROR_WIDTH)
    elif error is not None:
        error = redact(error)
    return replace(call, summary=summary, input=text, result=result, error=error, arguments=clean)
