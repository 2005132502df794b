"""One live run of a :class:`~pytest_ooda.live.RunPlan`, end to end: the one code path of
``pytest -m live`` and ``ooda run``.

A run is a sequence of small steps, each its own function given the values of the
plan it reads: preflight (an agent that cannot start here is refused before any
iteration), workspace (a fresh copy of the scenario's workspace made a repository, or
the plan's directory itself), sandbox (:func:`pytest_ooda.sandbox.sandboxed`: started
around the workspace, stopped after the verification commands), loop (the plan's
settings through :func:`pytest_ooda.loop.run_loop`), assess (``expect``: files, tools,
verification commands, then ``expect.judge``), outcome
(:func:`pytest_ooda.results.classify_outcome`), the recording (per record mode,
redacted; a failed run never replaces a recording) and the results record, built once
(:func:`pytest_ooda.results.build_record`).

Running is apart from writing: :func:`run_live` writes nothing the session keeps. What
the run produced comes back as one value, :class:`LiveRun` — the record, the recording
to write, the failure report, the warnings — which pickles, so the run may happen in
another process or on another machine. The caller writes the recording
(:func:`write_recording`) and the record (:class:`pytest_ooda.results.ResultsLog`):
in pytest the item's process writes the recording and the process that sees every
report writes the log; ``ooda run --record`` writes the recording.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_ooda.errors import (
    AgentWarning,
    ConfigError,
    OodaWarning,
    RecordingWarning,
    SandboxError,
    ScenarioWarning,
)
from pytest_ooda.live.api import open_api
from pytest_ooda.live.plan import Portable
from pytest_ooda.live.preflight import missing_credentials
from pytest_ooda.live.watch import Watch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pytest_ooda._types import InfraErrorKind, RunOutcome
    from pytest_ooda.backends import Backend
    from pytest_ooda.config import RedactSettings
    from pytest_ooda.facts import Fingerprint
    from pytest_ooda.judge import Judged, JudgeInputs
    from pytest_ooda.live.api import ApiOutcome, ApiStep
    from pytest_ooda.live.plan import RunPlan
    from pytest_ooda.live.slots import Slot
    from pytest_ooda.loop import LoopEvent, LoopResult
    from pytest_ooda.redact import Redactor
    from pytest_ooda.results import RecordHead, RunRecord
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec
    from pytest_ooda.scenario import Assessment, CommandOutcome, MaterialDir, Recorder, Scenario

__all__ = [
    "Held",
    "LiveRun",
    "Recording",
    "run_live",
    "run_preflight",
    "unmade_run",
    "write_recording",
]


@dataclass(frozen=True)
class Recording(Portable):
    """A run to write into a scenario file: the scenario with the run's iterations,
    redacted where the run happened, and the file it goes to."""

    scenario: Scenario
    path: Path
    redact: RedactSettings | None = None


@dataclass(frozen=True)
class LiveRun(Portable):
    """What one live run produced: its outcome, the loop's result, the expectations it
    missed, its results record, the recording to write, and what a person must hear."""

    scenario: str
    run: int
    runs: int
    outcome: RunOutcome
    result: LoopResult
    record: RunRecord
    problems: tuple[str, ...] = ()
    #: Why an ``error`` run is the infrastructure's fault.
    error_reason: str | None = None
    #: The recording to write (:func:`write_recording`); ``None``: not recorded.
    recording: Recording | None = None
    #: Why a wanted recording was not made.
    not_recorded: str | None = None
    #: The failure report (redacted); empty when every expectation held.
    report: str = ""
    warnings: tuple[OodaWarning, ...] = ()
    #: What the API proxy made of the run (``plan.api``): the cassette to write
    #: (:func:`~pytest_ooda.live.api.write_cassette_of`), a replay's divergence.
    api: ApiOutcome | None = None

    @property
    def failed(self) -> bool:
        return bool(self.problems)


def write_recording(recording: Recording) -> Path:
    """Write ``recording`` (redacted again with this process's environment, atomically,
    keeping the user's comments in a file that exists); its path. A file that cannot be
    written is a located ``ScenarioError``."""
    from pytest_ooda.scenario import save_scenario

    return save_scenario(
        recording.scenario, recording.path, env=os.environ, redact=recording.redact
    )


# --------------------------------------------------------------------------- steps


def run_preflight(plan: RunPlan) -> None:
    """Refuse, before the first iteration, an agent that cannot start where it will run
    (here, or inside the plan's sandbox: as the uid it has there, with the environment
    its ``env:`` gives it, seeing what the sandbox lets it see)."""
    from pytest_ooda.live.preflight import agent_refusal

    problem = agent_refusal(plan.settings.ai_cmd, plan.settings.sandbox)
    if problem is not None:
        scenario = plan.scenario
        raise ConfigError(
            f"scenario {scenario.label}: {problem}" if scenario.path is not None else problem,
            file=str(scenario.path) if scenario.path is not None else None,
        )


@contextlib.contextmanager
def _run_dir(parent: Path | None, left: list[str]) -> Iterator[Path]:
    """A new directory for one live run (under ``parent`` when given), removed when the
    run is over; what could not be removed is said in ``left``."""
    from pytest_ooda.workspace import remove_tree

    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="ooda-live-", dir=parent))
    try:
        yield directory
    finally:
        problem = remove_tree(directory)
        if problem is not None:
            left.append(f"{directory} was left behind: {problem}")


def _workdir(
    where: tuple[Path | None, Path | None, Path | None],
    material: tuple[MaterialDir, ...],
    stack: contextlib.ExitStack,
    left: list[str],
) -> Path:
    """Where the agent works: ``where`` is the plan's own directory, the scenario's
    workspace and the runs' directory. The plan's directory when it has one, else a
    fresh copy of the workspace with the agent ``material`` installed, made a
    repository, in a directory of the run's own under the runs' directory, removed with
    ``stack`` (``left``: see :func:`_run_dir`)."""
    workdir, workspace, runs_dir = where
    if workdir is not None:
        return workdir
    from pytest_ooda.live.prepare import fresh_workspace

    directory = stack.enter_context(_run_dir(runs_dir, left))
    return fresh_workspace(workspace, material, directory / "workspace")


def _sandbox(
    spec: SandboxSpec | None, workdir: Path
) -> contextlib.AbstractContextManager[SandboxRun | None]:
    """The sandbox ``spec`` started around ``workdir`` for the block (``None``: none)."""
    from pytest_ooda.sandbox import sandboxed

    return sandboxed(spec, workdir)


def _identity(sandbox: SandboxRun | None) -> dict[str, str | None] | None:
    """The sandbox as the record and the recording name it (``None``: no sandbox)."""
    return dict(sandbox.identity) if sandbox is not None else None


def _drifted(plan: RunPlan, workdir: Path) -> bool:
    """Whether the scenario's first recorded prompt differs from the one sent now."""
    from pytest_ooda.compose import assemble_prompt, prompt_sha256

    scenario = plan.scenario
    if not scenario.iterations or scenario.iterations[0].prompt_sha256 is None:
        return False
    prompt = assemble_prompt(
        plan.procedure,
        iteration=1,
        max_iterations=plan.settings.max_iterations,
        context=plan.context,
        cwd=workdir,
    )
    return prompt_sha256(plan.procedure, prompt) != scenario.iterations[0].prompt_sha256


@contextlib.contextmanager
def _slot(plan: RunPlan) -> Iterator[Slot | None]:
    """Under ``max_concurrent``: hold one of the agent's slots for the run, shared with
    every process of the session; else nothing to hold."""
    if plan.max_concurrent is None or plan.slots_dir is None:
        yield None
        return
    from pytest_ooda.live.slots import acquire
    from pytest_ooda.results import ai_identity

    identity = ai_identity(plan.settings)
    agent = identity.command or identity.api or "ai"
    with acquire(plan.slots_dir, agent, plan.max_concurrent) as slot:
        yield slot


def _recorder(plan: RunPlan, workdir: Path, warnings: list[OodaWarning]) -> Recorder | None:
    """The recorder of a run the record mode wants written (only a scenario's first
    repeat, so repeats never write one file); ``None`` when it is not wanted, or when
    the scenario belongs to an installed package (said in ``warnings``)."""
    from pytest_ooda.scenario import Recorder

    recorder = Recorder(
        plan.scenario,
        plan.record_mode,
        path=plan.record_to,
        env=os.environ,
        redact=plan.config.redact,
        record_failures=plan.record_failures,
    )
    if plan.run != 1 or not recorder.wanted(drifted=_drifted(plan, workdir)):
        return None
    if plan.read_only:
        source = plan.scenario.path
        warnings.append(
            RecordingWarning(
                f"scenario {plan.label}: not recorded, {source} belongs to the installed "
                "package (copy the scenario into your project to record it)",
                file=str(source) if source is not None else None,
            )
        )
        return None
    return recorder


def _recording(
    plan: RunPlan,
    recorder: Recorder,
    result: LoopResult,
    verdict: tuple[tuple[str, ...], RunOutcome],
    judged: Judged | None,
    warnings: list[OodaWarning],
) -> tuple[Recording | None, str | None]:
    """The recording to write, or why a wanted one is not made (a failed run the
    record mode does not keep is said as a warning too: its item may pass or skip)."""
    from pytest_ooda.results import failed_run
    from pytest_ooda.scenario import redact_scenario

    problems, outcome = verdict
    if judged is not None and judged.error is not None:
        return None, "the judge gave no usable answer"
    # A failed run is not recorded under once/new: an infrastructure error, a loop that
    # ended otherwise than expected, or any per-run expectation missed (a file, a tool,
    # a command, the judge): its replay would be red from then on.
    failed = failed_run(plan.scenario, result.status, outcome)
    if failed is None and problems:
        failed = f"the run missed its expectations ({problems[0].strip().lstrip('- ')})"
    recorded = recorder.recording(
        result, problems, judged=judged.recorded if judged is not None else None, failed=failed
    )
    if recorded is None and failed is not None and recorder.skipped_reason is not None:
        path = plan.scenario.path
        warnings.append(
            RecordingWarning(
                f"scenario {plan.label}: not recorded: {recorder.skipped_reason}",
                file=str(path) if path is not None else None,
            )
        )
    if recorded is None or recorder.path is None:
        return None, recorder.skipped_reason
    warnings.extend(
        RecordingWarning(f"scenario {plan.label}: {note}", file=str(recorder.path))
        for note in recorder.warnings
    )
    # Redacted here, with the environment the run had: the value may travel.
    scenario = redact_scenario(recorded, os.environ, plan.config.redact)
    return Recording(scenario, recorder.path, plan.config.redact), None


def _not_started(
    plan: RunPlan,
    head: RecordHead,
    error: SandboxError,
    workdir: Path,
    redactor: Redactor,
    kind: InfraErrorKind = "sandbox",
) -> LiveRun:
    """A run whose sandbox would not start, or give its agent credentials: an ``error``."""
    from pytest_ooda.backends import infra_reason, redacted_call
    from pytest_ooda.live.prepare import no_loop
    from pytest_ooda.results import build_record, classify_outcome

    what = "the sandbox did not start" if kind == "sandbox" else "the agent could not start"
    reason, text = infra_reason(kind, error.message), f"{what}: {error.message}"
    result = no_loop(plan, workdir, reason, text)
    outcome, why = classify_outcome(plan.scenario, result, (), infra_error=reason)
    now = time.time()
    record = build_record(
        head,
        result,
        outcome,
        redactor=redactor,
        redact_call=redacted_call,
        error_reason=why,
        started_at=now,
        finished_at=now,
    )
    return LiveRun(
        scenario=plan.label,
        run=plan.run,
        runs=plan.runs,
        outcome=outcome,
        error_reason=record.error_reason,
        result=result,
        record=record,
        report=redactor(text + (f"\n  {error.hint}" if error.hint else "")),
    )


def unmade_run(plan: RunPlan, reason: str, *, started: float, worker: str | None) -> LiveRun:
    """A run of ``plan`` that ended before anything of it came back — its pytest-xdist
    worker crashed, or the cluster's workers making it were lost — as an infrastructure
    ``error`` (``reason``: ``worker-crashed: …``, ``worker-lost: …``), by the one record
    builder."""
    from pytest_ooda.backends import redacted_call
    from pytest_ooda.loop import LoopResult, TimingStats
    from pytest_ooda.redact import Redactor
    from pytest_ooda.results import build_record

    now = time.time()
    detail = reason.partition(": ")[2] or reason
    result = LoopResult(
        procedure=plan.procedure.name,
        status="interrupted",
        records=(),
        timing=TimingStats(),
        elapsed=now - started,
        max_iterations=plan.settings.max_iterations,
        failure_threshold=plan.settings.failure_threshold,
        error=detail,
    )
    redactor = Redactor(
        os.environ,
        extra_patterns=plan.config.redact.patterns,
        extra_env_names=plan.config.redact.env,
    )
    record = build_record(
        plan.head(worker=worker),
        result,
        "error",
        redactor=redactor,
        redact_call=redacted_call,
        error_reason=reason,
        started_at=started,
        finished_at=now,
    )
    return LiveRun(
        scenario=plan.label,
        run=plan.run,
        runs=plan.runs,
        outcome="error",
        error_reason=record.error_reason,
        result=result,
        record=record,
        report=redactor(f"the run was not made: {detail}"),
    )


# --------------------------------------------------------------------------- the run


@dataclass
class _Ran:
    """What the loop and the checks made, before the outcome is decided."""

    result: LoopResult
    assessment: Assessment
    #: What the judge is shown, taken before the verification commands ran.
    inputs: JudgeInputs | None
    watch: Watch
    recorder: Recorder | None
    sandbox: SandboxRun | None
    started: float
    queued: float | None
    #: Why the run is an infrastructure ``error`` though its loop ran (a fresh sandbox
    #: for the verification commands that did not start).
    infra_error: str | None = None
    api: ApiStep | None = None
    #: What the scenario's ``setup:`` commands did before the agent started.
    setup: tuple[CommandOutcome, ...] = ()
    fingerprint: Fingerprint | None = None


class Held(Protocol):
    """A ``max_concurrent`` slot held for a run: how long it took to get, in seconds."""

    @property
    def waited(self) -> float: ...


def run_live(
    plan: RunPlan,
    *,
    on_event: Callable[[LoopEvent], None] | None = None,
    handle_signals: bool = False,
    worker: str | None = None,
    slot: Callable[[RunPlan], contextlib.AbstractContextManager[Held | None]] | None = None,
) -> LiveRun:
    """Run ``plan`` against its agent and return everything it produced as one value.

    ``on_event`` sees every loop event; ``handle_signals`` lets the loop end the run
    ``interrupted`` on SIGINT/SIGTERM (``ooda run``) instead of letting
    ``KeyboardInterrupt`` through (pytest). Secrets are redacted with this process's
    environment as it is now. ``worker`` names where the run is made, for its record
    (default: the pytest-xdist worker, if any); ``slot`` holds the run's
    ``max_concurrent`` slot around the loop (default: the session directory's lock
    files; a cluster's worker holds one of the cluster's).

    An agent that cannot start here raises a located ``ConfigError`` before the first
    iteration; everything about the run itself comes back in the :class:`LiveRun`.
    """
    from pytest_ooda.redact import Redactor

    run_preflight(plan)
    redactor = Redactor(
        os.environ,
        extra_patterns=plan.config.redact.patterns,
        extra_env_names=plan.config.redact.env,
    )
    head = plan.head(worker=worker or os.environ.get("PYTEST_XDIST_WORKER"))
    warnings: list[OodaWarning] = []
    left: list[str] = []
    with contextlib.ExitStack() as stack:
        workdir = _workdir(
            (plan.workdir, plan.workspace, plan.runs_dir), plan.material, stack, left
        )
        api = open_api(plan, workdir, redactor, stack)
        spec = api.spec if api is not None else plan.settings.sandbox
        replaying = plan.api is not None and plan.api.mode == "replay"
        if auth := missing_credentials(plan.settings.ai_cmd, spec, replaying=replaying):
            return _not_started(plan, head, SandboxError(auth), workdir, redactor, "auth")
        # The agent's sandbox on a stack of its own: expect.fresh_sandbox stops it early.
        agent_box = stack.enter_context(contextlib.ExitStack())
        try:
            sandbox = agent_box.enter_context(_sandbox(spec, workdir))
            # The agent through the API proxy: wired to the started sandbox.
            backend = api.backend(sandbox) if api is not None else None
        except SandboxError as error:
            # The infrastructure's fault: nothing about the prompt was measured.
            return _not_started(plan, head, error, workdir, redactor)
        boxes = (agent_box, sandbox)
        held = stack.enter_context((slot or _slot)(plan))
        ran = _run(
            plan, stack, workdir, boxes, redactor, warnings, on_event, handle_signals, backend
        )
        ran.queued = held.waited if held is not None else None
        ran.api = api
    if left and ran.infra_error is None:
        from pytest_ooda.backends import infra_reason

        # A run whose directory stays behind (a file the agent made undeletable) is no
        # clean measurement: said, and named, never lost.
        ran.infra_error = infra_reason("workspace", left[0])
    return _finish(plan, head, ran, redactor, warnings)


def _run(
    plan: RunPlan,
    stack: contextlib.ExitStack,
    workdir: Path,
    boxes: tuple[contextlib.ExitStack, SandboxRun | None],
    redactor: Redactor,
    warnings: list[OodaWarning],
    on_event: Callable[[LoopEvent], None] | None,
    handle_signals: bool,
    backend: Backend | None = None,
) -> _Ran:
    """The loop, then the expectations: the judge's inputs are taken before the
    verification commands run, which run where the agent ran (``boxes``: the agent's
    sandbox and the stack that stops it), or in a fresh sandbox
    (``expect.fresh_sandbox``). ``backend``: the agent as the API step starts it
    (``None``: as the settings say)."""
    from pytest_ooda.live.fingerprint import take_fingerprint
    from pytest_ooda.live.judging import judge_inputs
    from pytest_ooda.live.prepare import no_loop, run_setup, scenario_to_assess
    from pytest_ooda.loop import run_loop

    agent_box, sandbox = boxes
    recorder = _recorder(plan, workdir, warnings)
    if recorder is not None:
        recorder.sandbox = _identity(sandbox)
    watch = Watch(
        workdir,
        redactor,
        recorder,
        on_event,
        watching=plan.watch_workspace,
        shown=plan.settings.show_ai_output,
    )
    started = time.time()
    setup, refused = run_setup(plan, workdir, sandbox, redactor)
    fingerprint = None
    if refused is not None:
        result = no_loop(plan, workdir, refused, f"the scenario's setup failed: {refused}")
    else:
        # What the agent is about to load, where it runs (the sandbox's fresh HOME).
        fingerprint = take_fingerprint(plan, workdir, sandbox)
        result = run_loop(
            plan.procedure,
            plan.settings,
            context=plan.context,
            workdir=workdir,
            on_event=watch,
            handle_signals=handle_signals,
            sandbox=sandbox,
            stream=watch.shown,
            backend=backend,
        )
    inputs = judge_inputs(plan.scenario, result, workdir, redactor)
    checker, infra_error = _checker(
        plan.scenario, plan.settings.sandbox, (agent_box, stack), (sandbox, workdir), warnings
    )
    # Protected paths are put back from the workspace's source first; the commands'
    # output is redacted whole.
    assessment = scenario_to_assess(plan.scenario, plan.workdir is not None, warnings).assess(
        result,
        workdir,
        sandbox=checker,
        run_commands=infra_error is None,
        redact=redactor,
        source=plan.workspace,
    )
    # A workspace that could not be put back measured nothing: an error, said.
    infra_error = infra_error or assessment.workspace_error
    return _Ran(
        result=result,
        assessment=assessment,
        inputs=inputs,
        watch=watch,
        recorder=recorder,
        sandbox=sandbox,
        started=started,
        queued=None,
        infra_error=infra_error or refused,
        setup=setup,
        fingerprint=fingerprint,
    )


def _checker(
    scenario: Scenario,
    spec: SandboxSpec | None,
    stacks: tuple[contextlib.ExitStack, contextlib.ExitStack],
    where: tuple[SandboxRun | None, Path],
    warnings: list[OodaWarning],
) -> tuple[SandboxRun | None, str | None]:
    """Where the verification commands run: the agent's sandbox, or with
    ``expect.fresh_sandbox`` a new one over the workspace once the agent's is stopped
    (nothing the agent started, and nothing it left in its home or ``/tmp``, is there).
    The second value is the infrastructure error of a fresh sandbox that did not start:
    the commands do not run then, and the run is an ``error``."""
    from pytest_ooda.backends import infra_reason

    (agent_box, stack), (sandbox, workdir) = stacks, where
    expect = scenario.expect
    if expect is None or not expect.fresh_sandbox or not expect.commands:
        return sandbox, None
    if sandbox is None:
        path = scenario.path
        warnings.append(
            ScenarioWarning(
                f"scenario {scenario.label}: expect.fresh_sandbox has no effect: the run has no "
                "sandbox, so the verification commands run on this machine as usual",
                file=str(path) if path is not None else None,
            )
        )
        return None, None
    agent_box.close()
    try:
        return stack.enter_context(_sandbox(spec, workdir)), None
    except SandboxError as error:
        text = f"the fresh sandbox for the verification commands did not start: {error.message}"
        return None, infra_reason("sandbox", text)


def _finish(
    plan: RunPlan, head: RecordHead, ran: _Ran, redactor: Redactor, warnings: list[OodaWarning]
) -> LiveRun:
    """The judge (outside the sandbox and the agent's slot), the run's outcome,
    decided once, then its recording and its record."""
    from pytest_ooda.backends import redacted_call
    from pytest_ooda.live.judging import judge_run
    from pytest_ooda.live.prepare import fired_fields
    from pytest_ooda.live.report import (
        agent_warnings,
        failure_report,
        judge_field,
        sandbox_warnings,
    )
    from pytest_ooda.live.transcript import build_transcript
    from pytest_ooda.results import build_record, classify_outcome

    result = ran.result
    judged = judge_run(plan, result, ran.inputs, ran.assessment.problems, redactor=redactor)
    problems = tuple(ran.assessment.problems)
    if judged is not None and judged.problem is not None:
        problems += (judged.problem,)
    judge_error = judged.error if judged is not None else None
    outcome, reason = classify_outcome(
        plan.scenario, result, problems, judge_error=judge_error, infra_error=ran.infra_error
    )
    path = plan.scenario.path
    warnings.extend(
        AgentWarning(f"scenario {plan.label}: {text}", file=str(path) if path else None)
        for text in agent_warnings(result)
    )
    warnings.extend(sandbox_warnings(ran.sandbox, plan, path))
    recording, not_recorded = (
        _recording(plan, ran.recorder, result, (problems, outcome), judged, warnings)
        if ran.recorder is not None
        else (None, None)
    )
    met, recorded = not problems and judge_error is None, recording is not None
    api = (
        ran.api.outcome(plan, result, met=met, recorded=recorded, warnings=warnings)
        if ran.api
        else None
    )
    grading = judged.grading if judged is not None else None
    record = build_record(
        head,
        result,
        outcome,
        redactor=redactor,
        redact_call=redacted_call,
        error_reason=reason,
        problems=problems,
        commands=ran.assessment.commands,
        protected_changes=ran.assessment.protected_changes,
        changes=ran.watch.changes,
        judge=judge_field(plan, grading, redactor) if grading is not None else None,
        sandbox=_identity(ran.sandbox),
        queued=ran.queued,
        transcript=build_transcript(plan.procedure, result, redactor, ran.watch.diffs),
        started_at=ran.started,
        finished_at=time.time(),
        fired=fired_fields(ran.assessment, result, ran.setup),
        fingerprint=ran.fingerprint,
    )
    return LiveRun(
        scenario=plan.label,
        run=plan.run,
        runs=plan.runs,
        outcome=outcome,
        error_reason=record.error_reason,
        result=result,
        record=record,
        problems=problems,
        recording=recording,
        not_recorded=not_recorded,
        report=failure_report(plan, result, problems, judge_error, not_recorded, redactor),
        warnings=tuple(warnings),
        api=api,
    )
