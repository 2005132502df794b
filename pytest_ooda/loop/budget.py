"""Budgets: how much a run may spend (``max_cost`` in US dollars, ``max_tokens``),
checked after every iteration against what the backend reported.

A budget is a ceiling, not a target: the iteration that reaches it finishes (an agent
CLI cannot be stopped mid-turn without losing its work), and the run stops after it
with status ``aborted``. A backend that reports no cost (or no tokens) cannot be held
to a budget in that unit; the runner says so once instead of pretending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.backends import Usage
    from pytest_ooda.loop.result import LoopResult


@dataclass(frozen=True)
class Budget:
    """The limits of one run; ``None`` is no limit in that unit."""

    max_cost: float | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.max_cost is not None and not self.max_cost > 0:
            raise ValueError("max_cost must be > 0")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")

    def __bool__(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None

    def describe(self) -> str:
        parts = []
        if self.max_cost is not None:
            parts.append(f"max_cost=${self.max_cost:g}")
        if self.max_tokens is not None:
            parts.append(f"max_tokens={self.max_tokens}")
        return " ".join(parts) or "no budget"

    def reached(self, spent: Usage | None) -> str | None:
        """Why the run must stop after spending ``spent`` (the run's total so far), or
        ``None`` while it is within every limit."""
        if spent is None:
            return None
        if self.max_cost is not None and spent.cost is not None and spent.cost >= self.max_cost:
            return f"budget reached: the run cost ${spent.cost:.4f}, max_cost is ${self.max_cost:g}"
        if self.max_tokens is not None and spent.total_tokens >= self.max_tokens:
            return (
                f"budget reached: the run used {spent.total_tokens} tokens, max_tokens is "
                f"{self.max_tokens}"
            )
        return None

    def unmeasured(self, reported: Usage | None) -> list[str]:
        """The limits an iteration that reported ``reported`` cannot be held to."""
        out = []
        if self.max_cost is not None and (reported is None or reported.cost is None):
            out.append("max_cost")
        if self.max_tokens is not None and reported is None:
            out.append("max_tokens")
        return out


def unmeasured_text(limits: Sequence[str]) -> str:
    """The warning for budgets a backend cannot be held to (``["max_cost"]`` …)."""
    names = " and ".join(limits)
    return (
        f"{names} cannot be enforced: the AI backend reports no "
        f"{'cost' if list(limits) == ['max_cost'] else 'usage'} (a plain-text command "
        "reports none; read an agent CLI's JSON with ai_output, or price an ai_api)"
    )


def unenforced_warning(result: LoopResult) -> str | None:
    """After a run: the budget it was given but could not be held to, if any."""
    if not result.records:
        return None
    limits = Budget(result.max_cost, result.max_tokens).unmeasured(result.usage)
    return unmeasured_text(limits) if limits else None


_N = TypeVar("_N", int, float)


def tightest(*limits: _N | None) -> _N | None:
    """The smallest of the budgets that are set: every budget applies."""
    chosen: _N | None = None
    for limit in limits:
        if limit is not None and (chosen is None or limit < chosen):
            chosen = limit
    return chosen
