"""The session's budget (``--ooda-budget=USD``, ``--ooda-budget-tokens=N``): one cap
for every live run of the session. Registered (as ``ooda-budget``) when a budget is
given and ``-m live`` selects live items.

The process that sees every finished run (the results log's) counts its cost and
tokens in the session directory's spend file (:class:`pytest_ooda.results.Spend`);
every process, before a run — and a cluster's window before it plans one — asks
whether the next run would pass the cap (:meth:`pytest_ooda.results.Budget.refusal`).
A run refused is skipped as ``not run: budget spent …``: never a failure. The session's
stamp carries the caps, so the reports tell a scenario the budget left short of runs
(its gates and comparisons *inconclusive: budget spent*) from one that ran them all.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.plugin import SESSION
from pytest_ooda.plugin.session_dir import session_dir
from pytest_ooda.plugin.state import SKIP_AT_ITEM
from pytest_ooda.settings import BUDGET, BUDGET_TOKENS

if TYPE_CHECKING:
    from pytest_ooda.live import RunPlan
    from pytest_ooda.results import Budget, RunRecord, SessionStamp, Spend
    from pytest_ooda.settings import SessionSettings

#: How a run the budget left out is skipped.
NOT_RUN = "not run: "


def session_budget(settings: SessionSettings) -> Budget:
    """The caps the settings give (an empty :class:`Budget` when none)."""
    from pytest_ooda.results import Budget

    return Budget(settings[BUDGET], settings[BUDGET_TOKENS])


def stamped(stamp: SessionStamp, settings: SessionSettings) -> SessionStamp:
    """``stamp`` with the session's caps (unchanged without a budget)."""
    budget = session_budget(settings)
    if not budget:
        return stamp
    return replace(stamp, budget=MappingProxyType(budget.to_json()))


class SessionBudget:
    """The session's caps, its shared spend, and what it left unrun."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.budget = session_budget(config.stash[SESSION])
        #: Items skipped for the budget (counted where every report arrives).
        self.not_run = 0
        self.problem: str | None = None

    @property
    def spend(self) -> Spend:
        from pytest_ooda.results import Spend

        return Spend(session_dir(self.config).directory / "budget.spend")

    def count(self, record: RunRecord) -> None:
        """A finished run of this session, in the spend every process reads. A run
        resumed from an earlier session cost nothing now and is not counted."""
        usage = record.usage
        try:
            self.spend.add(
                usage.cost if usage is not None else None,
                usage.total_tokens if usage is not None else None,
            )
        except OSError as error:
            # Not counted, the cap cannot hold: said at the end, never a lost record.
            self.problem = f"a run's spend was not counted ({error}): the cap may be passed"

    def refusal(self) -> str | None:
        """Why no further run may start (``None``: the next may)."""
        return self.budget.refusal(self.spend.total())

    def before(self, item: pytest.Item, plan: RunPlan) -> None:
        """Skip item ``item`` when the next run would pass the budget."""
        refusal = self.refusal()
        if refusal is not None:
            item.stash[SKIP_AT_ITEM] = True
            pytest.skip(f"{NOT_RUN}run {plan.run}/{plan.runs} of {plan.label}: {refusal}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.skipped and "::live[" in report.nodeid:
            longrepr = report.longrepr
            message = str(longrepr[2]) if isinstance(longrepr, tuple) else ""
            if message.removeprefix("Skipped: ").startswith(NOT_RUN):
                self.not_run += 1

    def summary(self) -> list[str]:
        """The session's spend against its caps, and what was left unrun."""
        from pytest_ooda.report import money

        spent = self.spend.total()
        used = f"{money(spent.cost)}, {spent.tokens:,} tokens over {spent.runs} run(s)"
        lines = [f"budget: {used} of {self.budget.describe()}"]
        if self.not_run:
            lines.append(
                f"budget: {self.not_run} run(s) not run: budget spent (their scenarios' gates "
                "and comparisons are inconclusive, not failed)"
            )
        unheld = self.budget.unheld(spent)
        for problem in (unheld, self.problem):
            if problem is not None:
                lines.append(f"warning: {problem}")
        return lines

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if hasattr(self.config, "workerinput"):
            return
        first, *rest = self.summary()
        terminalreporter.write_line(first)
        for line in rest:
            terminalreporter.write_line(line, yellow=True)
