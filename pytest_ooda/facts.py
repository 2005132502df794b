"""The plain values a run's facts are made of: what an agent's work cost (:class:`Usage`),
the tools it called (:class:`ToolCall`) and what a verification command did
(:class:`CommandOutcome`).

A leaf: the layers that make these facts (``backends/``, ``scenario/``) and the record
that keeps them (``results/``) both import them from here, so reading or writing a
results log never loads the backends or the scenario package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CommandOutcome", "ToolCall", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Token accounting an AI backend reported: an HTTP API's usage block, or an agent
    CLI's JSON report. ``cost`` (US dollars) only when the backend priced it (an agent
    CLI's own figure, or the prices configured for an HTTP API)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Every token counted: input, output and both kinds of cache tokens."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_creation_tokens
        )

    def as_dict(self) -> dict[str, Any]:
        """The counts and the cost (``None`` when not priced), as scenario files and
        results logs write them."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cost": self.cost,
        }

    def __add__(self, other: Usage) -> Usage:
        if self.cost is None and other.cost is None:
            cost = None
        else:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
        )


@dataclass(frozen=True)
class ToolCall:
    """One tool an agent called, as its CLI reported it: ``summary`` is a short line of
    the input (the command, the file); ``ok`` is ``None`` until its result is known."""

    name: str
    summary: str = ""
    ok: bool | None = None
    error: str | None = None
    id: str | None = field(default=None, compare=False)
    #: The whole input (JSON text) and result text as the CLI reported them, capped at
    #: ``TOOL_TEXT_LIMIT`` characters; kept for transcripts, never in ``as_dict``.
    input: str | None = field(default=None, compare=False)
    result: str | None = field(default=None, compare=False)
    #: The decoded input the summary and ``input`` were made from (strings capped at
    #: ``TOOL_TEXT_LIMIT``), so a redactor sees each value's own lines before they are
    #: joined into one summary line or escaped into JSON (``redacted_call``); never
    #: written anywhere itself.
    arguments: Any = field(default=None, compare=False, repr=False)
    #: ``False``: the run's budget for tool-call text was spent before this call, so
    #: ``input`` and ``result`` are not kept and ``arguments`` holds only what the
    #: summary is made from (``tool_calls.ToolTextBudget``).
    texts_kept: bool = field(default=True, compare=False, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The call as scenario files and results logs write it (without the CLI's id)."""
        return {"name": self.name, "summary": self.summary, "ok": self.ok, "error": self.error}


@dataclass(frozen=True)
class CommandOutcome:
    """What one verification command did, for the results log and the reports:
    ``problem`` says how it missed its expectation (``None`` when it passed);
    ``output_tail`` is the end of its output."""

    run: str
    exit_code: int
    expected_exit_code: int
    duration_s: float
    timed_out: bool = False
    problem: str | None = None
    output_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.problem is None

    def as_dict(self) -> dict[str, object]:
        return {
            "run": self.run,
            "exit_code": self.exit_code,
            "expected_exit_code": self.expected_exit_code,
            "duration_s": self.duration_s,
            "timed_out": self.timed_out,
            "passed": self.passed,
            "problem": self.problem,
            "output_tail": self.output_tail,
        }
