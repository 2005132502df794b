"""Live items (``live[<name>]``, ``live[<name>@<variant>#k]``, a trigger set's prompt
``live[<name>/should-1]``): a scenario against the real agent, planned with
:func:`pytest_ooda.live.plan_run` and run with :func:`pytest_ooda.live.run_live` where
the item runs — or, under ``--ooda-executor``, waited for from the cluster. Here a
run's warnings are issued at the scenario file, its recording and cassette written, and
the item's verdict decided: with an aggregate gate a failed run is a sample (``xfail``)
and an infrastructure ``error`` is not counted (``skip``); without one both fail the
item, as a failed run always has.

:class:`LiveReports`, registered when ``-m live`` selects live items, attaches each
run's record to its item's call report (:class:`~pytest_ooda.plugin.state.LiveReport`),
in its JSON form across xdist. Before a run, the resume and early-stop features (when
registered) may keep it from being made, and on an xdist worker the run leaves the
marker its controller reads if the worker dies.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol, cast

import pytest

from pytest_ooda._util import display_path
from pytest_ooda.errors import NoAICommandError, OodaError
from pytest_ooda.plugin import SESSION
from pytest_ooda.plugin.items import locate_compose_error
from pytest_ooda.plugin.replays import ScenarioItem
from pytest_ooda.plugin.report import ItemFailure, IterationBoundaries, issue_at
from pytest_ooda.plugin.session_dir import (
    clear_marker,
    first_said,
    leave_marker,
    run_dir,
    session_dir,
)
from pytest_ooda.plugin.state import (
    LIVE_ATTRIBUTE,
    LIVE_REPORT,
    PLANNED,
    SKIP_AT_ITEM,
    LiveReport,
)

if TYPE_CHECKING:
    from collections.abc import Generator
    from pathlib import Path

    from pytest_ooda.live import LiveRun, RunPlan
    from pytest_ooda.plugin.budget import SessionBudget
    from pytest_ooda.plugin.changed import ChangedSelection
    from pytest_ooda.plugin.early_stop import EarlyStop
    from pytest_ooda.plugin.resume import Resume
    from pytest_ooda.variants import Variant


class Cluster(Protocol):
    """What a live item asks of the cluster feature (``plugin.cluster.ClusterRuns``,
    which imports this module)."""

    def made(self, item: LiveItem) -> bool: ...

    def wait(self, item: LiveItem, plan: RunPlan) -> tuple[LiveRun, tuple[Path, ...]]: ...


class LiveItem(ScenarioItem):
    """The scenario against the real AI command, in a fresh git-initialised workspace:
    run ``run_index`` of the scenario's ``run_count`` repeats, under ``variant`` — of
    its trigger set's prompt ``trigger`` (``should-2``), when it has one."""

    def __init__(
        self,
        *,
        run: int = 1,
        runs: int = 1,
        variant: Variant | None = None,
        trigger: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.run_index = run
        self.run_count = runs
        self.variant = variant
        self.trigger = trigger

    def plan(self) -> RunPlan:
        """This item's run, decided (:func:`pytest_ooda.live.plan_run`) from the
        session's settings, its stamp and its shared directory (this process's, or the
        xdist controller's): skipped without an AI command; a mistake in its files is
        the item's located error."""
        from pytest_ooda import live
        from pytest_ooda.scenario import load_for

        node = self.procedure_node
        shared = session_dir(self.config)
        try:
            scenario = load_for(node.procedure.name, self.scenario_path, known=node.known())
            return live.plan_run(
                self.config.stash[SESSION],
                node.procedure.name,
                scenario,
                collected=node.loaded.path,
                variant=self.variant,
                run=self.run_index,
                runs=self.run_count,
                nodeid=self.nodeid,
                read_only=node.file_node.read_only,
                stamp=shared.stamp,
                slots_dir=shared.slots,
                runs_dir=run_dir(self.config, self.nodeid),
                trigger=self.trigger,
            )
        except NoAICommandError as missing:
            self.stash[SKIP_AT_ITEM] = True
            pytest.skip(str(missing))
        except OodaError as error:
            raise locate_compose_error(error, node.procedure) from None

    def runtest(self) -> None:
        self.skip_if_broken()
        self.check_unique()
        # Planned already when a cluster's window took it (--ooda-executor).
        plan = self.stash.get(PLANNED, None) or self.plan()
        cluster = cast("Cluster | None", self.config.pluginmanager.get_plugin("ooda-cluster"))
        if cluster is None or not cluster.made(self):
            # Resumed or stopped early: skipped here (a run the cluster has made
            # already is reported, whatever the gate says now).
            plan = before_run(self, plan)
            worker = os.environ.get("PYTEST_XDIST_WORKER")
            if cluster is None and worker is not None:
                leave_marker(self.config, self.nodeid, plan, worker)
        try:
            if cluster is None:
                done, recorded = run_live(self.config, plan)
            else:
                done, recorded = cluster.wait(self, plan)
        except OodaError as error:
            raise locate_compose_error(error, self.procedure_node.procedure) from None
        # The run travels to the process that measures it as its record, as built; a
        # cluster's run was recorded as it came back.
        self.stash[LIVE_REPORT] = LiveReport(
            record=done.record if cluster is None else None,
            # The scenario file and its cassette, as each was written.
            recorded=", ".join(display_path(p, self.config.rootpath) for p in recorded) or None,
        )
        after_run(self, done)


def before_run(item: LiveItem, plan: RunPlan) -> RunPlan:
    """The plan to run, or a skip: a run ``--ooda-resume`` keeps from an earlier session
    (a plan naming the ``error`` run it makes again), a run whose scenario's gate early
    stopping has settled."""
    manager = item.config.pluginmanager
    resume = cast("Resume | None", manager.get_plugin("ooda-resume"))
    if resume is not None:
        plan = resume.before(item, plan)
    early = cast("EarlyStop | None", manager.get_plugin("ooda-early-stop"))
    if early is not None:
        early.before(item, plan)
    budget = cast("SessionBudget | None", manager.get_plugin("ooda-budget"))
    if budget is not None:
        budget.before(item, plan)
    changed = cast("ChangedSelection | None", manager.get_plugin("ooda-changed"))
    if changed is not None:
        plan = changed.before(plan)
    return plan


def after_run(item: LiveItem, done: LiveRun) -> None:
    """The item's verdict: with an aggregate gate the gate decides, so a failed run is
    ``xfail`` (a sample) and an ``error`` run is skipped (not counted); without one a
    failed or errored run fails the item."""
    clear_marker(item.config, item.nodeid)
    gated = done.record.head.aggregate_expect is not None
    if done.outcome == "error":
        reason = done.error_reason or "infrastructure error"
        if gated:
            item.stash[SKIP_AT_ITEM] = True
            pytest.skip(
                f"infrastructure error, not counted in the success rate: {reason}"
                + _after(done.record.retries)
            )
        text = (
            f"scenario {done.scenario} run {done.run}/{done.runs}: infrastructure error, not "
            f"the procedure's fault (left out of the success rate): {reason}"
        )
        raise ItemFailure(text + ("\n\n" + done.report if done.report else ""))
    if not done.problems and not done.report:
        return
    if gated:
        first = done.problems[0] if done.problems else done.report.strip().splitlines()[0]
        more = f" (+{len(done.problems) - 1} more)" if len(done.problems) > 1 else ""
        pytest.xfail(
            f"failed run, a sample of the aggregate expectations (which decide): {first}{more}"
        )
    raise ItemFailure(done.report)


def _after(retries: int) -> str:
    if not retries:
        return ""
    return f" (after {retries} retr{'y' if retries == 1 else 'ies'})"


def run_live(config: pytest.Config, plan: RunPlan) -> tuple[LiveRun, tuple[Path, ...]]:
    """Run ``plan`` (:func:`pytest_ooda.live.run_live`), issue what deciding and running
    it had to say at the scenario's file, and write its recording and its cassette; the
    run and the files written. The caller decides the item's verdict."""
    from pytest_ooda import live

    path = plan.record_to or plan.scenario.path or plan.root
    boundaries = IterationBoundaries(plan.nodeid or str(path))
    done = live.run_live(plan, on_event=boundaries if plan.settings.show_ai_output else None)
    present_live(config, plan, done)
    return done, write_live(done)


def write_live(done: LiveRun) -> tuple[Path, ...]:
    """Write a run's recording and its cassette (a run made here or on a cluster's
    worker); the files written."""
    from pytest_ooda import live

    written: list[Path] = []
    if done.recording is not None:
        written.append(live.write_recording(done.recording))
    cassette = live.write_cassette_of(done.api) if done.api is not None else None
    if cassette is not None:
        written.append(cassette)
    return tuple(written)


def present_live(config: pytest.Config, plan: RunPlan, done: LiveRun) -> None:
    """Issue what deciding and running ``plan`` had to say at the scenario's file (a
    run made here or on a cluster's worker). A sandbox note is said once per session
    (:func:`pytest_ooda.plugin.session_dir.first_said`)."""
    path = plan.record_to or plan.scenario.path or plan.root
    for note in plan.notes:
        # Said already, by this process or another xdist worker: not again.
        if first_said(config, note.message):
            issue_at(note, path)
    for warning in done.warnings:
        issue_at(warning, path)


class LiveReports:
    """Registered when ``-m live`` selects live items, on every process that runs
    them: each run's :class:`LiveReport` on its item's call report, and its one JSON
    form when xdist sends the report to the controller."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        live = item.stash.get(LIVE_REPORT, None)
        if live is not None and call.when == "call":
            # The run's record, or (a resumed item) the earlier run that stands for it.
            setattr(outcome.get_result(), LIVE_ATTRIBUTE, live)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_report_to_serializable(
        self, report: pytest.TestReport
    ) -> Generator[None, Any, None]:
        outcome = yield
        data = outcome.get_result()
        live = getattr(report, LIVE_ATTRIBUTE, None)
        if isinstance(data, dict) and isinstance(live, LiveReport):
            data[LIVE_ATTRIBUTE] = live.to_json()
