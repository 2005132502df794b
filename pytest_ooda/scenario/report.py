"""The report of a scenario's run that missed its expectations, live or replayed: what
was missed, the per-iteration table, and each prompt drift with its diff.

A live run's report lands in terminals and CI logs, so it is redacted like a
recording — and before it is laid out: a table puts an iteration's number, outcome and
exit code in front of each output line, and ``DB_PASSWORD=…`` sharing its line with
them is no longer a line of its own that the assignment rules recognise. So every value
(each output, reason, error, tool call and problem) is redacted first, then placed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda._util import display_path

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from pytest_ooda.loop import LoopResult
    from pytest_ooda.scenario.drift import Drift
    from pytest_ooda.scenario.model import Scenario

__all__ = ["failure_text"]


def failure_text(
    scenario: Scenario,
    result: LoopResult,
    problems: Sequence[str],
    drifts: Sequence[Drift] = (),
    *,
    root: Path,
    mode: str,
    rerecord_hint: str | None = None,
    redact: Callable[[str], str] | None = None,
) -> str:
    """The report of a run (``mode``: ``live`` or ``replay``) that missed expectations:
    what was missed, the per-iteration table, and each prompt drift with its diff.
    ``redact`` is applied to every value before it is laid out (and to the whole)."""
    from pytest_ooda.loop import iteration_table

    if redact is not None:
        result = _redacted(result, redact)
        problems = [redact(problem) for problem in problems]
    where = display_path(scenario.path, root) if scenario.path else scenario.label
    lines = [
        f"scenario {scenario.label} ({where}) {mode}: status={result.status}, "
        f"{result.iterations} iteration(s)"
    ]
    lines.extend(f"  - {problem}" for problem in problems)
    lines.append("")
    lines.extend(iteration_table(result))
    for drift in drifts:
        lines.append("")
        lines.append(drift.describe())
    if drifts:
        lines.append("")
        lines.append(
            rerecord_hint
            or "  re-record with `pytest -m live --ooda-record-mode=new`, drop prompt_sha256 "
            "from a hand-written scenario, or pass --ooda-drift=warn"
        )
    text = "\n".join(lines)
    # The drifts' prompt diffs, and anything a value's redaction could not see whole.
    return redact(text) if redact is not None else text


def _redacted(result: LoopResult, redact: Callable[[str], str]) -> LoopResult:
    """``result`` with every text a report shows redacted on its own."""
    from dataclasses import replace

    from pytest_ooda.backends import redacted_call

    def maybe(text: str | None) -> str | None:
        return redact(text) if text is not None else None

    records = tuple(
        replace(
            record,
            output=redact(record.output),
            reason=redact(record.reason),
            error=maybe(record.error),
            tool_calls=tuple(redacted_call(call, redact) for call in record.tool_calls),
            permission_denials=tuple(
                redacted_call(call, redact) for call in record.permission_denials
            ),
        )
        for record in result.records
    )
    return replace(result, records=records, error=maybe(result.error))
