"""One live run of one scenario, end to end: the one code path of ``pytest -m live`` and
``ooda run --record``.

A run is a sequence of small steps, each its own function: load (scenario, config, AI
command), workspace (a fresh git-initialised copy of the scenario's workspace, kept
inside the project, or the caller's directory), sandbox (:mod:`.isolation`: started
around the workspace, stopped after the verification commands), loop (the real AI
command through the loop runner, held to the budgets), assess (``expect``: files, tools,
verification commands), outcome (:func:`classify_outcome`), recording (per record mode,
redacted, atomic; a failed run never replaces a recording) and the results record.
Nothing here prints or raises for a run that merely failed: warnings and outcomes come
back as values in a :class:`LiveRun`, and the plugin and the CLI present them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import display_path
from pytest_ooda.errors import (
    AgentWarning,
    ConfigError,
    OodaWarning,
    RecordingWarning,
    SandboxError,
)
from pytest_ooda.evaluate import classify_outcome
from pytest_ooda.live import isolation
from pytest_ooda.live.prepare import Prepared, prepare
from pytest_ooda.live.report import agent_warnings
from pytest_ooda.scenario import failure_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from pytest_ooda._types import RunOutcome
    from pytest_ooda.config import Config
    from pytest_ooda.evaluate import RunRecord
    from pytest_ooda.judge import Grading, Judged
    from pytest_ooda.live.settings import LiveSettings
    from pytest_ooda.live.slots import Slot
    from pytest_ooda.loop import LoopEvent, LoopResult
    from pytest_ooda.sandbox import SandboxSpec
    from pytest_ooda.scenario import Assessment, Scenario

__all__ = ["LiveRun", "run_live"]


@dataclass
class LiveRun:
    """What one live run produced: its outcome, the loop's result, the expectations it
    missed, its results record, where it was recorded, and what a person must hear."""

    scenario: str
    run: int
    runs: int
    outcome: RunOutcome
    result: LoopResult
    record: RunRecord
    problems: tuple[str, ...] = ()
    #: Why an ``error`` run is the infrastructure's fault.
    error_reason: str | None = None
    #: The scenario file the run was recorded to (``None``: not recorded).
    recorded: Path | None = None
    #: Why a wanted recording was not written.
    not_recorded: str | None = None
    #: The failure report (redacted); empty when every expectation held.
    report: str = ""
    warnings: tuple[OodaWarning, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.problems)


# --------------------------------------------------------------------------- steps


def _preflight(command: str | None, scenario: Scenario, spec: SandboxSpec | None) -> None:
    """Refuse, before the first iteration, an agent that cannot start where it will run
    (here, or inside the run's sandbox with the environment its ``env:`` gives it)."""
    import shlex

    from pytest_ooda.live.preflight import root_refusal, sandbox_env

    argv = shlex.split(command) if command else None
    if spec is None or spec.kind == "none":
        problem = root_refusal(argv)
    else:
        inside = sandbox_env(spec.options, os.environ)
        problem = root_refusal(argv, env=inside, sandbox=spec.kind)
    if problem is not None:
        raise ConfigError(
            f"scenario {scenario.label}: {problem}",
            file=str(scenario.path) if scenario.path is not None else None,
        )


@contextlib.contextmanager
def _run_dir(discard: Callable[[Path], None] | None, parent: Path | None = None) -> Iterator[Path]:
    """A new directory for one live run (under ``parent`` when given), handed to
    ``discard`` when the run is over."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="ooda-live-", dir=parent))
    try:
        yield directory
    finally:
        if discard is not None:
            discard(directory)
        else:
            shutil.rmtree(directory, ignore_errors=True)


def _fresh_workspace(scenario: Scenario, directory: Path, *, root: Path) -> Path:
    """A git-initialised copy of the scenario's workspace (inside ``root``) in
    ``directory``."""
    from pytest_ooda.scenario import workspace_of
    from pytest_ooda.workspace import fresh_repository

    return fresh_repository(workspace_of(scenario, root=root), directory / "workspace")


def _drifted(config: Config, scenario: Scenario, workdir: Path) -> bool:
    """Whether the first recorded prompt differs from the one assembled now."""
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import resolve_run_settings
    from pytest_ooda.scenario import sha256_text

    if not scenario.iterations or scenario.iterations[0].prompt_sha256 is None:
        return False
    limit = scenario.max_iterations
    if limit is None:
        limit = resolve_run_settings(config, scenario.procedure, require_ai=False).max_iterations
    prompt = assemble_prompt(
        config.procedure(scenario.procedure),
        iteration=1,
        max_iterations=limit,
        context=scenario.context,
        cwd=workdir,
    )
    return sha256_text(prompt) != scenario.iterations[0].prompt_sha256


def _loop(
    prepared: Prepared,
    workdir: Path,
    settings: LiveSettings,
    *,
    on_event: Callable[[LoopEvent], None],
    show_output: bool,
    run_options: dict[str, Any],
) -> LoopResult:
    """The scenario through the loop runner against the real AI, held to the tighter of
    the scenario's and the session's budgets."""
    from pytest_ooda.loop import run_procedure, tightest

    scenario = prepared.scenario
    options: dict[str, Any] = {
        "max_iterations": scenario.max_iterations,
        "context": scenario.context,
        "failure_threshold": scenario.failure_threshold,
        "handle_signals": False,
        "show_ai_output": show_output,
        "ai_output": settings.ai_output,
        "max_cost": tightest(scenario.max_cost, settings.max_cost),
        "max_tokens": tightest(scenario.max_tokens, settings.max_tokens),
        "retry": scenario.retry,
        "retries": settings.retries,
        **run_options,
    }
    return run_procedure(
        prepared.config,
        scenario.procedure,
        workdir=workdir,
        ai_cmd=prepared.ai_cmd,
        ai_cmd_alias=prepared.ai_cmd_alias,
        on_event=on_event,
        **options,
    )


@contextlib.contextmanager
def _slot(prepared: Prepared, settings: LiveSettings) -> Iterator[Slot | None]:
    """Under ``max_concurrent``: hold one of the AI command's (or API's) slots for the
    run, shared with every process of the session; else nothing to hold."""
    if settings.max_concurrent is None or settings.slots_dir is None:
        yield None
        return
    from pytest_ooda.live.slots import acquire

    identity = prepared.identity.command or prepared.identity.api or "ai"
    with acquire(settings.slots_dir, identity, settings.max_concurrent) as slot:
        yield slot


def _record_scenario(
    prepared: Prepared,
    result: LoopResult,
    problems: Sequence[str],
    *,
    read_only: bool,
    judged: Judged | None = None,
) -> tuple[Path | None, str | None]:
    """Write the run into its scenario file when the record mode wants it; where it
    was written, or why a wanted recording was not."""
    scenario, recorder = prepared.scenario, prepared.recorder
    source = scenario.path
    if judged is not None and judged.error is not None:
        return None, "the judge gave no usable answer"
    if read_only:
        prepared.warnings.append(
            RecordingWarning(
                f"scenario {scenario.label}: not recorded, {source} belongs to the installed "
                "package (copy the scenario into your project to record it)",
                file=str(source) if source is not None else None,
            )
        )
        return None, None
    written = recorder.commit(
        result, problems, judged=judged.recorded if judged is not None else None
    )
    if written is None:
        return None, recorder.skipped_reason
    prepared.warnings.extend(
        RecordingWarning(f"scenario {scenario.label}: {note}", file=str(written))
        for note in recorder.warnings
    )
    return written, None


def _results_record(
    prepared: Prepared,
    result: LoopResult,
    assessment: Assessment,
    outcome: tuple[RunOutcome, str | None],
    *,
    changes: Any,
    started: float,
    settings: LiveSettings,
    path: Path,
    run: int,
    runs: int,
    nodeid: str,
    sandbox: Mapping[str, str | None] | None = None,
    judged: Judged | None = None,
    queued: float | None = None,
) -> RunRecord:
    from pytest_ooda.evaluate import build_record

    kind, reason = outcome
    record = build_record(
        scenario=prepared.scenario,
        result=result,
        outcome=kind,
        problems=assessment.problems,
        redactor=prepared.redactor,
        commands=assessment.commands,
        run=run,
        runs=runs,
        started_at=started,
        finished_at=time.time(),
        fragments=prepared.fragments,
        ai=prepared.identity,
        changes=changes,
        nodeid=nodeid,
        scenario_file=display_path(path, settings.root),
        worker=os.environ.get("PYTEST_XDIST_WORKER"),
        shard=f"{settings.shard[0]}/{settings.shard[1]}" if settings.shard else None,
    )
    grading = judged.grading if judged is not None else None
    aggregate = record.aggregate_expect
    if settings.stop_early and aggregate is not None and "success_rate" in aggregate:
        # The record states the gate as this session applied it.
        aggregate = {
            **aggregate,
            "success_rate": {**aggregate["success_rate"], "stop_early": True},
        }
    return replace(
        record,
        error_reason=prepared.redactor(reason) if reason is not None else None,
        sandbox=sandbox,
        variant=settings.variant.name if settings.variant is not None else None,
        judge=_judge_field(grading, prepared) if grading is not None else None,
        retries=result.retries,
        aggregate_expect=aggregate,
        queued_s=round(queued, 3) if queued is not None else None,
    )


def _judge_field(grading: Grading, prepared: Prepared) -> dict[str, Any]:
    """The record's ``judge``: the grading, the rubric it answered and who judged
    (redacted), so a report can show what was asked beside the votes."""
    out = grading.as_dict()
    expect = prepared.scenario.expect
    spec = expect.judge if expect is not None else None
    if spec is not None:
        backend = spec.backend
        if backend.ai_api is not None:
            who = f"{backend.ai_api.provider}:{backend.ai_api.model}"
        else:
            who = backend.ai_cmd or f"alias {backend.ai_cmd_alias}"
        out["rubric"] = prepared.redactor(spec.rubric)
        out["rubric_file"] = spec.rubric_file
        out["judge"] = prepared.redactor(who)
    return out


def _not_started(
    prepared: Prepared,
    error: SandboxError,
    workdir: Path,
    *,
    settings: LiveSettings,
    path: Path,
    run: int,
    runs: int,
    nodeid: str,
) -> LiveRun:
    """The run whose sandbox would not start: an infrastructure ``error`` with its
    reason, no iteration, no verification command."""
    from pytest_ooda.backends import infra_reason
    from pytest_ooda.loop import LoopResult, TimingStats
    from pytest_ooda.scenario import Assessment
    from pytest_ooda.workspace import PathChanges

    scenario = prepared.scenario
    text = error.message
    reason = infra_reason("sandbox", text)
    result = LoopResult(
        procedure=scenario.procedure,
        status="aborted",
        records=(),
        timing=TimingStats(),
        elapsed=0.0,
        max_iterations=scenario.max_iterations,
        failure_threshold=scenario.failure_threshold or 1,
        workdir=workdir,
        error=f"the sandbox did not start: {text}",
        infra_error=reason,
    )
    outcome = classify_outcome(scenario, result, (), infra_error=reason)
    record = _results_record(
        prepared,
        result,
        Assessment([]),
        outcome,
        changes=PathChanges(workdir),
        started=time.time(),
        settings=settings,
        path=path,
        run=run,
        runs=runs,
        nodeid=nodeid,
    )
    return LiveRun(
        scenario=scenario.label,
        run=run,
        runs=runs,
        outcome=outcome[0],
        error_reason=record.error_reason,
        result=result,
        record=record,
        report=prepared.redactor(
            f"the sandbox did not start: {text}" + (f"\n  {error.hint}" if error.hint else "")
        ),
        warnings=tuple(prepared.warnings),
    )


def _with_transcript(
    prepared: Prepared, record: RunRecord, result: LoopResult, diffs: Any
) -> RunRecord:
    """The record with the run's transcript (prompt by fragment, outputs, tool calls,
    diffs), redacted and capped, for the HTML report."""
    from dataclasses import replace

    from pytest_ooda.live.transcript import build_transcript

    transcript = build_transcript(
        prepared.config, prepared.scenario, result, prepared.redactor, diffs
    )
    return replace(record, transcript=transcript)


# --------------------------------------------------------------------------- the run


def run_live(
    collected: Path,
    procedure: str,
    path: Path,
    *,
    settings: LiveSettings,
    read_only: bool = False,
    show_output: bool = False,
    run: int = 1,
    runs: int = 1,
    nodeid: str = "",
    discard: Callable[[Path], None] | None = None,
    scenario: Scenario | None = None,
    config: Config | None = None,
    workdir: Path | None = None,
    record_to: Path | None = None,
    on_event: Callable[[LoopEvent], None] | None = None,
    run_options: dict[str, Any] | None = None,
) -> LiveRun:
    """Run the scenario at ``path`` (procedure ``procedure`` of the config file
    ``collected``) against the real AI command, and maybe record it.

    By default the run works in a fresh git-initialised copy of the scenario's
    workspace, removed afterwards (or handed to ``discard``); ``workdir`` runs it in
    place instead (``ooda run --record`` in the current directory). ``scenario`` and
    ``config`` are used as given instead of being loaded from ``path`` and
    ``collected``; ``record_to`` records to another file than the scenario's.
    ``show_output`` streams the AI's output; ``on_event`` sees every loop event;
    ``run_options`` go to the loop runner and win over the scenario's and the
    settings' (e.g. a CLI's iteration limit).
    ``run`` of ``runs`` is this run's place among the scenario's repeats: only the
    first may be recorded, so repeats never write one file.

    Mistakes in the config or the scenario raise their located ``OodaError``; no AI
    configured raises ``NoAICommandError``. Everything about the run itself comes back
    in the :class:`LiveRun`.
    """
    from pytest_ooda.live.judging import judge_inputs, judge_run
    from pytest_ooda.live.transcript import DiffWatcher
    from pytest_ooda.live.variant import variant_settings
    from pytest_ooda.workspace import PathChanges

    settings = variant_settings(settings)
    prepared = prepare(
        collected,
        procedure,
        path,
        settings,
        scenario=scenario,
        config=config,
        record_to=record_to,
    )
    scenario = prepared.scenario
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = _fresh_workspace(
                scenario,
                stack.enter_context(_run_dir(discard, settings.runs_dir)),
                root=settings.root,
            )
        spec = isolation.resolve(prepared.config, scenario, settings.sandbox)
        _preflight(prepared.identity.command, scenario, spec)
        prepared.warnings.extend(
            isolation.unattended_note(
                prepared.config, scenario, spec, prepared.ai_cmd, prepared.ai_cmd_alias
            )
        )
        try:
            sandbox = stack.enter_context(isolation.start(spec, workdir))
        except SandboxError as error:
            # The infrastructure's fault: nothing about the prompt was measured.
            return _not_started(
                prepared,
                error,
                workdir,
                settings=settings,
                path=path,
                run=run,
                runs=runs,
                nodeid=nodeid,
            )
        prepared.recorder.sandbox = isolation.identity(sandbox)
        wanted = run == 1 and prepared.recorder.wanted(
            drifted=_drifted(prepared.config, scenario, workdir)
        )
        # Watching file contents costs a read of each changed file per iteration: only
        # when the run may be written. Names alone (for the results) are a stat walk.
        watch = prepared.recorder.watch(workdir) if wanted and not read_only else None
        changes = PathChanges(workdir)
        diffs = DiffWatcher(workdir, prepared.redactor)

        def observe(event: LoopEvent) -> None:
            changes(event)
            diffs(event)
            if watch is not None:
                watch(event)
            if on_event is not None:
                on_event(event)

        queued = stack.enter_context(_slot(prepared, settings))
        started = time.time()
        result = _loop(
            prepared,
            workdir,
            settings,
            on_event=observe,
            show_output=show_output,
            run_options={"sandbox": sandbox, **(run_options or {})},
        )
        # What the judge sees is taken before verification commands write anything.
        inputs = judge_inputs(scenario, result, workdir)
        # Verification commands run where the agent ran, their output redacted whole.
        assessment = scenario.assess(result, workdir, sandbox=sandbox, redact=prepared.redactor)
    judged = judge_run(
        scenario,
        result,
        inputs,
        assessment.problems,
        config=prepared.config,
        settings=settings,
        redactor=prepared.redactor,
    )
    if judged is not None and judged.problem is not None:
        assessment = replace(assessment, problems=[*assessment.problems, judged.problem])
    problems = tuple(assessment.problems)
    outcome = classify_outcome(
        scenario, result, problems, judge_error=judged.error if judged is not None else None
    )
    prepared.warnings.extend(
        AgentWarning(
            f"scenario {scenario.label}: {text}",
            file=str(scenario.path) if scenario.path is not None else None,
        )
        for text in agent_warnings(result)
    )
    recorded, not_recorded = (
        _record_scenario(prepared, result, problems, read_only=read_only, judged=judged)
        if wanted
        else (None, None)
    )
    record = _results_record(
        prepared,
        result,
        assessment,
        outcome,
        changes=changes,
        started=started,
        settings=settings,
        path=path,
        run=run,
        runs=runs,
        nodeid=nodeid,
        sandbox=isolation.identity(sandbox),
        judged=judged,
        queued=queued.waited if queued is not None else None,
    )
    record = _with_transcript(prepared, record, result, diffs)
    report = ""
    judge_error = judged.error if judged is not None else None
    if problems or judge_error is not None:
        shown = problems or (f"{judge_error} (an error of the judge, not of the run)",)
        report = failure_text(scenario, result, shown, root=settings.root, mode="live")
        if not_recorded:
            report += f"\n\n  not recorded: {not_recorded}"
        # Live output lands in CI logs: redact it like a recording.
        report = prepared.redactor(report)
    return LiveRun(
        scenario=scenario.label,
        run=run,
        runs=runs,
        outcome=outcome[0],
        error_reason=record.error_reason,
        result=result,
        record=record,
        problems=problems,
        recorded=recorded,
        not_recorded=not_recorded,
        report=report,
        warnings=tuple(prepared.warnings),
    )
