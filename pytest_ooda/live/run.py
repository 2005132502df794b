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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import display_path
from pytest_ooda.errors import (
    AgentWarning,
    ConfigError,
    NoAICommandError,
    OodaWarning,
    RecordingWarning,
    SandboxError,
)
from pytest_ooda.live import isolation
from pytest_ooda.live.outcome import classify_outcome

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from pytest_ooda._types import RunOutcome
    from pytest_ooda.config import Config
    from pytest_ooda.evaluate.record import AiIdentity
    from pytest_ooda.evaluate.results import FragmentHash, RunRecord
    from pytest_ooda.judge.run import Judged
    from pytest_ooda.live.settings import LiveSettings
    from pytest_ooda.live.slots import Slot
    from pytest_ooda.loop import LoopEvent, LoopResult
    from pytest_ooda.redact import Redactor
    from pytest_ooda.sandbox.spec import SandboxSpec
    from pytest_ooda.scenario import Assessment, Drift, Recorder, Scenario

__all__ = [
    "NO_AI_COMMAND",
    "LiveRun",
    "agent_warnings",
    "failure_text",
    "resolve_ai",
    "run_live",
]

NO_AI_COMMAND = (
    "no AI command configured for live runs; set one of:\n"
    "  - pytest --ooda-ai-cmd='my-cli -p' or --ooda-ai-cmd-alias=NAME "
    "(claude, kiro-cli, copilot, cursor-agent, or your ai_cmd_aliases)\n"
    "  - OODA_LOOP_AI_CMD or OODA_LOOP_AI_CMD_ALIAS in the environment\n"
    "  - loop.ai_cmd, loop.ai_cmd_alias or loop.ai_api in ooda-config.yml "
    "(the workspace file, --ooda-config, or the global $OODA_CONFIG_HOME/ooda-config.yml)\n"
    "  - ai_cmd, ai_cmd_alias or ai_api on the procedure itself"
)


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


@dataclass
class _Prepared:
    """What a run needs before it starts."""

    scenario: Scenario
    config: Config
    ai_cmd: str | None
    ai_cmd_alias: str | None
    identity: AiIdentity
    fragments: tuple[FragmentHash, ...]
    redactor: Redactor
    recorder: Recorder
    warnings: list[OodaWarning] = field(default_factory=list)


def _workspace_config(settings: LiveSettings, collected: Path) -> Config | None:
    """The session's workspace config, when it is a different file from ``collected``."""
    from pytest_ooda.config import CONFIG_FILENAME, load_config

    candidate = settings.config_file or settings.root / CONFIG_FILENAME
    if not candidate.is_file() or candidate.resolve() == collected.resolve():
        return None
    return load_config(candidate, cwd=settings.root)


def resolve_ai(
    config: Config, procedure: str, settings: LiveSettings, collected: Path
) -> tuple[str | None, str | None]:
    """The ``(ai_cmd, ai_cmd_alias)`` overrides for a live run; ``NoAICommandError``
    when nothing is configured.

    The collected file's own settings (and the environment, global config, and options)
    come first; the project's ``ooda-config.yml`` loop settings fill in when the
    procedure lives in another file.
    """
    from pytest_ooda.config import resolve_run_settings

    ai_cmd, alias = settings.ai_cmd, settings.ai_cmd_alias
    try:
        run = resolve_run_settings(
            config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias, require_ai=False
        )
    except ConfigError as error:
        # The library names `ooda run`'s flags; say them as this caller spells them.
        if error.message.startswith("--ai-cmd"):
            raise error.relocated(message=settings.flag_prefix + error.message[2:]) from None
        raise
    if run.ai_cmd is not None or run.ai_api is not None:
        return ai_cmd, alias
    workspace = _workspace_config(settings, collected)
    if workspace is not None:
        if workspace.loop.ai_cmd is not None:
            return workspace.loop.ai_cmd, None
        if workspace.loop.ai_cmd_alias is not None:
            return None, workspace.loop.ai_cmd_alias
    raise NoAICommandError(NO_AI_COMMAND)


