"""Scenario items' glue: a replay and a live run are the library's
(:func:`pytest_ooda.scenario.check_replay`, :func:`pytest_ooda.live.run_live`); here
their warnings are issued at their files, a missed expectation becomes the item's
failure, a live item's run is planned from the session's settings and run, its
recording written, and ``-s`` shows where each iteration's output starts and ends.
"""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda._util import display_path
from pytest_ooda.errors import NoAICommandError, RecordingWarning, ScenarioError
from pytest_ooda.plugin import report
from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.plugin.state import PLUGIN_STATE

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from pytest_ooda.errors import OodaWarning
    from pytest_ooda.live import LiveRun, RunPlan
    from pytest_ooda.loop import LoopEvent
    from pytest_ooda.scenario import ReplayCheck, Scenario
    from pytest_ooda.settings import SessionSettings
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


def present_replay(
    checked: ReplayCheck, path: Path, live_nodeid: Callable[[Scenario], str] | None = None
) -> None:
    """A replay the library checked (:func:`pytest_ooda.scenario.check_replay`): its
    warnings issued at the scenario file, ``ItemFailure`` when it missed expectations
    — saying how to record it again when what it replays is a recorded failed run."""
    for warning in checked.warnings:
        _issue(warning, path)
    if checked.unrecorded:
        live = shlex.quote(live_nodeid(checked.scenario)) if live_nodeid is not None else ""
        pytest.skip(
            f"scenario {checked.scenario.label} is not recorded yet (iterations: []): record "
            f"it with  pytest -m live --ooda-record-mode=once {live}  (and --ooda-ai-cmd or "
            "--ooda-ai-cmd-alias when the config names no agent), or write its iterations"
        )
    if checked.failure is not None:
        hint = record_again(checked.scenario, live_nodeid) if live_nodeid is not None else None
        raise ItemFailure(checked.failure + (f"\n\n{hint}" if hint else ""))


def record_again(scenario: Scenario, live_nodeid: Callable[[Scenario], str]) -> str | None:
    """For a scenario whose recording is a failed run (it ended otherwise than its
    scenario expects): the command that records it again. ``once`` and ``new`` keep an
    existing recording, so it is ``all``, for this scenario's live item alone."""
    from pytest_ooda.results import failed_run

    recorded = scenario.recorded
    why = failed_run(scenario, recorded.status) if recorded is not None else None
    if why is None:
        return None
    why = why.replace("the run", "the recorded run", 1)
    return (
        f"  this scenario holds a recorded failed run ({why}); record it again with\n"
        f"    pytest -m live --ooda-record-mode=all {shlex.quote(live_nodeid(scenario))}\n"
        "  (once and new keep an existing recording; or set iterations: [] and record once)"
    )


# --------------------------------------------------------------------------- live


def plan_live(
    config: pytest.Config,
    *,
    collected: Path,
    procedure: str,
    scenario: Scenario,
    variant: Variant | None,
    run: int,
    runs: int,
    nodeid: str,
    read_only: bool,
) -> RunPlan:
    """The item's run, decided (:func:`pytest_ooda.live.plan_run`): the session's
    settings, its stamp and its shared directory (this process's, or the xdist
    controller's)."""
    from pytest_ooda import live
    from pytest_ooda.plugin import pacing

    state = pacing.pacing(config)
    return live.plan_run(
        config.stash[PLUGIN_STATE].settings,
        procedure,
        scenario,
        collected=collected,
        variant=variant,
        run=run,
        runs=runs,
        nodeid=nodeid,
        read_only=read_only,
        stamp=state.stamp,
        slots_dir=state.slots,
        runs_dir=pacing.run_dir(config, nodeid),
    )


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


