"""What a run produced: per-iteration records, timing statistics and the
``LoopResult`` with its assertion helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda._types import EXIT_CODES, STATUSES, Status

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pytest_ooda.agents import Activation
    from pytest_ooda.backends import ToolCall, Usage


@dataclass(frozen=True)
class TimingStats:
    """Durations of completed iterations; ``stddev`` is the population standard deviation,
    ``None`` with fewer than two samples (as are min/max/mean with none)."""

    count: int = 0
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    stddev: float | None = None

    def describe(self) -> str:
        if not self.count:
            return "Iteration timing: count=0"
        text = (
            f"Iteration timing: count={self.count} min={seconds_text(self.min or 0.0)} "
            f"max={seconds_text(self.max or 0.0)} mean={seconds_text(self.mean or 0.0)}"
        )
        if self.stddev is not None:
            text += f" stddev={seconds_text(self.stddev)}"
        return text


class RunningStats:
    """Welford's online mean/variance: O(1) memory however long the loop runs."""

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self._m2 = 0.0
        self.min = math.inf
        self.max = -math.inf

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (value - self.mean)
        self.min = min(self.min, value)
        self.max = max(self.max, value)

    def snapshot(self) -> TimingStats:
        if not self.count:
            return TimingStats()
        stddev = math.sqrt(self._m2 / self.count) if self.count >= 2 else None
        return TimingStats(self.count, self.min, self.max, self.mean, stddev)


def seconds_text(value: float) -> str:
    return f"{value:.1f}s"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class IterationRecord:
    """Everything known about one iteration.

    ``signal`` is the promise found in the output (``"SUCCESS"``, ``"FAILURE"`` or
    ``None``); ``term_signal`` the Unix signal that killed the process, if any.
    ``outcome`` is ``ok``, ``success`` or ``failure`` and ``reason`` says why it failed.
    An agent CLI read in a machine-readable ``ai_output`` also reports ``usage``, the
    ``tool_calls`` it made (every one when ``tools_reported``), the ones it was refused
    (``permission_denials``), its ``turns`` and ``model``.
    """

    number: int
    prompt: str
    prompt_sha256: str
    output: str
    exit_code: int
    signal: str | None
    outcome: str
    duration: float
    reason: str = ""
    term_signal: int | None = None
    timed_out: bool = False
    truncated: bool = False
    dropped_bytes: int = 0
    broken_pipe: bool = False
    usage: Usage | None = None
    error: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    permission_denials: tuple[ToolCall, ...] = ()
    turns: int | None = None
    model: str | None = None
    tools_reported: bool = False
    #: Tries of this iteration that the infrastructure spoiled before this one, and
    #: (when the last try was spoiled too) why.
    retries: int = 0
    infra_error: str | None = None
    #: What ``infra_error`` rests on (``agent``: its own words or silent exit;
    #: ``harness``: what pytest-ooda saw itself).
    infra_evidence: str | None = None
    #: What fired besides the tool calls (skills, subagents, commands, hooks).
    activations: tuple[Activation, ...] = ()

    @property
    def signal_name(self) -> str:
        """The signal as written in scenario ``expect.signals``: ``none`` when absent."""
        return self.signal or "none"

    def summary(self) -> str:
        parts = [f"iteration {self.number}: {self.outcome}"]
        if self.reason:
            parts.append(f"({self.reason})")
        parts.append(f"exit={self.exit_code} signal={self.signal_name}")
        parts.append(f"elapsed={seconds_text(self.duration)}")
        if self.truncated:
            parts.append(f"truncated(dropped {self.dropped_bytes} bytes)")
        if self.usage is not None:
            parts.append(_usage_text(self.usage))
        if self.turns is not None:
            parts.append(f"turns={self.turns}")
        if self.tools_reported or self.tool_calls:
            parts.append(f"tool_calls={len(self.tool_calls)}")
        if self.permission_denials:
            parts.append(f"denied={len(self.permission_denials)}")
        if self.retries:
            parts.append(f"retries={self.retries}")
        if self.infra_error:
            parts.append(f"infrastructure error ({self.infra_error})")
        return " ".join(parts)

    def denial_warning(self) -> str | None:
        """What to tell a person when the agent was refused tools in this iteration:
        its CLI exits 0 and prints its text anyway, so the run looks fine but did not do
        what it was asked."""
        if not self.permission_denials:
            return None
        shown = ", ".join(
            f"{call.name} ({call.summary})" if call.summary else call.name
            for call in self.permission_denials[:5]
        )
        more = len(self.permission_denials) - 5
        if more > 0:
            shown += f" and {more} more"
        count = len(self.permission_denials)
        return (
            f"iteration {self.number}: the agent was denied {count} tool call"
            f"{'s' if count != 1 else ''}: {shown}; it could not do what it was asked. "
            "Run it unattended: the flags each agent needs are in `ooda help agents`"
        )


def _usage_text(usage: Usage) -> str:
    text = f"tokens={usage.input_tokens}in/{usage.output_tokens}out"
    cached = usage.cache_read_tokens + usage.cache_creation_tokens
    if cached:
        text += f"/{cached}cache"
    if usage.cost is not None:
        text += f" cost=${usage.cost:.4f}"
    return text