@dataclass(frozen=True)
class _Inputs:
    """What every run of one scenario under one session's settings shares: read once
    per process while the files it comes from are unchanged."""

    scenario: Scenario
    config: Config
    ai_cmd: str | None
    ai_cmd_alias: str | None
    identity: AiIdentity
    redactor: Redactor


#: ``_Inputs`` by what they were made from; a run of a fast agent costs little more than
#: loading them, so repeats reuse them.
_INPUTS: dict[tuple[object, ...], _Inputs] = {}
_INPUTS_KEPT = 64


def _stat_key(path: Path | None) -> tuple[object, ...]:
    if path is None:
        return ()
    try:
        info = path.stat()
    except OSError:
        return (str(path),)
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ino)


def _inputs_key(
    collected: Path, procedure: str, path: Path, settings: LiveSettings
) -> tuple[object, ...]:
    """Everything the inputs depend on: the files (by stat), the environment's config
    variables and the global config file, and the session's settings."""
    from pytest_ooda.config.tiers import global_config_path

    environment = tuple(
        sorted(
            (name, value)
            for name, value in os.environ.items()
            if name.startswith(("OODA_", "ROODA_")) or name in ("XDG_CONFIG_HOME", "HOME")
        )
    )
    workspace = settings.config_file or settings.root / "ooda-config.yml"
    return (
        _stat_key(collected),
        procedure,
        _stat_key(path),
        _stat_key(workspace),
        _stat_key(global_config_path(os.environ)),
        environment,
        settings,
    )


def _load_inputs(collected: Path, procedure: str, path: Path, settings: LiveSettings) -> _Inputs:
    from pytest_ooda.config import command_line_overrides, load_config, resolve_run_settings
    from pytest_ooda.evaluate.record import ai_identity
    from pytest_ooda.live.variant import variant_config
    from pytest_ooda.redact import Redactor
    from pytest_ooda.scenario import load_for

    key = _inputs_key(collected, procedure, path, settings)
    found = _INPUTS.get(key)
    if found is not None:
        return found
    scenario = load_for(procedure, path)
    overrides = command_line_overrides(prompt_format=settings.prompt_format)
    config = variant_config(
        load_config(collected, cwd=settings.root, overrides=overrides), procedure, settings
    )
    ai_cmd, alias = resolve_ai(config, procedure, settings, collected)
    identity = ai_identity(
        resolve_run_settings(config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias)
    )
    redactor = Redactor(
        os.environ, extra_patterns=config.redact.patterns, extra_env_names=config.redact.env
    )
    inputs = _Inputs(scenario, config, ai_cmd, alias, identity, redactor)
    if len(_INPUTS) >= _INPUTS_KEPT:
        _INPUTS.clear()
    _INPUTS[key] = inputs
    return inputs


