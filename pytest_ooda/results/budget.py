"""A session's budget (``--ooda-budget=USD``, ``--ooda-budget-tokens=N``): one cap for
every live run of a session, wherever the runs are made, and the accounting that holds
it.

What the session has spent is the sum of its finished runs' cost and tokens, kept in a
file of the session's directory (:class:`Spend`), appended to by the one process that
receives every run's record (pytest, xdist's controller, a cluster's controller, ``ooda
ablate``) and read by every process before it starts a run. A run starts only while the
spend, with one more run at the mean cost of those finished, stays within the cap
(:meth:`Budget.refusal`): the first run always starts, and no run is started once the
next would pass the cap. Runs already under way finish and count, so a session may end
above its cap by what they cost. A run that does not start is never a failure: what
could not be measured is *inconclusive: budget spent*.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["BUDGET_SPENT", "Budget", "Spend", "Spent"]

#: How reports word what the budget left unmeasured.
BUDGET_SPENT = "inconclusive: budget spent"


@dataclass(frozen=True)
class Spent:
    """What the finished runs cost: dollars (of the runs that priced their tokens),
    tokens, and how many runs."""

    cost: float = 0.0
    tokens: int = 0
    runs: int = 0
    #: Runs that reported no cost (an agent that does not price its tokens).
    unpriced: int = 0

    def plus(self, cost: float | None, tokens: int | None) -> Spent:
        return Spent(
            self.cost + (cost or 0.0),
            self.tokens + (tokens or 0),
            self.runs + 1,
            self.unpriced + (cost is None),
        )


@dataclass(frozen=True)
class Budget:
    """A session's caps: US dollars and/or tokens (``None``: no cap of that kind)."""

    usd: float | None = None
    tokens: int | None = None

    def __bool__(self) -> bool:
        return self.usd is not None or self.tokens is not None

    def describe(self) -> str:
        """``$2.00`` / ``50,000 tokens`` / both."""
        parts = []
        if self.usd is not None:
            parts.append(f"${self.usd:.2f}")
        if self.tokens is not None:
            parts.append(f"{self.tokens:,} tokens")
        return " and ".join(parts)

    def refusal(self, spent: Spent) -> str | None:
        """Why no further run may start after ``spent`` (``None``: it may): the spend
        with one more run at the mean of the finished runs would pass a cap."""
        if not spent.runs:
            return None
        priced = spent.runs - spent.unpriced
        if self.usd is not None and priced:
            next_cost = spent.cost / priced
            if spent.cost + next_cost > self.usd:
                return (
                    f"budget spent: ${spent.cost:.4f} of ${self.usd:.2f} after {spent.runs} "
                    f"run(s), and a run costs about ${next_cost:.4f}"
                )
        if self.tokens is not None:
            next_tokens = spent.tokens / spent.runs
            if spent.tokens + next_tokens > self.tokens:
                return (
                    f"budget spent: {spent.tokens:,} of {self.tokens:,} tokens after "
                    f"{spent.runs} run(s), and a run takes about {next_tokens:,.0f}"
                )
        return None

    def unheld(self, spent: Spent) -> str | None:
        """A note when a dollar cap cannot be held: no finished run reported a cost."""
        if self.usd is not None and spent.runs and spent.unpriced == spent.runs:
            return (
                f"the session's budget of ${self.usd:.2f} cannot be held: no run reported "
                "a cost (the agent does not price its tokens); give --ooda-budget-tokens"
            )
        return None

    def to_json(self) -> dict[str, Any]:
        return {"usd": self.usd, "tokens": self.tokens}

    @classmethod
    def from_json(cls, data: Any) -> Budget:
        if not isinstance(data, dict):
            return cls()
        usd, tokens = data.get("usd"), data.get("tokens")
        return cls(
            float(usd) if isinstance(usd, (int, float)) and not isinstance(usd, bool) else None,
            tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
        )


class Spend:
    """A session's spend, shared through ``path``: one line per finished run (``cost
    tokens``, ``-`` for a cost not reported), appended whole by one writer."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, cost: float | None, tokens: int | None) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = f"{'-' if cost is None else repr(float(cost))} {int(tokens or 0)}\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("ascii"))
        finally:
            os.close(fd)

    def total(self) -> Spent:
        """What the runs counted so far cost (nothing when none is)."""
        try:
            text = self.path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            return Spent()
        spent = Spent()
        # A line still being written has no newline yet: it counts at the next read.
        for line in text[: text.rfind("\n") + 1].splitlines():
            cost_text, _, tokens_text = line.partition(" ")
            try:
                cost = None if cost_text == "-" else float(cost_text)
                tokens = int(tokens_text)
            except ValueError:
                continue
            spent = spent.plus(cost, tokens)
        return spent
