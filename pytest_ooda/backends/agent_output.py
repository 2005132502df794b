"""Turning what an agent CLI reported into an iteration's result: :func:`open_stream`
finds the reader of an output format (``ai_output``, a format an agent registers, see
:mod:`pytest_ooda.agents`), :func:`parse` reads a finished invocation's whole output,
and :func:`backend_result` makes the ``BackendResult`` — broken output or an error the
agent reported is the iteration's ``error``; the infrastructure's fault, with the
evidence it rests on (the agent's words, or what the harness saw), its ``infra_error``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.agents import (
    DEFAULT_MAX_LINE,
    AgentReport,
    AgentStream,
    ToolTextBudget,
    one_line,
    output_format,
)
from pytest_ooda.backends.base import BackendResult

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ooda.agents import Activation, Evidence

__all__ = ["backend_result", "open_stream", "parse"]


def open_stream(
    kind: str,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    budget: ToolTextBudget | None = None,
    watched: bool = True,
    redact: Callable[[str], str] | None = None,
) -> AgentStream:
    """A reader for output format ``kind`` (not ``text``, which needs none); ``budget``:
    the run's tool-call text budget (a fresh one when ``None``); ``watched``: whether
    what it returns is shown to anyone (tool calls are rendered only then); ``redact``:
    what a tool call's text shown is redacted with before its head is put in front."""
    reader = output_format(kind).reader
    if reader is None:
        raise ValueError(f"no structured reader for ai_output {kind!r}")
    stream = reader(max_line=max_line, budget=budget, watched=watched)
    stream.redact = redact
    return stream


def parse(output: str, kind: str) -> AgentReport:
    """The report for a finished invocation's whole stdout in format ``kind``."""
    if output_format(kind).reader is None:
        return AgentReport(text=output)
    stream = open_stream(kind)
    for line in output.splitlines():
        stream.feed(line)
    stream.close()
    return stream.report()


def backend_result(
    report: AgentReport,
    kind: str,
    *,
    exit_code: int,
    max_output: int,
    duration: float = 0.0,
    timed_out: bool = False,
    term_signal: int | None = None,
    broken_pipe: bool = False,
    total_bytes: int | None = None,
    activations: tuple[Activation, ...] = (),
) -> BackendResult:
    """One iteration's result from the agent's report: the final text (its tail, at most
    ``max_output`` bytes) is the output signal detection reads; broken output, or an
    error the agent itself reported, is the iteration's ``error`` (a failure) — unless it
    was the infrastructure's fault (an API error, an agent that died before printing
    anything: ``total_bytes`` 0), then also its ``infra_error``."""
    data = report.text.encode("utf-8", errors="surrogateescape")
    kept = data[len(data) - max_output :] if len(data) > max_output else data
    error = report.error
    if error is None and report.is_error:
        error = f"the agent CLI reported an error: {one_line(report.text, 300) or '(no text)'}"
    infra = report.infra_error if error is not None or exit_code != 0 else None
    evidence: Evidence | None = "agent" if infra is not None else None
    if infra is None and total_bytes == 0 and exit_code != 0 and not timed_out:
        from pytest_ooda.backends.infra import died_silently, silence_evidence

        infra = died_silently(exit_code, term_signal)
        evidence = silence_evidence(term_signal)
    return BackendResult(
        output=kept.decode("utf-8", errors="replace"),
        exit_code=exit_code,
        duration=duration,
        timed_out=timed_out,
        term_signal=term_signal,
        truncated=len(kept) < len(data),
        dropped_bytes=len(data) - len(kept),
        total_bytes=len(data),
        broken_pipe=broken_pipe,
        usage=report.usage,
        error=error,
        tool_calls=report.tool_calls,
        permission_denials=report.permission_denials,
        turns=report.turns,
        model=report.model,
        tools_reported=output_format(kind).reports_tools,
        infra_error=infra,
        infra_evidence=evidence,
        activations=activations,
    )
