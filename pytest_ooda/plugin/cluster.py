"""Live runs on a cluster (``--ooda-executor=ENGINE:ADDRESS``): the pytest session is the
controller, and the only writer of the results log and the recordings.

:func:`configure` reads the option before any test runs: an unknown engine, an engine
whose extra is not installed, or ``-n`` (xdist: the session must be one process) is a
usage error. :class:`ClusterRuns` then, once the items are collected and selected,
connects to the cluster (unreachable: a usage error, nothing run), ships the project
once, and hands every live item's run to a :class:`pytest_ooda.executors.Dispatcher`,
which plans and submits each as its window takes it (not those ``--ooda-resume``
keeps). Each ``live[s#k]`` item waits for its own run
(:meth:`ClusterRuns.wait`) and reports it as a local run reports: its verdict, its
warnings, the gates. A run's record and recording are written as soon as the run
settles, whichever item is running then, so an interrupted session keeps every finished
run; and once a scenario's gate is settled, its runs that have not begun are cancelled.
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from typing import TYPE_CHECKING, cast

import pytest

from pytest_ooda.plugin.state import PLANNED, SKIP_AT_ITEM

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.executors import Dispatcher, Engine, Job, Settled
    from pytest_ooda.live import LiveRun, RunPlan
    from pytest_ooda.plugin.early_stop import EarlyStop
    from pytest_ooda.plugin.live_items import LiveItem
    from pytest_ooda.plugin.results_log import LiveRuns
    from pytest_ooda.plugin.resume import Resume


def configure(config: pytest.Config, value: str, label: str) -> None:
    """Read ``--ooda-executor`` (``label``: how messages name it); under an engine,
    register the session's :class:`ClusterRuns`."""
    from pytest_ooda.errors import ExecutorError
    from pytest_ooda.executors import make_engine, parse_executor

    try:
        spec = parse_executor(value)
    except ExecutorError as error:
        raise pytest.UsageError(f"{label}: {error}") from None
    if spec.local or hasattr(config, "workerinput"):
        return
    if _xdist(config):
        raise pytest.UsageError(
            f"{label}={spec}: live runs go to the cluster, and this pytest session is their "
            "one controller: drop -n/--dist (pytest-xdist); the cluster's workers run the "
            "runs in parallel"
        )
    try:
        engine = make_engine(spec)
    except ExecutorError as error:
        raise pytest.UsageError(error.format()) from None
    config.pluginmanager.register(ClusterRuns(config, engine), "ooda-cluster")


def _xdist(config: pytest.Config) -> bool:
    numprocesses = config.getoption("numprocesses", None)
    dist = config.getoption("dist", "no")
    return bool(numprocesses) or (dist is not None and dist != "no")


