"""Recording live runs: when a scenario is (re)recorded and how a run becomes one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda._types import RECORD_MODES
from pytest_ooda.errors import ScenarioError
from pytest_ooda.loop import tightest
from pytest_ooda.scenario.model import Expect, RecordedOutcome, Scenario, ScenarioIteration
from pytest_ooda.scenario.store import save_scenario
from pytest_ooda.workspace import WorkspaceChanges

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.backends import ToolCall
    from pytest_ooda.config import RedactSettings
    from pytest_ooda.judge import RecordedGrading
    from pytest_ooda.loop import LoopResult


def needs_recording(mode: str, scenario: Scenario, *, drifted: bool = False) -> bool:
    """Whether ``mode`` asks to (re)write ``scenario``: ``once`` only when it has no
    iterations, ``new`` also when its prompts drifted, ``all`` always, ``none`` never."""
    if mode not in RECORD_MODES:
        raise ScenarioError(
            f"unknown record mode {mode!r}", hint=f"expected one of: {', '.join(RECORD_MODES)}"
        )
    if mode == "none":
        return False
    if mode == "all":
        return True
    if not scenario.iterations:
        return True
    return mode == "new" and drifted


def scenario_from_result(
    scenario: Scenario,
    result: LoopResult,
    *,
    keep_expect: bool = True,
    files: Mapping[int, Mapping[str, str | None]] | None = None,
    sandbox: Mapping[str, str | None] | None = None,
    judged: RecordedGrading | None = None,
) -> Scenario:
    """``scenario`` with its iterations replaced by what ``result`` recorded.

    The first iteration keeps its full prompt text so later drift can be shown as a diff.
    ``files`` maps an iteration number to the workspace changes it made (see
    ``pytest_ooda.workspace``). Without ``keep_expect`` (or when the scenario has none)
    ``expect`` becomes the status and iteration count that were observed. What an agent
    CLI reported is kept per iteration (tool calls with paths inside the workspace made
    relative, so a recording does not name a temporary directory), and ``recorded``
    says how the run ended and what it cost. When a budget ended the run, the scenario
    keeps that budget (unless it has a tighter one), so its replay stops where the run
    did. ``judged`` is the run's ``expect.judge`` verdicts, kept so a replay grades
    offline (a recording without them drops any stale ones).
    """
    changes = files or {}
    prefix = f"{result.workdir}/" if result.workdir is not None else None
    iterations = tuple(
        ScenarioIteration(
            output=record.output,
            exit_code=record.exit_code,
            prompt_sha256=record.prompt_sha256,
            prompt=record.prompt if index == 0 else None,
            duration_s=round(record.duration, 3),
            timed_out=record.timed_out,
            files=MappingProxyType(dict(changes.get(record.number, {}))),
            error=record.error,
            usage=record.usage,
            turns=record.turns,
            model=record.model,
            tool_calls=_relative(record.tool_calls, prefix) if record.tools_reported else None,
            permission_denials=_relative(record.permission_denials, prefix),
            retries=record.retries,
            activations=record.activations,
        )
        for index, record in enumerate(result.records)
    )
    expect = scenario.expect
    if expect is None or not keep_expect:
        expect = Expect(status=result.status, iterations=result.iterations)
    usage = result.usage
    recorded = RecordedOutcome(
        status=result.status,
        reason=result.error if result.status != "success" else None,
        iterations=result.iterations,
        tokens=usage.total_tokens if usage is not None else None,
        cost=usage.cost if usage is not None else None,
        sandbox=(
            MappingProxyType({k: v for k, v in sandbox.items() if v is not None})
            if sandbox is not None
            else None
        ),
    )
    max_cost, max_tokens = scenario.max_cost, scenario.max_tokens
    if result.stopped_by_budget:
        max_cost = tightest(max_cost, result.max_cost)
        max_tokens = tightest(max_tokens, result.max_tokens)
    return replace(
        scenario,
        iterations=iterations,
        expect=expect,
        recorded=recorded,
        max_cost=max_cost,
        max_tokens=max_tokens,
        judged=judged,
    )


def _relative(calls: tuple[ToolCall, ...], prefix: str | None) -> tuple[ToolCall, ...]:
    if not prefix:
        return calls
    from pytest_ooda.backends import redacted_call

    def relative(text: str) -> str:
        return text.replace(prefix, "")

    # Through every decoded input text, so the summary made again from it (when the
    # recording is redacted) stays relative too.
    return tuple(redacted_call(call, relative) for call in calls)


class Recorder:
    """Decides whether a live run of ``scenario`` is written back, and writes it.

    Use: ``rec = Recorder(scenario, mode)``; ``rec.wanted(drifted=…)`` before the live
    run tells whether to record at all; ``rec.watch(workdir)`` gives the ``on_event``
    callback that captures each iteration's workspace changes; ``rec.commit(result,
    failures)`` after the run writes the recording (redacted, atomically) and returns the
    path, or returns ``None`` and leaves the file alone when the run was interrupted or —
    for a scenario that already has a recording — failed its expectations. A failed run
    never replaces a recording. Under ``once`` and ``new`` a failed run is not the
    first recording either: an ``error`` (the infrastructure's) or a run that ended
    otherwise than ``expect.status`` says (:func:`failed_run`) is not written unless
    ``record_failures``; ``all`` records every run. ``rec.warnings`` lists file changes
    that could not be recorded in full.
    """

    def __init__(
        self,
        scenario: Scenario,
        mode: str = "once",
        *,
        path: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        redact: RedactSettings | None = None,
        record_failures: bool = False,
    ) -> None:
        needs_recording(mode, scenario)  # validates the mode
        self.scenario = scenario
        self.mode = mode
        self.record_failures = record_failures
        self.path = Path(path) if path is not None else scenario.path
        self.env = env
        self.redact = redact
        self.skipped_reason: str | None = None
        self.changes: WorkspaceChanges | None = None
        #: The sandbox the run executed in (its identity), written under ``recorded:``.
        self.sandbox: Mapping[str, str | None] | None = None

    def wanted(self, *, drifted: bool = False) -> bool:
        return needs_recording(self.mode, self.scenario, drifted=drifted)

    def watch(self, workdir: str | Path, **limits: int) -> WorkspaceChanges:
        """Capture the changes each iteration makes under ``workdir``: pass the result
        as ``run_procedure(on_event=…)`` (it must see the loop start). ``limits`` are
        ``max_file_bytes`` / ``max_total_bytes`` of ``WorkspaceChanges``."""
        self.changes = WorkspaceChanges(workdir, **limits)
        return self.changes

    @property
    def warnings(self) -> list[str]:
        """File changes the recording holds only as a placeholder, or not at all."""
        return list(self.changes.warnings) if self.changes is not None else []

    def recording(
        self,
        result: LoopResult,
        failures: Sequence[str] = (),
        *,
        judged: RecordedGrading | None = None,
        failed: str | None = None,
    ) -> Scenario | None:
        """The scenario the run is recorded as, not written yet; ``None`` (and
        ``skipped_reason``) when the run was interrupted, or — for a scenario that
        already has a recording — failed its expectations, or is a ``failed`` run (why
        it is) the mode does not record."""
        if result.status == "interrupted":
            self.skipped_reason = "the run was interrupted"
            return None
        if failures and self.scenario.iterations:
            self.skipped_reason = "the run failed its expectations; the existing recording is kept"
            return None
        if failed is not None and self.mode != "all" and not self.record_failures:
            self.skipped_reason = (
                f"{failed}: a recording of it would replay the failure "
                "(--ooda-record-failures records failed runs, --ooda-record-mode=all every run)"
            )
            return None
        files = self.changes.iterations if self.changes is not None else None
        self.skipped_reason = None
        return scenario_from_result(
            self.scenario, result, files=files, sandbox=self.sandbox, judged=judged
        )

    def commit(
        self,
        result: LoopResult,
        failures: Sequence[str] = (),
        *,
        judged: RecordedGrading | None = None,
        failed: str | None = None,
    ) -> Path | None:
        """Write the run's :meth:`recording` (redacted, atomically); its path, or
        ``None`` when it is not recorded."""
        recorded = self.recording(result, failures, judged=judged, failed=failed)
        if recorded is None:
            return None
        return save_scenario(recorded, self.path, env=self.env, redact=self.redact)
