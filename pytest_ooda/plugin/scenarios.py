"""Scenario items' work: replay through the real loop runner, and live runs presented.

Replay serves a scenario's iterations through the replay backend (the AI command is
never started) in a temp copy of its workspace, then checks ``expect`` and prompt drift.
A live run is the library's (:func:`pytest_ooda.live.run_live`): here its warnings are
issued at their files and a missed expectation becomes the item's failure.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import DriftWarning, ReplayExhaustedError, SandboxWarning, ScenarioError
from pytest_ooda.live import failure_text
from pytest_ooda.loop import served_table
from pytest_ooda.plugin import report
from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.scenario import load_for, workspace_of
from pytest_ooda.workspace import copy_workspace

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pytest_ooda.config import Config
    from pytest_ooda.judge import JudgeContext
    from pytest_ooda.live import LiveRun, LiveSettings
    from pytest_ooda.loop import LoopEvent
    from pytest_ooda.plugin.options import PluginSettings
    from pytest_ooda.scenario import Replayed, Scenario
    from pytest_ooda.variants import Variant


def _touches_files(scenario: Scenario) -> bool:
    """Whether a replay reads or writes workspace files (else any empty dir will do);
    verification commands may write (caches, build output), so they get their own."""
    return (
        scenario.workspace is not None
        or any(it.files for it in scenario.iterations)
        or (scenario.expect is not None and bool(scenario.expect.files or scenario.expect.commands))
        or bool(scenario.context)
    )


def _replayed(
    config: Config,
    scenario: Scenario,
    workdir: Path,
    *,
    drift: str,
    root: Path,
    sandbox: str | None = None,
    run_commands: bool = True,
    judge: JudgeContext | None = None,
    regrade: bool = False,
) -> Replayed:
    """The shared replay path; running out of iterations reports the served ones."""
    from pytest_ooda.scenario import replay_scenario

    try:
        return replay_scenario(
            config,
            scenario,
            workdir=workdir,
            sleep=False,
            drift=drift != "ignore",
            handle_signals=False,
            show_ai_output=False,
            sandbox=sandbox,
            run_commands=run_commands,
            judge=judge,
            regrade=regrade,
        )
    except ReplayExhaustedError as error:
        table = served_table(list(error.served))
        raise ItemFailure("\n".join([report.format_error(error, root=root), "", *table])) from None


@contextlib.contextmanager
def _replay_dir(reuse: Path | None) -> Iterator[Path]:
    """An empty directory for one replay: ``reuse`` emptied, else a temporary one."""
    if reuse is not None and _emptied(reuse):
        yield reuse
        return
    with tempfile.TemporaryDirectory(prefix="ooda-replay-") as tmp:
        yield Path(tmp) / "workspace"


def _emptied(directory: Path) -> bool:
    """Empty ``directory`` (creating it if needed); ``False`` when something stays."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for child in directory.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        return not any(directory.iterdir())
    except OSError:
        return False


def replay(
    config: Config,
    procedure: str,
    path: Path,
    *,
    drift: str,
    root: Path,
    empty_dir: Path | None = None,
    work_dir: Path | None = None,
    sandbox: str | None = None,
    run_commands: bool = True,
    regrade: bool = False,
    judge_cache: Path | None = None,
    ignore_dir: Path | None = None,
    live_nodeid: Callable[[Scenario], str] | None = None,
) -> None:
    """Replay the scenario at ``path``; ``ItemFailure`` when it misses its expectations.

    Its verification commands run inside the session's (``sandbox``) or the configured
    sandbox, unless ``run_commands`` is off (``--ooda-replay-commands=skip``).
    ``live_nodeid`` is the scenario's live item: a drift's hint is the command that
    re-records that one scenario.

    ``empty_dir`` (shared, never written) serves scenarios that touch no files, and
    ``work_dir`` (emptied before each use) the others: creating and removing a directory
    per scenario costs more than the replay itself on many file systems.
    """
    scenario = load_for(procedure, path)
    if not scenario.iterations:
        raise ScenarioError(
            f"scenario {scenario.label!r} has no iterations to replay yet",
            file=str(path),
            hint=f"record it: pytest -m live -k {path.stem!r} --ooda-record-mode=once "
            "(with --ooda-ai-cmd or --ooda-ai-cmd-alias), or write iterations by hand",
        )
    judge = _judge_context(config, judge_cache, ignore_dir) if _judged(scenario) else None
    if empty_dir is not None and not _touches_files(scenario):
        replayed = _replayed(
            config, scenario, empty_dir, drift=drift, root=root, judge=judge, regrade=regrade
        )
    else:
        workspace = workspace_of(scenario, root=root)
        with _replay_dir(work_dir) as target:
            workdir = copy_workspace(workspace, target)
            replayed = _replayed(
                config,
                scenario,
                workdir,
                drift=drift,
                root=root,
                sandbox=sandbox,
                run_commands=run_commands,
                judge=judge,
                regrade=regrade,
            )
    _warn_judge_notes(scenario, replayed, path)
    problems, drifts = list(replayed.problems), list(replayed.drifts)
    failing_drifts = drifts if drift == "fail" else []
    if problems or failing_drifts:
        rerecord = None
        if live_nodeid is not None:
            rerecord = (
                "  re-record only this scenario: pytest -m live --ooda-record-mode=new "
                f"{shlex.quote(live_nodeid(scenario))}\n  (or drop prompt_sha256 from a "
                "hand-written scenario, or pass --ooda-drift=warn)"
            )
        raise ItemFailure(
            failure_text(
                scenario,
                replayed.result,
                problems,
                failing_drifts,
                root=root,
                mode="replay",
                rerecord_hint=rerecord,
            )
        )
    for found in drifts:
        report.warn_at(
            DriftWarning(f"scenario {scenario.label}: {found.describe()}"),
            path,
        )


def _judged(scenario: Scenario) -> bool:
    return scenario.expect is not None and scenario.expect.judge is not None


def _judge_context(config: Config, cache: Path | None, ignore: Path | None) -> JudgeContext:
    """What a replay needs to ask the judge again (``--ooda-regrade``)."""
    import os

    from pytest_ooda.judge import JudgeContext, cache_for

    return JudgeContext(config=config, cache=cache_for(cache, ignore_dir=ignore), env=os.environ)


def _warn_judge_notes(scenario: Scenario, replayed: Replayed, path: Path) -> None:
    """Recorded verdicts for another rubric, verdicts a regrade flipped."""
    if replayed.judged is None:
        return
    from pytest_ooda.errors import JudgeWarning

    for note in replayed.judged.notes:
        report.warn_at(JudgeWarning(f"scenario {scenario.label}: {note}"), path)


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
    said: set[str] | None = None,
    variant: Variant | None = None,
    scenario: Scenario | None = None,
    slots_dir: Path | None = None,
    runs_dir: Path | None = None,
) -> LiveRun:
    """Run the scenario at ``path`` live (:func:`pytest_ooda.live.run_live`) and issue
    the run's warnings at their files; the caller decides the item's verdict. A
    sandbox note whose text is in ``said`` (the session's) is not repeated."""
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
        if isinstance(warning, SandboxWarning) and said is not None:
            if warning.message in said:
                continue  # once per session
            said.add(warning.message)
        # pytest's summary names the file and quotes its line: the text is the message.
        shown = type(warning)(warning.message, hint=warning.hint)
        report.warn_at(shown, warning.file or path, warning.line)
    return outcome
