"""The AI backend interface: one ``run`` call per iteration, returning a ``BackendResult``.

Three implementations live next to this module: ``command`` (a real subprocess),
``http`` (a chat-completion API over ``requests``) and ``replay`` (scripted or recorded
iterations). The loop runner only ever talks to the ``Backend`` protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Backend", "BackendResult", "StreamCallback", "Usage"]

StreamCallback = Callable[[bytes], None]


@dataclass(frozen=True)
class Usage:
    """Token accounting reported by an HTTP backend; ``cost`` only when prices are configured."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        if self.cost is None and other.cost is None:
            cost = None
        else:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
        )


@dataclass(frozen=True)
class BackendResult:
    """What one iteration of an AI backend produced.

    ``exit_code`` follows ``subprocess`` conventions: negative when the process was killed
    by a signal (``term_signal`` then holds the signal number). ``output`` is the tail of
    the captured output, at most ``max_output`` bytes before decoding; ``dropped_bytes``
    says how much of the head was discarded. ``error`` carries a short human-readable
    explanation for failures that are not visible in the output (HTTP status, timeout).
    """

    output: str
    exit_code: int
    duration: float = 0.0
    timed_out: bool = False
    term_signal: int | None = None
    truncated: bool = False
    dropped_bytes: int = 0
    total_bytes: int = 0
    broken_pipe: bool = False
    usage: Usage | None = None
    error: str | None = None


@runtime_checkable
class Backend(Protocol):
    """One AI invocation per call; a fresh process/request every time (no shared context)."""

    def run(
        self,
        prompt: str,
        *,
        iteration: int,
        workdir: Path,
        timeout: float | None,
        max_output: int,
        stream: StreamCallback | None,
    ) -> BackendResult:
        """Run one iteration with ``prompt``; ``iteration`` is 1-based."""
        ...
