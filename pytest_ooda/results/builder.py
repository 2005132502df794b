"""One finished run into its results record, built once by :func:`build_record`: the
plan's :class:`~.schema.RecordHead` (which run of what, under which plan and session),
embedded as it is, the prompt's identity (its sha256 and each fragment's), per-iteration
outcomes and costs, the files the run changed — every string redacted before the
record leaves the process that ran it."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime, timezone
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda import __version__
from pytest_ooda.results.schema import AiIdentity, IterationEntry, RunRecord

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda._types import FileChange, RunOutcome
    from pytest_ooda.config import RunSettings
    from pytest_ooda.facts import CommandOutcome, Fingerprint, ToolCall
    from pytest_ooda.redact import Redactor
    from pytest_ooda.results.inputs import IterationFacts, LoopFacts, WorkspaceFacts
    from pytest_ooda.results.schema import AssertionEntry, RecordHead

    #: How a tool call's texts are redacted (``backends.redacted_call``).
    RedactCall = Callable[[ToolCall, Callable[[str], str]], ToolCall]

__all__ = [
    "OUTPUT_TAIL_CHARS",
    "OUTPUT_TAIL_LINES",
    "ai_identity",
    "build_record",
    "timestamp",
]

#: How much of each iteration's output a record keeps (the end, where the verdict is).
OUTPUT_TAIL_LINES = 40
OUTPUT_TAIL_CHARS = 4000
# Redaction sees this much more than the tail, so a secret the cut would split is still
# whole (and recognisable) when it is replaced.
_REDACT_MARGIN = 4000


def ai_identity(settings: RunSettings) -> AiIdentity:
    import shlex

    if settings.ai_cmd is not None:
        return AiIdentity(command=shlex.join(settings.ai_cmd))
    if settings.ai_api is not None:
        return AiIdentity(api=f"{settings.ai_api.provider}:{settings.ai_api.model}")
    return AiIdentity()


def timestamp(epoch: float) -> str:
    """ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def _tail(text: str, redactor: Redactor) -> str:
    window = text[-(OUTPUT_TAIL_CHARS + _REDACT_MARGIN) :]
    kept = redactor(window)
    lines = kept.splitlines(keepends=True)[-OUTPUT_TAIL_LINES:]
    return "".join(lines)[-OUTPUT_TAIL_CHARS:]


def _calls(
    calls: Sequence[ToolCall], redactor: Redactor, redact_call: RedactCall
) -> tuple[ToolCall, ...]:
    # Each decoded input text is redacted before it is joined into the summary line.
    return tuple(replace(redact_call(call, redactor), id=None) for call in calls)


def _files(changes: Mapping[str, FileChange], redactor: Redactor) -> Mapping[str, FileChange]:
    return MappingProxyType({redactor.path(path): change for path, change in changes.items()})


def _iteration(
    record: IterationFacts,
    files: Mapping[str, FileChange],
    redactor: Redactor,
    redact_call: RedactCall,
) -> IterationEntry:
    return IterationEntry(
        number=record.number,
        outcome=record.outcome,
        signal=record.signal,
        exit_code=record.exit_code,
        duration_s=round(record.duration, 3),
        reason=redactor(record.reason),
        timed_out=record.timed_out,
        usage=record.usage,
        model=record.model,
        turns=record.turns,
        tool_calls=_calls(record.tool_calls, redactor, redact_call),
        permission_denials=_calls(record.permission_denials, redactor, redact_call),
        files=_files(files, redactor),
        output_tail=_tail(record.output, redactor),
        error=redactor(record.error) if record.error is not None else None,
        retries=record.retries,
        infra_error=redactor(record.infra_error) if record.infra_error is not None else None,
        infra_evidence=record.infra_evidence,
    )


def _redacted_tree(value: Any, redactor: Redactor) -> Any:
    """``value`` (YAML-shaped data) with every string, key or value, redacted."""
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {redactor(str(key)): _redacted_tree(item, redactor) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted_tree(item, redactor) for item in value]
    return value


def _command(command: CommandOutcome, redactor: Redactor) -> CommandOutcome:
    return replace(
        command,
        run=redactor(command.run),
        problem=redactor(command.problem) if command.problem is not None else None,
        output_tail=redactor(command.output_tail),
    )


