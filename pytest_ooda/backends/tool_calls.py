"""A tool call's texts: the one-line summary of its input (what recordings and results
logs keep), the lines a person watching is shown, and the redaction of its decoded
texts before either is made (:func:`redacted_call`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_ooda.backends.base import ToolCall, tool_text

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ERROR_WIDTH",
    "SUMMARY_WIDTH",
    "input_text",
    "one_line",
    "redacted_call",
    "shown_call",
    "shown_lines",
    "summarize",
]

SUMMARY_WIDTH = 120


def input_text(arguments: Any) -> str:
    """What a tool call's summary is made from: the command, the file, or the first
    scalar argument."""
    if not isinstance(arguments, dict):
        return "" if arguments is None else str(arguments)
    for key in ("command", "file_path", "notebook_path", "path", "pattern", "url", "query"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return next((str(v) for v in arguments.values() if isinstance(v, str | int)), "")


def summarize(name: str, arguments: Any) -> str:
    """A tool call's input in one short line: the command, the file, or the first
    scalar argument."""
    return one_line(input_text(arguments), SUMMARY_WIDTH)


#: Lines of a multi-line tool input shown live.
_SHOWN_INPUT_LINES = 12


def shown_lines(head: str, text: str) -> str:
    """``head: first line`` of ``text``, its further lines below, indented — each line
    as it was, so the live stream's redaction sees ``export API_TOKEN=…`` as a line of
    its own (a summary joins them)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return head
    shown = [f"{head}: {one_line(lines[0], SUMMARY_WIDTH)}"]
    shown += [f"    {one_line(line, SUMMARY_WIDTH)}" for line in lines[1:_SHOWN_INPUT_LINES]]
    if len(lines) > _SHOWN_INPUT_LINES:
        shown.append(f"    … ({len(lines) - _SHOWN_INPUT_LINES} more lines)")
    return "\n".join(shown)


def shown_call(name: str, arguments: Any) -> str:
    """A tool call as a person watching sees it: ``→ Bash: first line`` and a
    multi-line command's further lines below it."""
    return shown_lines(f"→ {name}", input_text(arguments))


def one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


#: How a failed call's ``error`` is made from its result text.
ERROR_WIDTH = 200


def redacted_call(call: ToolCall, redact: Callable[[str], str]) -> ToolCall:
    """``call`` with ``redact`` applied to each decoded text before it is joined or
    encoded: every string of its input on its own (a multi-line command keeps its lines,
    so ``export API_TOKEN=…`` on the second line is still a line of its own), then the
    summary and the JSON text made again from what is left; the result text, and the
    error made from it, likewise. A call read back from a file (no decoded input) has
    its stored texts redacted as they are."""
    if call.arguments is not None:
        clean = _redacted_tree(call.arguments, redact)
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


def _redacted_tree(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(key): _redacted_tree(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted_tree(item, redact) for item in value]
    return value
