"""The structured events a run emits, for the CLI and the pytest plugin to render."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pytest_ooda.loop.result import IterationRecord, LoopResult, seconds_text


@dataclass(frozen=True)
class LoopStarted:
    procedure: str
    max_iterations: int | None
    backend: str
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        limit = "unlimited" if self.max_iterations is None else str(self.max_iterations)
        return f"Starting loop procedure={self.procedure} max_iterations={limit}"


@dataclass(frozen=True)
class IterationStarted:
    procedure: str
    number: int
    max_iterations: int | None
    started_at: float
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        where = _of(self.number, self.max_iterations)
        return f"Starting iteration {where} procedure={self.procedure}"


@dataclass(frozen=True)
class IterationFinished:
    procedure: str
    record: IterationRecord
    max_iterations: int | None
    consecutive_failures: int
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        r = self.record
        text = (
            f"Completed iteration {_of(r.number, self.max_iterations)} "
            f"elapsed={seconds_text(r.duration)} status={r.outcome}"
        )
        if r.outcome == "failure":
            text += f" consecutive_failures={self.consecutive_failures}"
            if r.reason:
                text += f' reason="{r.reason}"'
        return text


@dataclass(frozen=True)
class LoopWarning:
    procedure: str
    text: str
    iteration: int | None = None
    level: int = field(default=logging.WARNING, repr=False)

    def message(self) -> str:
        return self.text


@dataclass(frozen=True)
class LoopFinished:
    result: LoopResult
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        text = self.result.summary()
        if self.result.timing.count:
            text += "\n" + self.result.timing.describe()
        return text


LoopEvent = LoopStarted | IterationStarted | IterationFinished | LoopWarning | LoopFinished


def _of(number: int, limit: int | None) -> str:
    return str(number) if limit is None else f"{number}/{limit}"