def _prepare(
    collected: Path,
    procedure: str,
    path: Path,
    settings: LiveSettings,
    *,
    scenario: Scenario | None,
    config: Config | None,
    record_to: Path | None,
) -> _Prepared:
    from pytest_ooda.config import command_line_overrides, load_config, resolve_run_settings
    from pytest_ooda.evaluate.record import ai_identity, fragment_hashes
    from pytest_ooda.live.variant import variant_config
    from pytest_ooda.redact import Redactor
    from pytest_ooda.scenario import Recorder, load_for

    if scenario is None and config is None:
        inputs = _load_inputs(collected, procedure, path, settings)
    else:
        if scenario is None:
            scenario = load_for(procedure, path)
        if config is None:
            overrides = command_line_overrides(prompt_format=settings.prompt_format)
            config = load_config(collected, cwd=settings.root, overrides=overrides)
        config = variant_config(config, procedure, settings)
        ai_cmd, alias = resolve_ai(config, procedure, settings, collected)
        inputs = _Inputs(
            scenario,
            config,
            ai_cmd,
            alias,
            ai_identity(resolve_run_settings(config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias)),
            Redactor(
                os.environ,
                extra_patterns=config.redact.patterns,
                extra_env_names=config.redact.env,
            ),
        )
    recorder = Recorder(
        inputs.scenario,
        settings.record_mode,
        path=record_to,
        env=os.environ,
        redact=inputs.config.redact,
    )
    return _Prepared(
        scenario=inputs.scenario,
        config=inputs.config,
        ai_cmd=inputs.ai_cmd,
        ai_cmd_alias=inputs.ai_cmd_alias,
        identity=inputs.identity,
        # Per run: a fragment file edited between runs shows in the record.
        fragments=fragment_hashes(inputs.config.procedure(procedure)),
        redactor=inputs.redactor,
        recorder=recorder,
    )


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
    prepared: _Prepared,
    workdir: Path,
    settings: LiveSettings,
    *,
    on_event: Callable[[LoopEvent], None],
    show_output: bool,
    run_options: dict[str, Any],
) -> LoopResult:
    """The scenario through the loop runner against the real AI, held to the tighter of
    the scenario's and the session's budgets."""
    from pytest_ooda.loop import run_procedure
    from pytest_ooda.loop.budget import tightest

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
def _slot(prepared: _Prepared, settings: LiveSettings) -> Iterator[Slot | None]:
    """Under ``max_concurrent``: hold one of the AI command's (or API's) slots for the
    run, shared with every process of the session; else nothing to hold."""
    if settings.max_concurrent is None or settings.slots_dir is None:
        yield None
        return
    from pytest_ooda.live.slots import acquire

    identity = prepared.identity.command or prepared.identity.api or "ai"
    with acquire(settings.slots_dir, identity, settings.max_concurrent) as slot:
        yield slot


def agent_warnings(result: LoopResult) -> list[str]:
    """What a person must hear about an agent's run that did not fail it: tools it was
    denied, a budget it could not be held to."""
    from pytest_ooda.loop.budget import unenforced_warning

    found = [text for record in result.records if (text := record.denial_warning())]
    unenforced = unenforced_warning(result)
    if unenforced is not None:
        found.append(unenforced)
    return found


def failure_text(
    scenario: Scenario,
    result: LoopResult,
    problems: Sequence[str],
    drifts: Sequence[Drift] = (),
    *,
    root: Path,
    mode: str,
    rerecord_hint: str | None = None,
) -> str:
    """The report of a run (``mode``: ``live`` or ``replay``) that missed expectations:
    what was missed, the per-iteration table, and each prompt drift with its diff."""
    from pytest_ooda.loop.tables import iteration_table

    where = display_path(scenario.path, root) if scenario.path else scenario.label
    lines = [
        f"scenario {scenario.label} ({where}) {mode}: status={result.status}, "
        f"{result.iterations} iteration(s)"
    ]
    lines.extend(f"  - {problem}" for problem in problems)
    lines.append("")
    lines.extend(iteration_table(result))
    for drift in drifts:
        lines.append("")
        lines.append(drift.describe())
    if drifts:
        lines.append("")
        lines.append(
            rerecord_hint
            or "  re-record with `pytest -m live --ooda-record-mode=new`, drop prompt_sha256 "
            "from a hand-written scenario, or pass --ooda-drift=warn"
        )
    return "\n".join(lines)


def _record_scenario(
    prepared: _Prepared,
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
    prepared: _Prepared,
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
    from pytest_ooda.evaluate.record import build_record

    record = build_record(
        scenario=prepared.scenario,
        result=result,
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
    kind, reason = outcome
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
        outcome=kind,
        success=kind == "success",
        error_reason=prepared.redactor(reason) if reason is not None else None,
        sandbox=sandbox,
        variant=settings.variant.name if settings.variant is not None else None,
        judge=grading.as_dict() if grading is not None else None,
        retries=result.retries,
        aggregate_expect=aggregate,
        queued_s=round(queued, 3) if queued is not None else None,
    )


def _not_started(
    prepared: _Prepared,
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
    from pytest_ooda.backends.infra import infra_reason
    from pytest_ooda.loop.result import LoopResult, TimingStats
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
    prepared: _Prepared, record: RunRecord, result: LoopResult, diffs: Any
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
    prepared = _prepare(
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
