"""Scenario items' glue: a replay and a live run are the library's
(:func:`pytest_ooda.scenario.check_replay`, :func:`pytest_ooda.live.run_live`); here
their warnings are issued at their files, a missed expectation becomes the item's
failure, the session's options become the live runs' settings, and ``-s`` shows where
each iteration's output starts and ends.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_ooda.errors import OodaWarning, SandboxWarning
from pytest_ooda.plugin import report
from pytest_ooda.plugin.report import ItemFailure

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from pytest_ooda.live import LiveRun, LiveSettings
    from pytest_ooda.loop import LoopEvent
    from pytest_ooda.plugin.options import PluginSettings
    from pytest_ooda.scenario import ReplayCheck, Scenario
    from pytest_ooda.variants import Variant


def rerecord_hint(live_nodeid: Callable[[Scenario], str]) -> Callable[[Scenario], str]:
    """After a drift: the command that re-records just this scenario (its live item)."""

    def hint(scenario: Scenario) -> str:
        return (
            "  re-record only this scenario: pytest -m live --ooda-record-mode=new "
            f"{shlex.quote(live_nodeid(scenario))}\n  (or drop prompt_sha256 from a "
            "hand-written scenario, or pass --ooda-drift=warn)"
        )

    return hint


def present_replay(checked: ReplayCheck, path: Path) -> None:
    """A replay the library checked (:func:`pytest_ooda.scenario.check_replay`): its
    warnings issued at the scenario file, ``ItemFailure`` when it missed expectations."""
    for warning in checked.warnings:
        _issue(warning, path)
    if checked.failure is not None:
        raise ItemFailure(checked.failure)


# --------------------------------------------------------------------------- live


def live_settings(
    settings: PluginSettings, *, slots_dir: Path | None = None, runs_dir: Path | None = None
) -> LiveSettings:
    """The session's options as the library's live-run settings (``slots_dir`` and
    ``runs_dir``: the session directory's, shared by the xdist workers)."""
    from pytest_ooda.live import LiveSettings

    return LiveSettings(
        root=settings.rootpath,
        config_file=settings.config_file,
        ai_cmd=settings.ai_cmd,
        ai_cmd_alias=settings.ai_cmd_alias,
        ai_output=settings.ai_output,
        prompt_format=settings.prompt_format,
        record_mode=settings.record_mode,
        max_cost=settings.max_cost,
        max_tokens=settings.max_tokens,
        shard=settings.shard,
        sandbox=settings.sandbox,
        judge_cache=settings.results_dir,
        ignore_dir=results_ignore_dir(settings),
        retries=settings.retries,
        max_concurrent=settings.max_concurrent,
        slots_dir=slots_dir,
        runs_dir=runs_dir,
        stop_early=settings.stop_early,
    )


def results_ignore_dir(settings: PluginSettings) -> Path | None:
    """The default ``.ooda/``: created with a ``.gitignore`` by whatever writes first."""
    from pytest_ooda.plugin.options import DEFAULT_RESULTS_DIR

    return settings.rootpath / DEFAULT_RESULTS_DIR[0] if settings.results_default else None


class _IterationBoundaries:
    """With ``-s`` the agent's output streams to the terminal: a line before and after
    each iteration says whose output it is and how the iteration ended."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __call__(self, event: LoopEvent) -> None:
        from pytest_ooda.loop import IterationFinished, IterationStarted

        if isinstance(event, IterationStarted):
            limit = "" if event.max_iterations is None else f" of {event.max_iterations}"
            line = f"──── ooda: {self.label}: iteration {event.number}{limit} ────"
        elif isinstance(event, IterationFinished):
            record = event.record
            signal = f", {record.signal}" if record.signal else ""
            line = (
                f"──── ooda: {self.label}: iteration {record.number} ended: "
                f"{record.outcome}{signal}, exit {record.exit_code} ────"
            )
        else:
            return
        sys.stdout.write(f"\n{line}\n")
        sys.stdout.flush()


def run_live(
    collected: Path,
    procedure: str,
    path: Path,
    *,
    settings: PluginSettings,
    read_only: bool = False,
    show_output: bool = False,
    run: int = 1,
    runs: int = 1,
    nodeid: str = "",
    discard: Callable[[Path], None] | None = None,
    first_said: Callable[[str], bool] | None = None,
    variant: Variant | None = None,
    scenario: Scenario | None = None,
    slots_dir: Path | None = None,
    runs_dir: Path | None = None,
) -> LiveRun:
    """Run the scenario at ``path`` live (:func:`pytest_ooda.live.run_live`) and issue
    the run's warnings at their files; the caller decides the item's verdict. A
    sandbox note is said once per session: only when ``first_said(text)`` says it is
    its first time (every time without ``first_said``)."""
    from pytest_ooda import live

    outcome = live.run_live(
        collected,
        procedure,
        path,
        scenario=scenario,
        settings=replace(
            live_settings(settings, slots_dir=slots_dir, runs_dir=runs_dir), variant=variant
        ),
        read_only=read_only,
        show_output=show_output,
        run=run,
        runs=runs,
        nodeid=nodeid,
        discard=discard,
        on_event=_IterationBoundaries(nodeid or str(path)) if show_output else None,
    )
    for warning in outcome.warnings:
        if (
            isinstance(warning, SandboxWarning)
            and first_said is not None
            and not first_said(warning.message)
        ):
            continue  # said already, by this process or another xdist worker
        _issue(warning, path)
    return outcome


def _issue(warning: OodaWarning, path: Path) -> None:
    """Issue a located warning the library returned, at its file (else ``path``)."""
    # pytest's summary names the file and quotes its line: the text is the message.
    shown = type(warning)(warning.message, hint=warning.hint)
    report.warn_at(shown, warning.file or path, warning.line)
