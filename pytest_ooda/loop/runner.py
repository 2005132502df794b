"""The loop runner: runs one procedure iteration by iteration until a terminal status.

Owns the iteration state machine (limits, failure threshold, budgets, interruption).
Process handling lives in ``backends/``; the outcome matrix in :mod:`.signals`; the
budget arithmetic in :mod:`.budget`; what a run produced in :mod:`.result`."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import signal
import sys
import threading
import time
from dataclasses import replace
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
from pytest_ooda.loop.signals import ONE_TURN, Outcome, decide_outcome, find_signal, one_turn

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from pytest_ooda._types import AiOutput, Status
    from pytest_ooda.backends import Backend, BackendResult, StreamCallback, Usage
    from pytest_ooda.config import Config, Procedure, RetrySettings, RunSettings
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

    The settings are resolved once (:func:`pytest_ooda.config.resolve_run_settings`),
    with the keyword arguments as the command-line tier: the iteration limit, the AI
    command (or HTTP API) from ``config`` and the ``ai_cmd``/``ai_cmd_alias`` overrides
    (a ``ConfigError`` explains how to set one when nothing is configured and no
    ``backend`` is given), ``ai_output``, the budgets ``max_cost``/``max_tokens``
    (applied with the procedure's and the loop's, the smallest of each winning),
    ``retry``/``retries``. Then :func:`run_loop` runs it; see there for ``stream``,
    ``handle_signals``, ``sandbox`` and what the run returns.
    """
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
        failure_threshold=failure_threshold,
        iteration_timeout=iteration_timeout,
        max_output_buffer=max_output_buffer,
        show_ai_output=show_ai_output,
        retry=retry,
        retries=retries,
    )
    return run_loop(
        config.procedure(name),
        settings,
        backend=backend,
        context=context,
        workdir=workdir,
        on_event=on_event,
        stream=stream,
        handle_signals=handle_signals,
        sandbox=sandbox,
        sleep=sleep,
    )


