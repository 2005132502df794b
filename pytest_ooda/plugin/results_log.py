"""The results log of a session's live runs: a line per finished run, the log written
with each record as it arrives, the per-scenario table, and the aggregate expectations
as a gate.

:class:`LiveRuns` is registered in the process that sees every report — the only one,
or pytest-xdist's controller, to which each worker sends its reports with the run's
record attached (``report.ooda_run``, a :class:`~pytest_ooda.plugin.state.LiveReport`:
in one process the record as it was built, across xdist its JSON wire form). So one
process writes the log (no lock, no interleaving) and judges each scenario over all its
runs, wherever they ran. Workers register nothing of this. The same process decides
the session's stamp (its name, series and commit) when it starts; each run's plan
carries it, so records arrive complete and are written as they are.

The gate: once the run loop ends, every scenario with ``expect.success_rate`` /
``max_mean_iterations`` / ``max_mean_cost`` is judged over the valid runs this session
made (with ``--ooda-resume``, and the earlier runs it did not make again); each one
missed counts as a failure of the session (exit code 1), the way coverage gates work —
the gated scenario's failed runs are ``xfail`` samples (:mod:`.live_items`). Under
``--ooda-shard K/N`` with N > 1 a session holds only a share of each scenario's runs, so
the gate is left to ``ooda report --check`` over the merged files.

The same process counts each finished run for early stopping (:mod:`.early_stop`) and,
under pytest-xdist, records a run whose worker crashed (``pytest_handlecrashitem``).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_ooda._util import display_path
from pytest_ooda.plugin import SESSION
from pytest_ooda.plugin.report import live_line
from pytest_ooda.plugin.session_dir import session_dir
from pytest_ooda.plugin.state import LIVE_ATTRIBUTE, LiveReport
from pytest_ooda.settings import SHARD

if TYPE_CHECKING:
    from collections.abc import Generator

    from pytest_ooda.plugin.early_stop import EarlyStop
    from pytest_ooda.plugin.resume import Resume
    from pytest_ooda.results import ResultsLog, RunRecord


class LiveRuns:
    """Progress lines, the results log, the per-scenario summary and its gates."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = config.stash[SESSION]
        self.records: list[RunRecord] = []
        self.recorded: list[str] = []
        self.gate_lines: list[str] = []
        self.gate_note: str | None = None
        self.log_error: str | None = None
        self._log: ResultsLog | None = None
        # The results file is named after the session's start, created with its first run.
        self._started = time.time()
        #: Live items skipped for want of an AI command, and live items that ran: when
        #: `-m live` selected some and none could run, the session fails (a CI job that
        #: forgot its agent must not go green having measured nothing).
        self.no_agent: list[str] = []
        self.ran_live = 0
        self.no_agent_message: str | None = None
        manager = config.pluginmanager
        self.early_stop = cast("EarlyStop | None", manager.get_plugin("ooda-early-stop"))
        #: ``--ooda-resume``: earlier runs by id, and those that stand for this
        #: session's skipped items; the series the session continues.
        resume = cast("Resume | None", manager.get_plugin("ooda-resume"))
        self._earlier: dict[str, RunRecord] = {}
        self.resumed: list[RunRecord] = []
        series: str | None = None
        if resume is not None:
            self._earlier = {record.id: record for record in resume.finished().values()}
            series = resume.series()
        from pytest_ooda.plugin.budget import stamped
        from pytest_ooda.results import SessionStamp

        self.stamp = SessionStamp.start(self.settings.root, started=self._started, series=series)
        self.stamp = stamped(self.stamp, self.settings)
        session_dir(config).stamp = self.stamp

    @property
    def measured(self) -> list[RunRecord]:
        """The runs the table and the gates cover: this session's and the resumed ones."""
        return [*self.resumed, *self.records]

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist: hand each worker the session directory (tallies, slots, runs)
        and the session's stamp."""
        from pytest_ooda.plugin.session_dir import WORKER_INPUT, WORKER_STAMP

        node.workerinput[WORKER_INPUT] = str(session_dir(self.config).directory)
        node.workerinput[WORKER_STAMP] = self.stamp.to_json()

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """pytest-xdist: a worker died while running ``crashitem``. A live run of it is
        recorded as an infrastructure ``error`` and counted, and what it left is
        removed; pytest-xdist itself reports the item as failed."""
        from pytest_ooda.plugin.session_dir import crashed_run

        text = str(report.longrepr or "").strip().splitlines()
        message = text[-1] if text else "the worker running it crashed"
        record = crashed_run(session_dir(self.config), crashitem, message)
        if record is not None:
            self._keep(record)
            self._progress(f"ooda: {live_line(record)}")

    # ------------------------------------------------------------------ per report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        if "::live[" in report.nodeid:
            reason = _skip_reason(report)
            if reason is not None and reason.startswith(NO_AGENT_PREFIX):
                if not self.no_agent:
                    self.no_agent_message = reason
                self.no_agent.append(report.nodeid)
            elif not report.skipped:
                self.ran_live += 1
        live = getattr(report, LIVE_ATTRIBUTE, None)
        if isinstance(live, dict):
            live = self._from_worker(live)
        if not isinstance(live, LiveReport):
            return
        if live.resumed is not None:
            self._resumed(live.resumed)
        if live.record is not None:
            self.add(live.record, live.recorded)

    def add(self, record: RunRecord, recorded: str | None) -> None:
        """A finished run: counted, its record written, its progress line printed
        (``recorded``: the scenario file it was recorded to)."""
        self._keep(record)
        if recorded:
            self.recorded.append(f"{record.label} -> {recorded}")
        self._progress(f"ooda: {live_line(record, recorded)}")

    def _progress(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and self.config.get_verbosity() > -2:
            writer = self.config.get_terminal_writer()
            # Under xdist the progress dots carry no file name, so pytest does not know
            # the line is taken; start a new one ourselves.
            if reporter.currentfspath is None and writer.width_of_current_line:
                writer.line()
            reporter.write_line(line)

    def _from_worker(self, data: dict[str, Any]) -> LiveReport | None:
        """A live report from an xdist worker, in its JSON wire form."""
        from pytest_ooda.errors import OodaError

        try:
            return LiveReport.from_json(data)
        except (OodaError, AttributeError, TypeError) as error:
            # Made by this pytest-ooda a moment ago; a hook must not raise regardless.
            self.log_error = f"a run's results record is malformed: {error}"
            return None

    def _resumed(self, run_id: str) -> None:
        """A resumed item: the earlier run it names counts in this session's numbers."""
        earlier = self._earlier.get(run_id)
        if earlier is None:
            return
        self.resumed.append(earlier)
        # Early stopping counts the resumed runs as well.
        if self.early_stop is not None:
            self.early_stop.count(earlier)

    def _keep(self, record: RunRecord) -> None:
        """Count a finished run, and write its record as it arrived."""
        from dataclasses import replace

        # The table and the gates read no transcript: the log keeps it, the session
        # does not (10,000 runs' transcripts would be most of a session's memory).
        self.records.append(replace(record, transcript=None))
        # Early stopping on any worker reads this before starting another run.
        if self.early_stop is not None:
            self.early_stop.count(record)
        budget = self.config.pluginmanager.get_plugin("ooda-budget")
        if budget is not None:
            budget.count(record)
        if self.log_error is not None:
            return
        log = self._results_log()
        try:
            log.append(record)
        except OSError as exc:
            where = display_path(log.path or log.directory, self.settings.root)
            self.log_error = f"cannot write the results log {where}: {exc.strerror or exc}"

    def _results_log(self) -> ResultsLog:
        if self._log is None:
            from pytest_ooda.results import ResultsLog

            settings = self.settings
            self._log = ResultsLog(
                settings.results_dir, session=self.stamp.session, ignore_dir=settings.ignore_dir
            )
        return self._log

    # ------------------------------------------------------------------ the gate

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, None]:
        outcome = yield
        if outcome.excinfo is None and self.no_agent and not self.ran_live:
            session.testsfailed += 1
        if outcome.excinfo is not None or not self.measured:
            return
        if self.log_error is not None:
            # The runs were made to be measured: losing their record fails the session.
            session.testsfailed += 1
        from pytest_ooda.report import gate_lines
        from pytest_ooda.stats import summarize

        stats = summarize(self.measured)
        if not any(item.gates is not None for item in stats):
            return
        shard = self.settings[SHARD]
        if shard is not None and shard[1] > 1:
            self.gate_note = (
                f"aggregate expectations are not judged on shard {shard[0]}/{shard[1]}, which "
                "holds only part of each scenario's runs: merge the shards' results with "
                "`ooda report --check RESULTS...`"
            )
            return
        self.gate_lines, failed = gate_lines(stats)
        session.testsfailed += failed

    # ------------------------------------------------------------------ the summary

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.no_agent and not self.ran_live:
            terminalreporter.write_sep("-", "ooda live runs", red=True)
            count = len(self.no_agent)
            terminalreporter.write_line(
                f"error: -m live selected {count} live item{'s' if count != 1 else ''} and "
                "none could run: " + (self.no_agent_message or NO_AGENT_PREFIX),
                red=True,
            )
        if not self.measured and not self.recorded:
            return
        from pytest_ooda.report import notes, stats_table
        from pytest_ooda.stats import DEFAULT_K, summarize

        terminalreporter.write_sep("-", "ooda live runs")
        stats = summarize(self.measured)
        if stats:
            for line in stats_table(stats, DEFAULT_K):
                terminalreporter.write_line(line)
        for line in self.gate_lines:
            failed = line.startswith("FAILED")
            unjudged = line.startswith("inconclusive")
            terminalreporter.write_line(
                f"gate {line}", red=failed, yellow=unjudged, green=not (failed or unjudged)
            )
        missed = sum(1 for line in self.gate_lines if line.startswith("FAILED"))
        if missed:
            _last_line_says(terminalreporter, missed)
        if self.gate_note:
            terminalreporter.write_line(f"note: {self.gate_note}")
        for line in notes(stats):
            terminalreporter.write_line(line)
        if self.resumed:
            terminalreporter.write_line(
                f"resumed: {len(self.resumed)} earlier run(s) counted, not run again"
            )
        for line in self.recorded:
            terminalreporter.write_line(f"recorded: {line}")
        if self.log_error is not None:
            terminalreporter.write_line(f"error: {self.log_error}", red=True)
        elif self._log is not None and self._log.path is not None:
            shown = display_path(self._log.path, self.settings.root)
            terminalreporter.write_line(
                f"results: {shown} ({self._log.count} run{'s' if self._log.count != 1 else ''}; "
                f"`ooda report {shown}`)"
            )

    def pytest_unconfigure(self) -> None:
        from pytest_ooda.plugin.session_dir import SESSION_DIR

        if self._log is not None:
            self._log.close()
        state = self.config.stash.get(SESSION_DIR, None)
        left = state.close() if state is not None else None
        if left is not None:
            # After the summary: stderr, so a CI log keeps it.
            sys.stderr.write(f"ooda: {left}; remove it yourself (chattr -i, as root)\n")


def _last_line_says(reporter: pytest.TerminalReporter, missed: int) -> None:
    """The session's last line starts with the gates that failed, in red: ``1 gate
    failed, 2 xfailed in 17.96s``. Under a gate a run's item is an xfail, so pytest's
    own counts alone would end a failing session on a line that looks fine."""
    build = reporter.build_summary_stats_line

    def with_gates() -> tuple[list[tuple[str, dict[str, bool]]], str]:
        parts, _ = build()
        said = f"{missed} gate{'s' if missed != 1 else ''} failed"
        return [(said, {"red": True, "bold": True}), *parts], "red"

    setattr(reporter, "build_summary_stats_line", with_gates)  # noqa: B010


#: How the skip of a live item without an AI command begins (``live.NO_AI_COMMAND``).
NO_AGENT_PREFIX = "no AI command configured"


def _skip_reason(report: pytest.TestReport) -> str | None:
    """The message of a skipped report (``None`` when it is not a skip)."""
    if not report.skipped:
        return None
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        message = str(longrepr[2])
        return message.removeprefix("Skipped: ")
    return None