def total_usage(records: Sequence[IterationRecord]) -> Usage | None:
    """The summed usage of ``records``, ``None`` when none reported any."""
    total: Usage | None = None
    for record in records:
        if record.usage is not None:
            total = record.usage if total is None else total + record.usage
    return total


def _excerpt(text: str, lines: int = 6, width: int = 160) -> str:
    tail = text.rstrip("\n").splitlines()[-lines:]
    return "\n".join(
        "      | " + (line if len(line) <= width else line[:width] + "…") for line in tail
    )


@dataclass(frozen=True)
class LoopResult:
    """The outcome of one ``run_procedure`` call. Never raises ``SystemExit``; the CLI maps
    ``status`` to ``exit_code``."""

    procedure: str
    status: Status
    records: tuple[IterationRecord, ...]
    timing: TimingStats
    elapsed: float
    max_iterations: int | None
    failure_threshold: int
    context: tuple[str, ...] = ()
    workdir: Path | None = None
    backend: str = ""
    error: str | None = None
    #: The budget the run was held to, and whether reaching it ended the run.
    max_cost: float | None = None
    max_tokens: int | None = None
    stopped_by_budget: bool = False
    #: Why the infrastructure ended the run (retries did not help), ``None`` when it
    #: did not: such a run measured nothing about the procedure.
    infra_error: str | None = None

    @property
    def retries(self) -> int:
        """Iterations retried after infrastructure errors, over the whole run."""
        return sum(record.retries for record in self.records)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def iterations(self) -> int:
        return len(self.records)

    @property
    def outputs(self) -> list[str]:
        return [r.output for r in self.records]

    @property
    def prompts(self) -> list[str]:
        return [r.prompt for r in self.records]

    @property
    def signals(self) -> list[str]:
        """Per iteration: ``SUCCESS``, ``FAILURE`` or ``none``."""
        return [r.signal_name for r in self.records]

    @property
    def usage(self) -> Usage | None:
        """Summed token usage, ``None`` when no iteration reported any."""
        return total_usage(self.records)

    @property
    def cost(self) -> float | None:
        """The run's cost in US dollars, ``None`` when no iteration reported one."""
        usage = self.usage
        return usage.cost if usage is not None else None

    @property
    def total_tokens(self) -> int | None:
        """Every token the run used (input, output, cache), ``None`` when not reported."""
        usage = self.usage
        return usage.total_tokens if usage is not None else None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every iteration's tool calls, in order."""
        return tuple(call for record in self.records for call in record.tool_calls)

    @property
    def permission_denials(self) -> tuple[ToolCall, ...]:
        return tuple(call for record in self.records for call in record.permission_denials)

    @property
    def activations(self) -> tuple[Activation, ...]:
        """What fired in every iteration, in order (``expect.activation``)."""
        return tuple(item for record in self.records for item in record.activations)

    @property
    def tools_reported(self) -> bool:
        """Whether every iteration's output format listed its tool calls."""
        return bool(self.records) and all(r.tools_reported for r in self.records)

    def summary(self) -> str:
        text = (
            f"Loop completed status={self.status} iterations={self.iterations} "
            f"total_elapsed={seconds_text(self.elapsed)}"
        )
        usage = self.usage
        if usage is not None:
            text += f" tokens={usage.total_tokens}"
            if usage.cost is not None:
                text += f" cost=${usage.cost:.4f}"
        return text

    def report(self, *, output_lines: int = 6) -> str:
        """A readable account of the run: status, then each iteration with its output tail."""
        limit = "unlimited" if self.max_iterations is None else str(self.max_iterations)
        lines = [
            f"procedure {self.procedure!r}: status={self.status} "
            f"iterations={self.iterations} max_iterations={limit} "
            f"failure_threshold={self.failure_threshold}"
        ]
        if self.error:
            lines.append(f"  error: {self.error}")
        for record in self.records:
            lines.append("  " + record.summary())
            if record.error:
                lines.append(f"      error: {record.error}")
            if output_lines and record.output.strip():
                lines.append(_excerpt(record.output, output_lines))
        if not self.records:
            lines.append("  (no iteration ran)")
        return "\n".join(lines)

    def assert_status(self, status: str, *, iterations: int | None = None) -> LoopResult:
        """Raise ``AssertionError`` with the per-iteration report unless the run ended with
        ``status`` (and ran exactly ``iterations``, when given). Returns ``self``."""
        __tracebackhide__ = True  # pytest shows the failure at the caller's line
        if status not in EXIT_CODES:
            raise ValueError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
        problems = []
        if self.status != status:
            problems.append(f"expected status {status!r}, got {self.status!r}")
        if iterations is not None and self.iterations != iterations:
            problems.append(f"expected {iterations} iteration(s), ran {self.iterations}")
        if problems:
            raise AssertionError("; ".join(problems) + "\n" + self.report())
        return self

    def assert_signals(self, expected: Sequence[str]) -> LoopResult:
        """Raise ``AssertionError`` unless the per-iteration signals are ``expected``
        (each ``SUCCESS``, ``FAILURE`` or ``none``)."""
        __tracebackhide__ = True
        if list(expected) != self.signals:
            raise AssertionError(
                f"expected signals {list(expected)}, got {self.signals}\n" + self.report()
            )
        return self
