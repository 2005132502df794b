"""Per-iteration tables for a person: what each iteration of a run signalled, how it
ended and the tail of what it printed (failure reports of replays and live runs)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.backends import ToolCall
    from pytest_ooda.loop.result import LoopResult

__all__ = ["iteration_table", "printable", "served_table"]

_OUTPUT_TAIL = 5
_OUTPUT_WIDTH = 120

# Control characters, and the bidirectional overrides that can make a terminal show text
# in another order than it has: shown escaped, so an agent's output cannot recolour,
# clear or reorder the failure report around it.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with terminal control characters escaped (``\\x1b``, ``\\u202e``)."""
    return _UNPRINTABLE.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


def _tail(text: str, lines: int = _OUTPUT_TAIL) -> list[str]:
    kept = [printable(line) for line in text.rstrip("\n").splitlines()[-lines:]]
    return [line if len(line) <= _OUTPUT_WIDTH else line[:_OUTPUT_WIDTH] + "…" for line in kept]


#: Tool calls listed per iteration in a failure report; the rest are counted.
_SHOWN_CALLS = 8


def _calls_text(calls: Sequence[ToolCall]) -> str:
    """``Write hello.py · Bash pytest -q (failed)``: the first calls, then a count."""
    shown = [
        printable(f"{call.name} {call.summary}".strip() + (" (failed)" if call.ok is False else ""))
        for call in calls[:_SHOWN_CALLS]
    ]
    if len(calls) > _SHOWN_CALLS:
        shown.append(f"+{len(calls) - _SHOWN_CALLS} more")
    return " · ".join(shown)


def iteration_table(result: LoopResult) -> list[str]:
    """Per iteration: signal found, outcome, exit code, and the tail of the output."""
    if not result.records:
        return ["  (no iteration ran)" + (f": {result.error}" if result.error else "")]
    lines = ["  iter  signal   outcome  exit  output (tail)"]
    for record in result.records:
        tail = _tail(record.output) or ["<no output>"]
        lines.append(
            f"  {record.number:>4}  {record.signal_name:<7}  {record.outcome:<7}  "
            f"{record.exit_code:>4}  {tail[0]}"
        )
        lines.extend(f"  {'':>4}  {'':<7}  {'':<7}  {'':>4}  {more}" for more in tail[1:])
        if record.tool_calls:
            lines.append(f"  {'':>4}  tools: {_calls_text(record.tool_calls)}")
        if record.permission_denials:
            lines.append(f"  {'':>4}  denied: {_calls_text(record.permission_denials)}")
        reason = record.reason if record.outcome == "failure" else ""
        if reason:
            lines.append(f"  {'':>4}  reason: {reason}")
        # The reason usually quotes the error already: print it once.
        if record.error and record.error not in reason:
            lines.append(f"  {'':>4}  error: {record.error}")
    if result.error:
        lines.append(f"  loop error: {result.error}")
    return lines


def served_table(outputs: Sequence[tuple[str, int]]) -> list[str]:
    """Per replayed iteration: signal, exit code and output tail, for a replay that
    stopped before the loop produced a result (it ran out of recorded iterations)."""
    from pytest_ooda.loop.signals import find_signal

    lines = ["  iter  signal   exit  output (tail)"]
    for number, (output, exit_code) in enumerate(outputs, start=1):
        tail = _tail(output) or ["<no output>"]
        signal = find_signal(output) or "none"
        lines.append(f"  {number:>4}  {signal:<7}  {exit_code:>4}  {tail[0]}")
        lines.extend(f"  {'':>4}  {'':<7}  {'':>4}  {more}" for more in tail[1:])
    return lines