def build_record(
    head: RecordHead,
    result: LoopFacts,
    outcome: RunOutcome,
    *,
    redactor: Redactor,
    redact_call: RedactCall,
    started_at: float,
    finished_at: float,
    error_reason: str | None = None,
    problems: Sequence[str] = (),
    commands: Sequence[CommandOutcome] = (),
    changes: WorkspaceFacts | None = None,
    judge: Mapping[str, Any] | None = None,
    sandbox: Mapping[str, Any] | None = None,
    queued: float | None = None,
    transcript: Mapping[str, Any] | None = None,
    protected_changes: Sequence[str] = (),
    fired: tuple[Sequence[AssertionEntry], Sequence[str], Sequence[CommandOutcome]] = (
        (),
        (),
        (),
    ),
    fingerprint: Fingerprint | None = None,
) -> RunRecord:
    """The results record of one finished run: the one builder of records, called once
    a run's outcome is decided (:func:`.classify_outcome`).

    ``changes`` watched the run's workspace; ``commands`` are the verification
    commands' outcomes, ``judge`` the grading, ``sandbox`` the sandbox's identity,
    ``queued`` the seconds the run waited for a slot, ``protected_changes`` the paths
    under ``expect.protect`` the agent changed, ``fired`` the run's assertions, what
    fired and its ``setup:`` commands (:mod:`.fired`), ``fingerprint`` the agent's (with
    the model its API reported added here). Every string that comes from the run is
    redacted with ``redactor`` (the transcript is redacted as it is built), each tool
    call's texts with ``redact_call`` (``backends.redacted_call``). ``result`` and
    ``changes`` are the loop's and the workspace's own values, read through the
    protocols of :mod:`.inputs`.
    """
    per_iteration = changes.iterations if changes is not None else {}
    models = [record.model for record in result.records if record.model]
    command = head.ai.command
    # The plan's head as it is, with what of it came from the user redacted.
    kept = replace(
        head,
        ai=replace(head.ai, command=redactor(command) if command is not None else None),
        expect=(
            MappingProxyType(_redacted_tree(head.expect, redactor))
            if head.expect is not None
            else None
        ),
    )
    return RunRecord(
        id=uuid.uuid4().hex,
        head=kept,
        status=result.status,
        outcome=outcome,
        error_reason=redactor(error_reason) if error_reason is not None else None,
        elapsed_s=round(result.elapsed, 3),
        started_at=timestamp(started_at),
        finished_at=timestamp(finished_at),
        pytest_ooda=__version__,
        prompt_sha256=result.records[0].prompt_sha256 if result.records else None,
        model=models[0] if models else None,
        usage=result.usage,
        iterations=tuple(
            _iteration(record, per_iteration.get(record.number, {}), redactor, redact_call)
            for record in result.records
        ),
        files_changed=_files(changes.total() if changes is not None else {}, redactor),
        problems=tuple(redactor(problem) for problem in problems),
        commands=tuple(_command(command, redactor) for command in commands),
        error=redactor(result.error) if result.error is not None else None,
        retries=result.retries,
        sandbox=sandbox,
        judge=judge,
        queued_s=round(queued, 3) if queued is not None else None,
        transcript=transcript,
        protected_changes=tuple(redactor.path(path) for path in protected_changes),
        assertions=tuple(
            replace(entry, detail=redactor(entry.detail) if entry.detail else entry.detail)
            for entry in fired[0]
        ),
        activations=tuple(fired[1]),
        setup=tuple(_command(command, redactor) for command in fired[2]),
        fingerprint=_fingerprint(fingerprint, models[0] if models else None, redactor),
    )


def _fingerprint(
    fingerprint: Fingerprint | None, model: str | None, redactor: Redactor
) -> Fingerprint | None:
    """The agent's fingerprint with the model its API reported, its version and the
    names of what it loaded redacted (they come from files and programs of the user's)."""
    if fingerprint is None:
        return None
    return replace(
        fingerprint.with_model(model),
        version=redactor(fingerprint.version) if fingerprint.version is not None else None,
        loaded=MappingProxyType(
            {
                kind: tuple(replace(item, name=redactor(item.name)) for item in items)
                for kind, items in fingerprint.loaded.items()
            }
        ),
    )
