"""The loop runner: runs one procedure iteration by iteration until a terminal status.

Owns the iteration state machine (limits, failure threshold, budgets, interruption).
Process handling lives in ``backends/``; the outcome matrix in :mod:`.signals`; the
budget arithmetic in :mod:`.budget`; what a run produced in :mod:`.result`."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import BackendError
from pytest_ooda.loop.budget import Budget, unmeasured_text
from pytest_ooda.loop.events import (
    IterationFinished,
    IterationStarted,
    LoopEvent,
    LoopFinished,
    LoopStarted,
    LoopWarning,
)
from pytest_ooda.loop.result import IterationRecord, LoopResult, RunningStats
from pytest_ooda.loop.retry import backoff, retryable
from pytest_ooda.loop.signals import decide_outcome, find_signal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from pytest_ooda._types import AiOutput, Status
    from pytest_ooda.backends import Backend, BackendResult, StreamCallback, Usage
    from pytest_ooda.config import Config, RetrySettings, RunSettings
    from pytest_ooda.sandbox import SandboxRun

logger = logging.getLogger("pytest_ooda.loop")


class _Interrupted(BaseException):
    """Raised from our SIGINT/SIGTERM/SIGHUP handler so it unwinds through a backend's wait."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_INTERRUPT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _interrupt_handlers(enabled: bool) -> Iterator[None]:
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = False

    def handler(signum: int, frame: Any) -> None:
        nonlocal fired
        # Only the first signal unwinds; a second Ctrl-C during clean-up must not cut
        # the group kill short.
        if not fired:
            fired = True
            raise _Interrupted(signum)

    # SIGHUP too: the AI runs in its own session, so a closed terminal would otherwise
    # end the runner and leave the agent working unattended.
    previous = {sig: signal.signal(sig, handler) for sig in _INTERRUPT_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def make_backend(settings: RunSettings, *, sandbox: SandboxRun | None = None) -> Backend:
    """The backend a resolved run uses: the command if one is set (started inside
    ``sandbox`` when given), else the HTTP API."""
    if settings.ai_cmd is not None:
        from pytest_ooda.backends import CommandBackend

        return CommandBackend(settings.ai_cmd, ai_output=settings.ai_output, sandbox=sandbox)
    if settings.ai_api is not None:
        from pytest_ooda.backends import HttpBackend

        return HttpBackend.from_settings(settings.ai_api)
    raise BackendError("no AI backend configured")


class _StdoutStream:
    """Copies AI output to stdout. A closed or vanished stdout (``| head``, ``>&-``)
    ends the copying, not the iteration: the output is still captured."""

    def __init__(self) -> None:
        self.broken = False

    def __call__(self, chunk: bytes) -> None:
        if self.broken:
            return
        try:
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
        except (OSError, ValueError, AttributeError):
            self.broken = True


def run_procedure(
    config: Config,
    name: str,
    *,
    backend: Backend | None = None,
    max_iterations: int | None = None,
    unlimited: bool = False,
    context: Sequence[str] = (),
    workdir: str | Path | None = None,
    on_event: Callable[[LoopEvent], None] | None = None,
    ai_cmd: str | None = None,
    ai_cmd_alias: str | None = None,
    failure_threshold: int | None = None,
    iteration_timeout: float | None = None,
    max_output_buffer: int | None = None,
    stream: StreamCallback | None = None,
    show_ai_output: bool | None = None,
    handle_signals: bool = True,
    ai_output: AiOutput | None = None,
    max_cost: float | None = None,
    max_tokens: int | None = None,
    sandbox: SandboxRun | None = None,
    retry: RetrySettings | None = None,
    retries: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> LoopResult:
    """Run procedure ``name`` of ``config`` until success, abort, the limit, or a signal.

    Without ``backend`` the AI command (or HTTP API) is resolved from ``config`` and the
    ``ai_cmd``/``ai_cmd_alias`` overrides; a ``ConfigError`` explains how to set one when
    nothing is configured. Limits come from :func:`resolve_run_settings` unless given
    here. ``stream`` receives the raw AI output live (by default stdout when
    ``show_ai_output`` is on). With ``handle_signals`` (and on the main thread) SIGINT
    and SIGTERM end the run with status ``interrupted`` after the AI's process group is
    killed; without it a ``KeyboardInterrupt`` propagates after the same clean-up.
    ``ai_output`` says how the AI command's output is read; ``max_cost`` and
    ``max_tokens`` are this run's budget, applied with the procedure's and the loop's
    (the smallest of each wins): the run stops ``aborted`` after the iteration that
    reaches one. ``sandbox`` is where the AI command runs (a started
    :class:`~pytest_ooda.sandbox.SandboxRun`; the HTTP backend runs no process).

    An iteration the infrastructure spoiled (``BackendResult.infra_error``: a rate limit,
    an overloaded API, a dropped connection, an agent that died before any output) is
    tried again per ``retry`` (else the procedure's or the loop's ``retry:``; ``retries``
    overrides the attempts), waiting as :func:`.retry.backoff` says; it never counts
    toward the failure threshold. When the tries run out, or the AI backend cannot be
    started at all, the run ends ``aborted`` with ``LoopResult.infra_error`` saying why.

    Raises ``OodaError`` for configuration/prompt mistakes and ``ScenarioError`` when a
    replay runs out; a backend that cannot start ends the run as ``aborted``.
    """
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import resolve_run_settings

    settings = resolve_run_settings(
        config,
        name,
        max_iterations=max_iterations,
        unlimited=unlimited,
        ai_cmd=ai_cmd,
        ai_cmd_alias=ai_cmd_alias,
        require_ai=backend is None,
        ai_output=ai_output,
        max_cost=max_cost,
        max_tokens=max_tokens,
    )
    procedure = config.procedure(name)
    budget = Budget(settings.max_cost, settings.max_tokens)
    retry_settings = retry if retry is not None else settings.retry
    if retries is not None:
        if retries < 0:
            raise ValueError("retries must be >= 0")
        retry_settings = dataclasses.replace(retry_settings, attempts=retries)
    if backend is None:
        backend = make_backend(settings, sandbox=sandbox)
    limit = settings.max_iterations
    threshold = failure_threshold if failure_threshold is not None else settings.failure_threshold
    if threshold < 1:
        raise ValueError("failure_threshold must be >= 1")
    timeout = iteration_timeout if iteration_timeout is not None else settings.iteration_timeout
    buffer = max_output_buffer if max_output_buffer is not None else settings.max_output_buffer
    show = settings.show_ai_output if show_ai_output is None else show_ai_output
    if stream is None and show:
        stream = _StdoutStream()
    cwd = Path(workdir) if workdir is not None else Path.cwd()
    context = tuple(context)

    def emit(event: LoopEvent) -> None:
        if logger.isEnabledFor(event.level):  # the message is text worth not building
            logger.log(event.level, event.message())
        if on_event is not None:
            on_event(event)

    records: list[IterationRecord] = []
    stats = RunningStats()
    consecutive = 0
    warned_truncation = False
    unmeasured_warned: set[str] = set()
    spent: Usage | None = None  # the run's total so far, for the budget
    stopped_by_budget = False
    status: Status = "interrupted"  # every way out of the loop below sets it
    infra_error: str | None = None
    error: str | None = None
    cause: str | None = None  # what kind of failure `error` describes
    started = time.monotonic()
    emit(LoopStarted(name, limit, repr(backend)))
    try:
        with _interrupt_handlers(handle_signals):
            while True:
                index = len(records)
                # Failure threshold before the limit: when both hold, the more specific
                # cause is reported.
                if consecutive >= threshold:
                    status = "aborted"
                    error = (
                        f"failure threshold reached: {consecutive} consecutive failed "
                        f"iteration(s) (failure_threshold={threshold})"
                    )
                    break
                if limit is not None and index >= limit:
                    status = "max-iters"
                    break
                number = index + 1
                prompt = assemble_prompt(
                    procedure, iteration=number, max_iterations=limit, context=context, cwd=cwd
                )
                emit(IterationStarted(name, number, limit, time.time()))
                tried = 0
                out: BackendResult | None
                while True:
                    t0 = time.monotonic()
                    try:
                        out = backend.run(
                            prompt,
                            iteration=number,
                            workdir=cwd,
                            timeout=timeout,
                            max_output=buffer,
                            stream=stream,
                        )
                    except BackendError as exc:
                        from pytest_ooda.backends import infra_reason

                        out = None
                        infra_error = infra_reason("cannot-start", str(exc).splitlines()[0])
                        error = str(exc)
                        break
                    if (
                        out.infra_error is None
                        or tried >= retry_settings.attempts
                        or not retryable(out.infra_error)
                    ):
                        break
                    tried += 1
                    wait = backoff(retry_settings, tried, retry_after=out.retry_after)
                    emit(
                        LoopWarning(
                            name,
                            f"iteration {number}: infrastructure error ({out.infra_error}); "
                            f"retry {tried} of {retry_settings.attempts} in {wait:.1f}s",
                            number,
                        )
                    )
                    sleep(wait)
                if out is None:
                    status = "aborted"
                    cause = "AI backend could not be started"
                    break
                duration = time.monotonic() - t0
                found = find_signal(out.output)
                outcome = decide_outcome(
                    out.exit_code, found, timed_out=out.timed_out, error=out.error
                )
                if outcome.kind == "failure":
                    consecutive += 1
                elif outcome.kind == "ok":
                    consecutive = 0
                record = IterationRecord(
                    number=number,
                    prompt=prompt,
                    # As scenario.sha256_text: the bytes the AI receives.
                    prompt_sha256=hashlib.sha256(
                        prompt.encode("utf-8", "surrogateescape")
                    ).hexdigest(),
                    output=out.output,
                    exit_code=out.exit_code,
                    signal=found,
                    outcome=outcome.kind,
                    duration=duration,
                    reason=outcome.reason,
                    term_signal=out.term_signal,
                    timed_out=out.timed_out,
                    truncated=out.truncated,
                    dropped_bytes=out.dropped_bytes,
                    broken_pipe=out.broken_pipe,
                    usage=out.usage,
                    error=out.error,
                    tool_calls=out.tool_calls,
                    permission_denials=out.permission_denials,
                    turns=out.turns,
                    model=out.model,
                    tools_reported=out.tools_reported,
                    retries=tried,
                    infra_error=out.infra_error,
                )
                records.append(record)
                stats.add(duration)
                if out.usage is not None:
                    spent = out.usage if spent is None else spent + out.usage
                if out.truncated and not warned_truncation:
                    warned_truncation = True
                    emit(
                        LoopWarning(
                            name,
                            f"AI output of iteration {number} exceeded max_output_buffer="
                            f"{buffer} bytes; kept the last {buffer} of {out.total_bytes} bytes "
                            "(signals are only seen in the kept tail)",
                            number,
                        )
                    )
                if out.broken_pipe:
                    logger.debug(
                        "iteration %d: the AI command exited before reading the whole prompt",
                        number,
                    )
                emit(IterationFinished(name, record, limit, consecutive))
                denied = record.denial_warning()
                if denied is not None:
                    emit(LoopWarning(name, denied, number))
                if out.infra_error is not None and outcome.kind != "success":
                    # Retries did not help: the run measured the infrastructure, not the
                    # procedure. It ends here rather than burn the failure threshold.
                    status = "aborted"
                    infra_error = out.infra_error
                    error = f"infrastructure error: {out.infra_error}"
                    if tried:
                        error += f" (still after {tried} retr{'y' if tried == 1 else 'ies'})"
                    break
                if outcome.kind == "success":
                    status = "success"
                    break
                if budget:
                    unmeasured = set(budget.unmeasured(out.usage)) - unmeasured_warned
                    if unmeasured:
                        unmeasured_warned |= unmeasured
                        emit(LoopWarning(name, unmeasured_text(sorted(unmeasured)), number))
                    reached = budget.reached(spent)
                    if reached is not None:
                        status = "aborted"
                        error = reached
                        stopped_by_budget = True
                        break
    except _Interrupted as exc:
        # Only our own handler ends the run as `interrupted`. A KeyboardInterrupt (signal
        # handling left to the caller, e.g. pytest) propagates once the backend has
        # killed the AI's process group.
        status = "interrupted"
        error = f"interrupted by {signal.Signals(exc.signum).name}"
    result = LoopResult(
        procedure=name,
        status=status,
        records=tuple(records),
        timing=stats.snapshot(),
        elapsed=time.monotonic() - started,
        max_iterations=limit,
        failure_threshold=threshold,
        max_cost=budget.max_cost,
        max_tokens=budget.max_tokens,
        stopped_by_budget=stopped_by_budget,
        context=context,
        workdir=cwd,
        backend=repr(backend),
        error=error,
        infra_error=infra_error,
    )
    if error and status != "success":
        because = f"{cause}: {error}" if cause else error
        emit(LoopWarning(name, f"Loop {status}: {because}"))
    emit(LoopFinished(result))
    return result
