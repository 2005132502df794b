"""Early stopping: a gated scenario's remaining runs are not made once its
``success_rate`` gate is settled (a sequential test, the SPRT: the verdict is the
library's, :func:`pytest_ooda.stats.settled_early`). Registered when ``-m
live`` selects live items: a scenario's own ``stop_early: true`` turns it on as
``--ooda-stop-early`` does for every gate.

The process that sees every finished run (the results log's) counts it in the session
directory's tally; every process, before a run, asks the tally whether the run's
scenario is settled already — so ``-n 2`` workers and a cluster's window stop alike.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.plugin import SESSION
from pytest_ooda.plugin.session_dir import session_dir
from pytest_ooda.plugin.state import SKIP_AT_ITEM
from pytest_ooda.settings import STOP_EARLY

if TYPE_CHECKING:
    from pytest_ooda.live import RunPlan
    from pytest_ooda.results import RunRecord


class EarlyStop:
    """The session's tally of finished runs per scenario, and the gate's verdict."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def count(self, record: RunRecord) -> None:
        """A finished run (or an earlier one a resumed session counts), in the tally
        per scenario and variant, as the gates count. Without the tally a run is only
        not skipped: nothing is lost."""
        from pytest_ooda.results import add_tally

        with contextlib.suppress(OSError):
            add_tally(
                session_dir(self.config).tallies,
                record.head.procedure,
                record.scenario_key,
                record.outcome,
            )

    def settled(self, plan: RunPlan) -> str | None:
        """Why the run is not needed: its scenario's gate is settled already
        (:func:`pytest_ooda.stats.settled_early`, over the session's tally)."""
        from pytest_ooda.results import tally_counts
        from pytest_ooda.stats import Sprt, settled_early

        scenario = plan.scenario
        aggregate = scenario.expect.aggregate if scenario.expect is not None else None
        if aggregate is None or aggregate.min_success_rate is None:
            return None
        variant = plan.variant.name if plan.variant is not None else None
        key = f"{scenario.name}@{variant}" if variant else scenario.name
        counts = tally_counts(session_dir(self.config).tallies, scenario.procedure, key)
        successes, failures = counts["success"], counts["failure"]
        stop_early = aggregate.stop_early or self.config.stash[SESSION][STOP_EARLY]
        verdict = settled_early(
            aggregate.min_success_rate, successes, failures, stop_early=stop_early
        )
        if verdict is None:
            return None
        word = "passed" if verdict else "failed"
        return (
            f"stopped early: {scenario.procedure}/{key}'s success rate gate (min "
            f"{aggregate.min_success_rate:.0%}) is settled as {word} after "
            f"{successes + failures} valid run(s), {successes} successful "
            f"({Sprt(aggregate.min_success_rate).describe()})"
        )

    def before(self, item: pytest.Item, plan: RunPlan) -> None:
        """Skip item ``item`` when its scenario's gate is settled."""
        stopped = self.settled(plan)
        if stopped is not None:
            item.stash[SKIP_AT_ITEM] = True
            pytest.skip(stopped)