def run_live(config: pytest.Config, plan: RunPlan) -> tuple[LiveRun, tuple[Path, ...]]:
    """Run ``plan`` (:func:`pytest_ooda.live.run_live`), issue what deciding and running
    it had to say at the scenario's file, and write its recording and its cassette; the
    run and the files written. The caller decides the item's verdict."""
    from pytest_ooda import live

    path = plan.record_to or plan.scenario.path or plan.root
    boundaries = _IterationBoundaries(plan.nodeid or str(path))
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
    (:func:`pytest_ooda.plugin.pacing.first_said`)."""
    from pytest_ooda.plugin.pacing import first_said

    path = plan.record_to or plan.scenario.path or plan.root
    for note in plan.notes:
        # Said already, by this process or another xdist worker: not again.
        if first_said(config, note.message):
            _issue(note, path)
    for warning in done.warnings:
        _issue(warning, path)


def agent_cassette(
    settings: SessionSettings,
    scenario: Scenario,
    path: Path,
    live_nodeid: Callable[[Scenario], str],
) -> Path | None:
    """The cassette a scenario item replays the real agent with (``ooda help
    agent-replay``): under ``--ooda-replay=agent`` when the scenario has one, or when the
    scenario says ``replay: agent`` (and no ``--ooda-replay=loop``); ``None``: a loop
    replay. A scenario asking for agent replay without a cassette is a ``ScenarioError``
    saying how to record one."""
    from pytest_ooda.apireplay import cassette_path

    cassette = cassette_path(path)
    from pytest_ooda.settings import REPLAY

    if (settings[REPLAY] or scenario.replay or "loop") == "loop":
        return None
    if cassette.is_file():
        return cassette
    if scenario.replay != "agent":
        return None  # --ooda-replay=agent: a scenario without one replays the loop
    raise ScenarioError(
        f"scenario {scenario.label!r} says replay: agent, but it has no cassette ({cassette.name})",
        file=str(path),
        hint=f"record one: pytest -m live --ooda-record-api {shlex.quote(live_nodeid(scenario))}",
    )


def replay_agent(
    config: pytest.Config,
    *,
    collected: Path,
    procedure: str,
    scenario: Scenario,
    path: Path,
    nodeid: str,
    cassette: Path,
) -> None:
    """An agent replay: the real agent through the API proxy, answered from
    ``cassette``. Nothing is written; a divergence fails the item as one (not as the
    prompt's failure), else the run's missed expectations do."""

    from pytest_ooda import live
    from pytest_ooda.plugin.pacing import first_said

    try:
        plan = live.plan_run(
            # Nothing of a replay is written: no recording, no cassette.
            config.stash[PLUGIN_STATE].settings.but(record_mode="none", record_api=None),
            procedure,
            scenario,
            collected=collected,
            nodeid=nodeid,
            read_only=True,
            api=live.ApiPlan("replay", cassette),
        )
    except NoAICommandError as missing:
        raise ScenarioError(
            f"scenario {scenario.label!r}: agent replay needs the agent: {missing.message}",
            file=str(path),
        ) from None
    for note in plan.notes:
        if first_said(config, note.message):
            _issue(note, path)
    boundaries = _IterationBoundaries(plan.nodeid or str(path))
    done = live.run_live(plan, on_event=boundaries if plan.settings.show_ai_output else None)
    for warning in done.warnings:
        if not isinstance(warning, RecordingWarning):
            _issue(warning, path)
    api = done.api
    if api is not None and api.divergence is not None:
        shown = display_path(api.path, config.rootpath)
        raise ItemFailure(
            f"scenario {plan.label}: agent replay of {shown}: {api.divergence}\n\n"
            "  the agent asked the model something the recording never did: re-record "
            "the cassette (pytest -m live --ooda-record-mode=all --ooda-record-api, or "
            "--ooda-record-api=new to keep what still matches), or see "
            "`ooda help agent-replay` (what drift looks like)"
        )
    if done.outcome == "error":
        raise ItemFailure(
            f"scenario {plan.label}: agent replay did not run: {done.error_reason}"
            + (f"\n{done.report}" if done.report else "")
        )
    if done.report:
        raise ItemFailure(done.report)


def _issue(warning: OodaWarning, path: Path) -> None:
    """Issue a located warning the library returned, at its file (else ``path``)."""
    # pytest's summary names the file and quotes its line: the text is the message.
    shown = type(warning)(warning.message, hint=warning.hint)
    report.warn_at(shown, warning.file or path, warning.line)
