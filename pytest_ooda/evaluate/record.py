"""One live run into a results record: what counts as a success, the prompt's identity
(its sha256 and each fragment's), what the AI was, per-iteration outcomes and costs,
the files the run changed — every string redacted before the record leaves the
process that ran it."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda import __version__
from pytest_ooda._types import PHASES
from pytest_ooda.evaluate.results import (
    FragmentHash,
    IterationEntry,
    RunRecord,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import FileChange, RunOutcome
    from pytest_ooda.backends import ToolCall
    from pytest_ooda.config import Procedure, RunSettings
    from pytest_ooda.loop import IterationRecord, LoopResult
    from pytest_ooda.redact import Redactor
    from pytest_ooda.scenario import CommandOutcome, Scenario
    from pytest_ooda.workspace import PathChanges

__all__ = [
    "OUTPUT_TAIL_CHARS",
    "OUTPUT_TAIL_LINES",
    "AiIdentity",
    "ai_identity",
    "build_record",
    "fragment_hashes",
    "timestamp",
]

#: How much of each iteration's output a record keeps (the end, where the verdict is).
OUTPUT_TAIL_LINES = 40
OUTPUT_TAIL_CHARS = 4000
# Redaction sees this much more than the tail, so a secret the cut would split is still
# whole (and recognisable) when it is replaced.
_REDACT_MARGIN = 4000


def fragment_hashes(procedure: Procedure) -> tuple[FragmentHash, ...]:
    """The sha256 of every fragment as rendered (templates with their parameters), so
    two result sets tell which fragments differ between them."""
    from pytest_ooda.compose import render_action

    hashes = []
    phases = procedure.phases()
    for phase in PHASES:
        for index, action in enumerate(phases[phase]):
            text = render_action(action, procedure=procedure.name, phase=phase, index=index)
            digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
            hashes.append(FragmentHash(phase, index, action.source_label(), digest))
    return tuple(hashes)


@dataclass(frozen=True)
class AiIdentity:
    """What did the work: an AI command line, or an HTTP API's provider and model."""

    command: str | None = None
    api: str | None = None


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


def _calls(calls: Sequence[ToolCall], redactor: Redactor) -> tuple[ToolCall, ...]:
    from pytest_ooda.backends import redacted_call

    # Each decoded input text is redacted before it is joined into the summary line.
    return tuple(replace(redacted_call(call, redactor), id=None) for call in calls)


def _files(changes: Mapping[str, FileChange], redactor: Redactor) -> Mapping[str, FileChange]:
    return MappingProxyType({redactor.path(path): change for path, change in changes.items()})


def _iteration(
    record: IterationRecord, files: Mapping[str, FileChange], redactor: Redactor
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
        tool_calls=_calls(record.tool_calls, redactor),
        permission_denials=_calls(record.permission_denials, redactor),
        files=_files(files, redactor),
        output_tail=_tail(record.output, redactor),
        error=redactor(record.error) if record.error is not None else None,
        retries=record.retries,
        infra_error=redactor(record.infra_error) if record.infra_error is not None else None,
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
    *,
    scenario: Scenario,
    result: LoopResult,
    outcome: RunOutcome,
    problems: Sequence[str],
    redactor: Redactor,
    commands: Sequence[CommandOutcome] = (),
    run: int = 1,
    runs: int = 1,
    started_at: float,
    finished_at: float,
    fragments: tuple[FragmentHash, ...] = (),
    prompt_sha256: str | None = None,
    ai: AiIdentity | None = None,
    changes: PathChanges | None = None,
    nodeid: str = "",
    scenario_file: str | None = None,
    worker: str | None = None,
    shard: str | None = None,
) -> RunRecord:
    """The results record of one finished live run of ``scenario``.

    ``prompt_sha256`` identifies the prompt version when no iteration ran (else the
    first iteration's prompt does); ``changes`` watched the run's workspace; ``commands``
    are the verification commands' outcomes.
    """
    identity = ai or AiIdentity()
    per_iteration = changes.iterations if changes is not None else {}
    expect = scenario.expect
    # The per-run block as written; the aggregate keys have a field of their own.
    declared = replace(expect, aggregate=None).to_yaml() if expect is not None else None
    models = [record.model for record in result.records if record.model]
    return RunRecord(
        id=uuid.uuid4().hex,
        procedure=scenario.procedure,
        scenario=scenario.name,
        run=run,
        runs=runs,
        status=result.status,
        outcome=outcome,
        elapsed_s=round(result.elapsed, 3),
        started_at=timestamp(started_at),
        finished_at=timestamp(finished_at),
        nodeid=nodeid,
        scenario_file=scenario_file,
        pytest_ooda=__version__,
        worker=worker,
        shard=shard,
        prompt_sha256=result.records[0].prompt_sha256 if result.records else prompt_sha256,
        fragments=fragments,
        ai_command=redactor(identity.command) if identity.command is not None else None,
        ai_api=identity.api,
        model=models[0] if models else None,
        usage=result.usage,
        iterations=tuple(
            _iteration(record, per_iteration.get(record.number, {}), redactor)
            for record in result.records
        ),
        files_changed=_files(changes.total() if changes is not None else {}, redactor),
        expect=MappingProxyType(_redacted_tree(declared, redactor))
        if declared is not None
        else None,
        problems=tuple(redactor(problem) for problem in problems),
        commands=tuple(_command(command, redactor) for command in commands),
        aggregate_expect=(
            MappingProxyType(expect.aggregate.to_yaml())
            if expect is not None and expect.aggregate is not None
            else None
        ),
        error=redactor(result.error) if result.error is not None else None,
    )
