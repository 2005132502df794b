"""A tool call's texts: the one-line summary of its input (what recordings and results
logs keep), the lines a person watching is shown, and how much of them a run holds
(:class:`ToolTextBudget`). Each agent's stream reader makes them the same way, so
``bash_matches`` and the live display read alike for every agent; the redaction of the
decoded texts before either is made is the backends' (``redacted_call``)."""

from __future__ import annotations

from typing import Any

from pytest_ooda.agents.report import TOOL_TEXT_LIMIT, tool_arguments, tool_text

__all__ = [
    "ERROR_WIDTH",
    "RUN_TOOL_TEXT",
    "SUMMARY_WIDTH",
    "ToolTextBudget",
    "head_lines",
    "input_text",
    "one_line",
    "result_text",
    "shown_call",
    "shown_lines",
    "summarize",
]

SUMMARY_WIDTH = 120


_SUMMARY_KEYS = ("command", "file_path", "notebook_path", "path", "pattern", "url", "query")


def _summary_key(arguments: dict[Any, Any]) -> Any:
    """The key of the argument a call's summary is made from (``None``: none is)."""
    for key in _SUMMARY_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return key
    return next((key for key, v in arguments.items() if isinstance(v, str | int)), None)


def input_text(arguments: Any) -> str:
    """What a tool call's summary is made from: the command, the file, or the first
    scalar argument."""
    if not isinstance(arguments, dict):
        return "" if arguments is None else str(arguments)
    key = _summary_key(arguments)
    return "" if key is None else str(arguments[key])


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


def result_text(content: Any) -> str:
    """A tool_result's content: a string, or a list of text blocks (one per line, so a
    redactor sees where each block's lines begin)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    return ""


def one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


#: How a failed call's ``error`` is made from its result text.
ERROR_WIDTH = 200


# --------------------------------------------------------------------------- the budget

#: The tool-call text one run holds in all: each call's input and result (and its
#: decoded input beside them), ``TOOL_TEXT_LIMIT`` characters a string. Four times what
#: a transcript keeps of a run (``live.transcript.RUN_LIMIT``), so that the transcript
#: still chooses which texts to shorten.
RUN_TOOL_TEXT = 1024 * 1024


def head_lines(text: str, width: int) -> str:
    """The whole lines (``\n``-separated) at the start of ``text`` that
    ``one_line(text, width)`` is made from: ``one_line`` gives the same line for them as
    for ``text``, and each line is still a line of its own for a redactor."""
    if len(text) <= width:
        return text  # joined, it is no longer
    joined = 0
    end = 0
    while end < len(text):
        cut = text.find("\n", end)
        stop = len(text) if cut < 0 else cut + 1
        words = len(" ".join(text[end:stop].split()))
        joined += words + (1 if joined and words else 0)
        end = stop
        if joined > width:
            break
    return text[:end]


def _summary_arguments(value: Any) -> Any:
    """What a call past the budget keeps of its decoded input: the argument its summary
    is made from, cut to the lines the summary shows (so :func:`redacted_call` still
    redacts them line by line before it joins them)."""
    if isinstance(value, str):
        return head_lines(value[:TOOL_TEXT_LIMIT], SUMMARY_WIDTH)
    if not isinstance(value, dict):
        return tool_arguments(value)
    key = _summary_key(value)
    if key is None:
        return {}
    kept = value[key]
    return {
        str(key): head_lines(kept[:TOOL_TEXT_LIMIT], SUMMARY_WIDTH)
        if isinstance(kept, str)
        else kept
    }


class ToolTextBudget:
    """The tool-call text one run may hold (``limit`` characters, ``RUN_TOOL_TEXT`` by
    default): an agent making thousands of calls must not hold every input and result
    until the run ends, when a transcript keeps a few hundred KiB of them. Within the
    budget a call keeps its input, result and decoded input (each string capped at
    ``TOOL_TEXT_LIMIT``); once it is spent, a call keeps its name, summary and outcome,
    and only the lines its summary and error are made from. The budget is counted in
    the input's JSON text and the result's text; it may be overrun by one call's texts.

    One budget per run: a ``pytest_ooda.backends.CommandBackend`` (made once per
    run by the loop and the live run) holds one across its iterations."""

    def __init__(self, limit: int = RUN_TOOL_TEXT) -> None:
        self.limit = limit
        self.held = 0

    @property
    def spent(self) -> bool:
        return self.held >= self.limit

    def input(self, value: Any) -> tuple[str | None, Any, bool]:
        """A call's input as it is kept: ``(JSON text, decoded input, whole)``."""
        if self.spent:
            return None, _summary_arguments(value), value is None
        text = tool_text(value)
        self.held += len(text) if text is not None else 0
        return text, tool_arguments(value), True

    def text(self, value: Any) -> str | None:
        """A text of a call kept whole, or ``None`` once the budget is spent."""
        if self.spent:
            return None
        text = tool_text(value)
        self.held += len(text) if text is not None else 0
        return text

    def result(self, detail: str, *, failed: bool) -> str | None:
        """A call's result text as it is kept: whole, or past the budget the lines a
        failed call's error is made from (nothing of a call that succeeded)."""
        if not self.spent:
            return self.text(detail)
        return head_lines(detail[:TOOL_TEXT_LIMIT], ERROR_WIDTH) if failed else None
