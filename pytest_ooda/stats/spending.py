"""What a session's budget left unmeasured: the sessions whose budget was spent, and
the scenarios they made fewer runs of than planned — whose gates and comparisons are
then *inconclusive: budget spent*, never a failure.

A session's records carry its caps (their stamp's ``budget``); what it spent is the sum
of its records' cost and tokens. It was spent when :meth:`~pytest_ooda.results.Budget.refusal`
says no further run may start after them — the rule the session itself applied before
each run, so a session that stopped for its budget reads as one, and one interrupted
while money was left does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.results import BUDGET_SPENT, Budget, Spent

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda.results import RunRecord

__all__ = ["shortfall", "spent_sessions"]


def spent_sessions(records: Iterable[RunRecord]) -> dict[str, str]:
    """The sessions among ``records`` whose budget was spent, each with why."""
    budgets: dict[str, Budget] = {}
    spent: dict[str, Spent] = {}
    for record in records:
        stamp = record.head.stamp
        if stamp is None or not stamp.budget:
            continue
        budgets[stamp.session] = Budget.from_json(dict(stamp.budget))
        usage = record.usage
        spent[stamp.session] = spent.get(stamp.session, Spent()).plus(
            usage.cost if usage is not None else None,
            usage.total_tokens if usage is not None else None,
        )
    out = {}
    for session, budget in budgets.items():
        refusal = budget.refusal(spent[session])
        if refusal is not None:
            out[session] = refusal
    return out


def shortfall(records: Sequence[RunRecord], spent: Mapping[str, str]) -> str | None:
    """``inconclusive: budget spent: 7 of 20 run(s) made (…)`` when a session whose
    budget was spent made fewer of this scenario's runs than planned."""
    made: dict[str, int] = {}
    planned: dict[str, int] = {}
    for record in records:
        stamp = record.head.stamp
        if stamp is None or stamp.session not in spent:
            continue
        made[stamp.session] = made.get(stamp.session, 0) + 1
        planned[stamp.session] = max(planned.get(stamp.session, 0), record.head.runs)
    for session, count in made.items():
        if count < planned[session]:
            return f"{BUDGET_SPENT}: {count} of {planned[session]} run(s) made ({spent[session]})"
    return None
