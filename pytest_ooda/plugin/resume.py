"""``--ooda-resume``: a measurement picked up where it stopped. Registered only when the
option is on. The rule is the library's (:func:`pytest_ooda.results.finished_runs`
over the results directory, :meth:`pytest_ooda.live.RunPlan.results_key` for a planned
run): a valid earlier run stands for its item, which is skipped and counted; an
``error`` one is made again, its new record naming the one it replaces. The session
continues the series of the directory's latest run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.plugin import SESSION
from pytest_ooda.plugin.state import LIVE_REPORT, SKIP_AT_ITEM, LiveReport

if TYPE_CHECKING:
    from pytest_ooda.live import RunPlan
    from pytest_ooda.results import RunKey, RunRecord


class Resume:
    """The runs the results directory holds, read once per process when first asked."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._finished: dict[RunKey, RunRecord] | None = None

    def finished(self) -> dict[RunKey, RunRecord]:
        """The results directory's runs by what makes a run the same run
        (:func:`pytest_ooda.results.finished_runs`)."""
        if self._finished is None:
            from pytest_ooda.results import finished_runs

            self._finished = finished_runs(results_records(self.config))
        return self._finished

    def earlier(self, plan: RunPlan) -> RunRecord | None:
        """The earlier run ``plan`` would make again."""
        finished = self.finished()
        key = plan.results_key() if finished else None
        return finished.get(key) if key is not None else None

    def planned(self, plan: RunPlan) -> RunPlan | None:
        """What :meth:`before` will make of ``plan``, decided ahead (a cluster's window):
        ``None`` when an earlier run is kept instead, else the plan to run."""
        earlier = self.earlier(plan)
        if earlier is None:
            return plan
        return replace(plan, replaces=earlier.id) if not earlier.valid else None

    def before(self, item: pytest.Item, plan: RunPlan) -> RunPlan:
        """Skip item ``item`` when its run is kept from an earlier session (its report
        names that run, which counts in this session's numbers); else the plan to run."""
        earlier = self.earlier(plan)
        if earlier is None:
            return plan
        if not earlier.valid:
            return replace(plan, replaces=earlier.id)
        item.stash[LIVE_REPORT] = LiveReport(resumed=earlier.id)
        item.stash[SKIP_AT_ITEM] = True
        pytest.skip(
            f"resumed: run {plan.run} of {plan.label} is already in the results "
            f"({earlier.outcome}, session {earlier.session or '?'}); not run again"
        )

    def series(self) -> str | None:
        """The measurement the session continues: the one the directory's latest run is
        of (what reading the directory left out is said as a warning)."""
        held = results_records(self.config, warn=True)
        if not held:
            return None
        latest = max(held, key=lambda record: record.finished_at)
        return latest.series or latest.session


def results_records(config: pytest.Config, *, warn: bool = False) -> list[RunRecord]:
    """Every record the results directory holds; ``warn``: say what reading left out
    (a line nested too deep, a record cut short)."""
    from pytest_ooda.errors import OodaError
    from pytest_ooda.results import read_results

    directory = config.stash[SESSION].results_dir
    if not directory.is_dir():
        return []
    try:
        results = read_results([directory])
    except OodaError as error:
        raise pytest.UsageError(f"--ooda-resume: cannot read the results: {error}") from None
    for warning in results.warnings if warn else ():
        config.issue_config_time_warning(warning, stacklevel=2)
    return list(results.records)
