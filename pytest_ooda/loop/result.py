"""What a run produced: per-iteration records, timing statistics and the
``LoopResult`` with its assertion helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda._types import EXIT_CODES, STATUSES, Status
from pytest_ooda.backends import ToolCall, Usage

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


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
        return " ".join(parts)


def _usage_text(usage: Usage) -> str:
    text = f"tokens={usage.input_tokens}in/{usage.output_tokens}out"
    if usage.cost is not None:
        text += f" cost={usage.cost:.4f}"
    return text


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
        reported = [r.usage for r in self.records if r.usage is not None]
        if not reported:
            return None
        total = Usage()
        for usage in reported:
            total = total + usage
        return total

    def summary(self) -> str:
        return (
            f"Loop completed status={self.status} iterations={self.iterations} "
            f"total_elapsed={seconds_text(self.elapsed)}"
        )

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