def run_loop(
    procedure: Procedure,
    settings: RunSettings,
    *,
    backend: Backend | None = None,
    context: Sequence[str] = (),
    workdir: str | Path | None = None,
    on_event: Callable[[LoopEvent], None] | None = None,
    stream: StreamCallback | None = None,
    handle_signals: bool = True,
    sandbox: SandboxRun | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> LoopResult:
    """Run ``procedure`` as ``settings`` decided, until success, abort, the limit, or a
    signal: the loop of every run, live or replayed.

    Without ``backend`` the settings' AI command (started inside ``sandbox``, a started
    :class:`~pytest_ooda.sandbox.SandboxRun`, when given) or HTTP API is used.
    ``stream`` receives the raw AI output live (by default stdout when the settings'
    ``show_ai_output`` is on). With ``handle_signals`` (and on the main thread) SIGINT
    and SIGTERM end the run with status ``interrupted`` after the AI's process group is
    killed; without it a ``KeyboardInterrupt`` propagates after the same clean-up. The
    run stops ``aborted`` after the iteration that reaches a budget.

    An iteration the infrastructure spoiled (``BackendResult.infra_error``: a rate limit,
    an overloaded API, a dropped connection, an agent that died before any output) is
    tried again per the settings' ``retry``, waiting as :func:`.retry.backoff` says; it
    never counts toward the failure threshold. When the tries run out, or the AI backend
    cannot be started at all, the run ends ``aborted`` with ``LoopResult.infra_error``
    saying why.

    Raises ``OodaError`` for prompt mistakes and ``ScenarioError`` when a replay runs
    out; a backend that cannot start ends the run as ``aborted``.
    """
    if backend is None:
        backend = make_backend(settings, sandbox=sandbox)
    if stream is None and settings.show_ai_output:
        stream = _StdoutStream()
    loop = _Loop(
        procedure,
        settings,
        backend,
        context=tuple(context),
        cwd=Path(workdir) if workdir is not None else Path.cwd(),
        on_event=on_event,
        stream=stream,
        sleep=sleep,
    )
    return loop.run(handle_signals)


class _Loop:
    """One run's state machine: the iterations so far and how the run ends."""

    def __init__(
        self,
        procedure: Procedure,
        settings: RunSettings,
        backend: Backend,
        *,
        context: tuple[str, ...],
        cwd: Path,
        on_event: Callable[[LoopEvent], None] | None,
        stream: StreamCallback | None,
        sleep: Callable[[float], None],
    ) -> None:
        self.procedure = procedure
        self.name = procedure.name
        self.settings = settings
        self.backend = backend
        self.context = context
        self.cwd = cwd
        self.on_event = on_event
        self.stream = stream
        self.sleep = sleep
        self.budget = Budget(settings.max_cost, settings.max_tokens)
        self.records: list[IterationRecord] = []
        self.stats = RunningStats()
        self.consecutive = 0
        self.warned_truncation = False
        self.unmeasured_warned: set[str] = set()
        self.spent: Usage | None = None  # the run's total so far, for the budget
        self.stopped_by_budget = False
        self.status: Status = "interrupted"  # every way out of the loop sets it
        self.infra_error: str | None = None
        self.error: str | None = None
        self.cause: str | None = None  # what kind of failure `error` describes

    def emit(self, event: LoopEvent) -> None:
        if logger.isEnabledFor(event.level):  # the message is text worth not building
            logger.log(event.level, event.message())
        if self.on_event is not None:
            self.on_event(event)

    def run(self, handle_signals: bool) -> LoopResult:
        started = time.monotonic()
        self.emit(LoopStarted(self.name, self.settings.max_iterations, repr(self.backend)))
        try:
            with _interrupt_handlers(handle_signals):
                while self._iteration():
                    pass
        except _Interrupted as exc:
            # Only our own handler ends the run as `interrupted`. A KeyboardInterrupt
            # (signal handling left to the caller, e.g. pytest) propagates once the
            # backend has killed the AI's process group.
            self.status = "interrupted"
            self.error = f"interrupted by {signal.Signals(exc.signum).name}"
        return self._finish(time.monotonic() - started)

    def _iteration(self) -> bool:
        """Run the next iteration; whether the loop goes on."""
        from pytest_ooda.compose import assemble_prompt

        limit, threshold = self.settings.max_iterations, self.settings.failure_threshold
        # Failure threshold before the limit: when both hold, the more specific cause is
        # reported.
        if self.consecutive >= threshold:
            self.status = "aborted"
            self.error = (
                f"failure threshold reached: {self.consecutive} consecutive failed "
                f"iteration(s) (failure_threshold={threshold})"
            )
            return False
        if limit is not None and len(self.records) >= limit:
            self.status = "max-iters"
            return False
        number = len(self.records) + 1
        prompt = assemble_prompt(
            self.procedure,
            iteration=number,
            max_iterations=limit,
            context=self.context,
            cwd=self.cwd,
        )
        self.emit(IterationStarted(self.name, number, limit, time.time()))
        t0 = time.monotonic()
        out, tried = self._attempt(prompt, number)
        if out is None:
            self.status = "aborted"
            self.cause = "AI backend could not be started"
            return False
        return self._finished(prompt, number, out, tried, time.monotonic() - t0)

    def _attempt(self, prompt: str, number: int) -> tuple[BackendResult | None, int]:
        """One iteration through the backend, tried again while the infrastructure
        spoils it and retries are left; ``None`` when the backend cannot start."""
        retry = self.settings.retry
        tried = 0
        while True:
            try:
                out = self.backend.run(
                    prompt,
                    iteration=number,
                    workdir=self.cwd,
                    timeout=self.settings.iteration_timeout,
                    max_output=self.settings.max_output_buffer,
                    stream=self.stream,
                )
            except BackendError as exc:
                from pytest_ooda.backends import infra_reason

                self.infra_error = infra_reason("cannot-start", str(exc).splitlines()[0])
                self.error = str(exc)
                return None, tried
            if (
                out.infra_error is None
                or self._agents_word(out)
                or tried >= retry.attempts
                or not retryable(out.infra_error)
            ):
                return out, tried
            tried += 1
            wait = backoff(retry, tried, retry_after=out.retry_after)
            self.emit(
                LoopWarning(
                    self.name,
                    f"iteration {number}: infrastructure error ({out.infra_error}); "
                    f"retry {tried} of {retry.attempts} in {wait:.1f}s",
                    number,
                )
            )
            self.sleep(wait)

    def _agents_word(self, out: BackendResult) -> bool:
        """Whether ``out``'s infrastructure error rests on the agent's word alone and
        counts as a failure (``retry.count_agent_reported_errors``, the policy of
        docs/evaluating.md): then it is an ordinary failed iteration — not tried again,
        counted toward the failure threshold — and the agent cannot take its own failure
        out of the measurement by saying the API failed. An ``auth`` error is the
        exception: an agent with no credentials stops before it reads the prompt, so no
        prompt can make it say so, and the run measured nothing (issue 36: an ``error``)."""
        from pytest_ooda.backends import kind_of

        return (
            out.infra_evidence == "agent"
            and self.settings.retry.agent_reported == "as_failures"
            and kind_of(out.infra_error) != "auth"
        )

    def _finished(
        self, prompt: str, number: int, out: BackendResult, tried: int, duration: float
    ) -> bool:
        """Record a finished iteration and decide whether the loop goes on."""
        found = find_signal(out.output)
        outcome = decide_outcome(out.exit_code, found, timed_out=out.timed_out, error=out.error)
        if outcome.kind == "ok" and one_turn(self.procedure, prompt):
            outcome = Outcome("success", ONE_TURN)
        if outcome.kind == "failure":
            self.consecutive += 1
        elif outcome.kind == "ok":
            self.consecutive = 0
        record = _iteration_record(number, prompt, out, found, outcome, duration, tried)
        if self.procedure.material:
            from pytest_ooda.compose import prompt_sha256

            record = replace(record, prompt_sha256=prompt_sha256(self.procedure, prompt))
        self.records.append(record)
        self.stats.add(duration)
        if out.usage is not None:
            self.spent = out.usage if self.spent is None else self.spent + out.usage
        self._warn(record, out)
        if out.infra_error is not None and outcome.kind != "success" and not self._agents_word(out):
            # Retries did not help: the run measured the infrastructure, not the
            # procedure. It ends here rather than burn the failure threshold.
            self.status = "aborted"
            self.infra_error = out.infra_error
            self.error = f"infrastructure error: {out.infra_error}"
            if tried:
                self.error += f" (still after {tried} retr{'y' if tried == 1 else 'ies'})"
            return False
        if outcome.kind == "success":
            self.status = "success"
            return False
        return self._within_budget(number, out)

    def _warn(self, record: IterationRecord, out: BackendResult) -> None:
        """The iteration's events: a truncated output (once per run), the iteration
        itself, a tool the agent was denied."""
        number, buffer = record.number, self.settings.max_output_buffer
        if out.truncated and not self.warned_truncation:
            self.warned_truncation = True
            self.emit(
                LoopWarning(
                    self.name,
                    f"AI output of iteration {number} exceeded max_output_buffer="
                    f"{buffer} bytes; kept the last {buffer} of {out.total_bytes} bytes "
                    "(signals are only seen in the kept tail)",
                    number,
                )
            )
        if out.broken_pipe:
            logger.debug(
                "iteration %d: the AI command exited before reading the whole prompt", number
            )
        self.emit(
            IterationFinished(self.name, record, self.settings.max_iterations, self.consecutive)
        )
        denied = record.denial_warning()
        if denied is not None:
            self.emit(LoopWarning(self.name, denied, number))

    def _within_budget(self, number: int, out: BackendResult) -> bool:
        """Whether the run may go on after spending what it has (``False``: a budget is
        reached, and the run ends ``aborted``)."""
        if not self.budget:
            return True
        unmeasured = set(self.budget.unmeasured(out.usage)) - self.unmeasured_warned
        if unmeasured:
            self.unmeasured_warned |= unmeasured
            self.emit(LoopWarning(self.name, unmeasured_text(sorted(unmeasured)), number))
        reached = self.budget.reached(self.spent)
        if reached is None:
            return True
        self.status = "aborted"
        self.error = reached
        self.stopped_by_budget = True
        return False

    def _finish(self, elapsed: float) -> LoopResult:
        result = LoopResult(
            procedure=self.name,
            status=self.status,
            records=tuple(self.records),
            timing=self.stats.snapshot(),
            elapsed=elapsed,
            max_iterations=self.settings.max_iterations,
            failure_threshold=self.settings.failure_threshold,
            max_cost=self.budget.max_cost,
            max_tokens=self.budget.max_tokens,
            stopped_by_budget=self.stopped_by_budget,
            context=self.context,
            workdir=self.cwd,
            backend=repr(self.backend),
            error=self.error,
            infra_error=self.infra_error,
        )
        if self.error and self.status != "success":
            because = f"{self.cause}: {self.error}" if self.cause else self.error
            self.emit(LoopWarning(self.name, f"Loop {self.status}: {because}"))
        self.emit(LoopFinished(result))
        return result


def _iteration_record(
    number: int,
    prompt: str,
    out: BackendResult,
    found: str | None,
    outcome: Outcome,
    duration: float,
    tried: int,
) -> IterationRecord:
    return IterationRecord(
        number=number,
        prompt=prompt,
        # As scenario.sha256_text: the bytes the AI receives.
        prompt_sha256=hashlib.sha256(prompt.encode("utf-8", "surrogateescape")).hexdigest(),
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
        infra_evidence=out.infra_evidence if out.infra_error is not None else None,
        activations=out.activations,
    )