class ClusterRuns:
    """The controller's side of a distributed session (see the module's docstring)."""

    def __init__(self, config: pytest.Config, engine: Engine) -> None:
        self.config = config
        self.engine = engine
        self.dispatcher: Dispatcher | None = None
        #: Each live item's run key (its place in the session), by node id.
        self.keys: dict[str, str] = {}
        #: By run key: the item, its scenario, and (once planned) its plan.
        self.items: dict[str, LiveItem] = {}
        self.scenarios: dict[str, tuple[str, str, str | None]] = {}
        self.plans: dict[str, RunPlan] = {}
        #: Settled runs not yet reported by their item: what each made, where recorded.
        self.done: dict[str, tuple[LiveRun, tuple[Path, ...]]] = {}
        #: What the session says when the connection to the cluster was lost.
        self.lost: str | None = None

    # ------------------------------------------------------------------ submitting

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # The plugin's live items (not a user's own @pytest.mark.live tests).
        live = [
            cast("LiveItem", item)
            for item in session.items
            if item.get_closest_marker("live") is not None and hasattr(item, "plan")
        ]
        if not live or self.config.option.collectonly:
            return
        self.dispatcher = self._connect()
        for index, item in enumerate(live):
            key = str(index)
            self.keys[item.nodeid] = key
            self.items[key] = item
            variant = item.variant.name if item.variant is not None else None
            self.scenarios[key] = (item.procedure_node.name, item.scenario_path.stem, variant)
            self.dispatcher.add(key, functools.partial(self._make, key))

    def _connect(self) -> Dispatcher:
        """The cluster reached and the project shipped; a usage error otherwise."""
        from pytest_ooda.errors import ExecutorError
        from pytest_ooda.executors import Dispatcher, EngineLost, pack_source, run_attempt
        from pytest_ooda.plugin import SESSION
        from pytest_ooda.settings import SHIP

        settings = self.config.stash[SESSION]
        session = f"{uuid.uuid4().hex[:12]}-{os.getpid()}"
        try:
            self.engine.connect(session)
            exclude = [settings.results_dir]
            source = pack_source(settings.root, exclude=exclude, ship=settings[SHIP])
            self._held_back(source.held_back)
            dispatcher = Dispatcher(
                self.engine, run_attempt, session=session, on_settled=self._settled
            )
            dispatcher.ship(source)
        except ExecutorError as error:
            raise pytest.UsageError(error.format()) from None
        except EngineLost as lost:
            raise pytest.UsageError(
                f"--ooda-executor={self.engine.label}: the cluster was lost before any run: {lost}"
            ) from None
        return dispatcher

    def _held_back(self, names: tuple[str, ...]) -> None:
        """Say which files were not shipped, and how to ship one."""
        if not names:
            return
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"ooda: not shipped to the cluster, their names say they hold secrets: {shown} "
                "(--ooda-ship=PATH ships one; `ooda help scale-out`)",
                yellow=True,
            )

    def _make(self, key: str) -> tuple[Job, int] | None:
        """Run ``key``'s job, planned when the window takes it (``None``: not to be made:
        resumed, or its files have a mistake its item will report)."""
        from pytest_ooda.errors import OodaError
        from pytest_ooda.executors import job_for

        item = self.items[key]
        budget = self.config.pluginmanager.get_plugin("ooda-budget")
        if budget is not None and budget.refusal() is not None:
            return None  # its item says why: not run, budget spent
        plan = item.stash.get(PLANNED, None)
        if plan is None:
            try:
                plan = item.plan()
            except (OodaError, pytest.skip.Exception):
                return None
            resume = cast("Resume | None", self.config.pluginmanager.get_plugin("ooda-resume"))
            planned = resume.planned(plan) if resume is not None else plan
            if planned is None:
                return None
            plan = planned
            changed = self.config.pluginmanager.get_plugin("ooda-changed")
            if changed is not None:
                plan = changed.before(plan)  # why it runs live, in its record
            item.stash[PLANNED] = plan
        self.plans[key] = plan
        return job_for(plan), plan.settings.retry.attempts

    # ------------------------------------------------------------------ settling

    def _settled(self, settled: Settled) -> None:
        """A run settled on the cluster: its recording and record written now."""
        from pytest_ooda import live
        from pytest_ooda._util import display_path
        from pytest_ooda.plugin.live_items import write_live

        plan = self.plans.pop(settled.key, None)
        if plan is None or settled.cancelled or settled.error is not None:
            return  # nothing ran: the item says so
        if settled.ran:
            done: LiveRun = settled.value
        else:
            reason = (
                f"the worker failed: {settled.failed.strip().splitlines()[-1]}"
                if settled.failed
                else (settled.lost[-1] if settled.lost else "the cluster did not run it")
            )
            done = live.unmade_run(
                plan, f"worker-lost: {reason}", started=settled.started or 0.0, worker=None
            )
        recorded = write_live(done)
        self.done[settled.key] = (done, recorded)
        shown = ", ".join(display_path(p, self.config.rootpath) for p in recorded) or None
        # Settled while some item runs, whose output pytest captures: the progress line
        # is the session's, not that item's.
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            self._live_runs().add(done.record, shown)
        self._stop_early(settled.key, plan)
        self._stop_for_budget()

    def _live_runs(self) -> LiveRuns:
        runs = self.config.pluginmanager.get_plugin("ooda-results-log")
        assert runs is not None, "registered whenever -m selects live items"
        live_runs: LiveRuns = runs
        return live_runs

    def _stop_early(self, key: str, plan: RunPlan) -> None:
        """Once ``plan``'s scenario's gate is settled, cancel its runs not begun."""
        early = cast("EarlyStop | None", self.config.pluginmanager.get_plugin("ooda-early-stop"))
        if self.dispatcher is None or early is None or early.settled(plan) is None:
            return
        same = self.scenarios[key]
        for other in self.dispatcher.pending():
            if self.scenarios[other] == same:
                self.dispatcher.cancel(other)

    def _stop_for_budget(self) -> None:
        """Once the session's budget is spent, cancel every run not begun."""
        budget = self.config.pluginmanager.get_plugin("ooda-budget")
        if self.dispatcher is None or budget is None or budget.refusal() is None:
            return
        for other in self.dispatcher.pending():
            self.dispatcher.cancel(other)

    # ------------------------------------------------------------------ the items

    def made(self, item: LiveItem) -> bool:
        """Whether item ``item``'s run has come back from the cluster already."""
        key = self.keys.get(item.nodeid)
        return key is not None and key in self.done

    def wait(self, item: LiveItem, plan: RunPlan) -> tuple[LiveRun, tuple[Path, ...]]:
        """Item ``item``'s run, once settled: what it made and where it was recorded."""
        from pytest_ooda.executors import EngineLost
        from pytest_ooda.plugin.report import ItemFailure

        assert self.dispatcher is not None
        key = self.keys[item.nodeid]
        # Planned by the item itself (before the window took it): planned once.
        item.stash[PLANNED] = plan
        try:
            settled = self.dispatcher.settle(key)
        except EngineLost:
            # The cluster is gone: the session ends here, saying why (and this run,
            # never made or lost under way, is the resumed session's).
            del item.stash[PLANNED]
            item.session.shouldfail = self._end()
            raise ItemFailure(
                f"run {plan.run}/{plan.runs} of {plan.label} was not made: the connection "
                f"to the cluster ({self.engine.label}) was lost (the session ends here)"
            ) from None
        del item.stash[PLANNED]
        if settled.error is not None:
            raise settled.error
        if settled.cancelled:
            item.stash[SKIP_AT_ITEM] = True
            budget = self.config.pluginmanager.get_plugin("ooda-budget")
            if budget is not None:
                budget.before(item, plan)  # not run: budget spent
            pytest.skip("cancelled before it began: its scenario's gate was settled")
        done, recorded = self.done.pop(key)
        if settled.failed:
            raise ItemFailure(
                f"run {plan.run}/{plan.runs} of {plan.label} failed on the cluster "
                f"({self.engine.label}):\n{settled.failed}"
            )
        return done, recorded

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A live item skipped before waiting (resumed, or its scenario stopped early):
        its run is cancelled if it has not begun, else waited for (and recorded)."""
        if report.when != "call" or not report.skipped or self.dispatcher is None:
            return
        from pytest_ooda.executors import EngineLost

        key = self.keys.get(report.nodeid)
        if key is None or self.dispatcher.is_settled(key) or self.dispatcher.lost is not None:
            return
        if not self.dispatcher.cancel(key):
            with contextlib.suppress(EngineLost):  # said when the next item waits
                self.dispatcher.settle(key)
        self.done.pop(key, None)
        stash = self.items[key].stash
        if PLANNED in stash:
            del stash[PLANNED]

    def _end(self) -> str:
        """The session's word on a cluster that was lost: one line (the cause), and
        what the log holds with the command that makes the rest (:attr:`lost`, said at
        the end of the session)."""
        assert self.dispatcher is not None
        cause = (
            f"ooda: the connection to the cluster ({self.engine.label}) was lost: "
            f"{self.dispatcher.lost}"
        )
        if self.lost is None:
            made = self._live_runs().records
            lost = sum(1 for r in made if (r.error_reason or "").startswith("worker-lost"))
            unmade = len(self.dispatcher.pending())
            self.lost = (
                f"{cause}\nooda: the results log holds the {len(made) - lost} run(s) that came "
                f"back and the {lost} under way, as worker-lost errors; {unmade} were never "
                "made: `pytest --ooda-resume` with the same options makes the lost and the "
                "unmade ones"
            )
        return cause

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.lost is not None:
            for line in self.lost.splitlines():
                terminalreporter.write_line(line, red=True)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        # Interrupted, -x, or done: what is still on the cluster is dropped.
        if self.dispatcher is not None:
            self.dispatcher.close()
            self.dispatcher = None
