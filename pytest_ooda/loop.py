"""The loop runner: runs one procedure iteration by iteration until a terminal status.

Owns the iteration state machine (limits, failure threshold, interruption), the
per-iteration records and timing statistics that make up a ``LoopResult``, and the
structured events the CLI and the pytest plugin render. Process handling lives in
``backends/``; the outcome matrix lives in ``signals``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.backends import Backend, StreamCallback, Usage
from pytest_ooda.errors import BackendError
from pytest_ooda.signals import decide_outcome, find_signal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from pytest_ooda.config import Config, RunSettings

__all__ = [
    "EXIT_CODES",
    "LOG_LEVELS",
    "STATUSES",
    "ConsoleReporter",
    "IterationFinished",
    "IterationRecord",
    "IterationStarted",
    "LoopEvent",
    "LoopFinished",
    "LoopResult",
    "LoopStarted",
    "LoopWarning",
    "RunningStats",
    "TimingStats",
    "format_run_settings",
    "make_backend",
    "run_procedure",
]

logger = logging.getLogger("pytest_ooda.loop")

EXIT_CODES = {"success": 0, "aborted": 1, "max-iters": 2, "interrupted": 130}
# The config's `log_level` values.
LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}
STATUSES = tuple(EXIT_CODES)


# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class TimingStats:
    """Durations of completed iterations; ``stddev`` is the population standard deviation,
    ``None`` with fewer than two samples (as are min/max/mean with none)."""

    count: int = 0
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    stddev: float | None = None

    def describe(self) -> str:
        if not self.count:
            return "Iteration timing: count=0"
        text = (
            f"Iteration timing: count={self.count} min={_secs(self.min or 0.0)} "
            f"max={_secs(self.max or 0.0)} mean={_secs(self.mean or 0.0)}"
        )
        if self.stddev is not None:
            text += f" stddev={_secs(self.stddev)}"
        return text


class RunningStats:
    """Welford's online mean/variance: O(1) memory however long the loop runs."""

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self._m2 = 0.0
        self.min = math.inf
        self.max = -math.inf

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (value - self.mean)
        self.min = min(self.min, value)
        self.max = max(self.max, value)

    def snapshot(self) -> TimingStats:
        if not self.count:
            return TimingStats()
        stddev = math.sqrt(self._m2 / self.count) if self.count >= 2 else None
        return TimingStats(self.count, self.min, self.max, self.mean, stddev)


def _secs(value: float) -> str:
    return f"{value:.1f}s"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class IterationRecord:
    """Everything known about one iteration.

    ``signal`` is the promise found in the output (``"SUCCESS"``, ``"FAILURE"`` or
    ``None``); ``term_signal`` the Unix signal that killed the process, if any.
    ``outcome`` is ``ok``, ``success`` or ``failure`` and ``reason`` says why it failed.
    """

    number: int
    prompt: str
    prompt_sha256: str
    output: str
    exit_code: int
    signal: str | None
    outcome: str
    duration: float
    reason: str = ""
    term_signal: int | None = None
    timed_out: bool = False
    truncated: bool = False
    dropped_bytes: int = 0
    broken_pipe: bool = False
    usage: Usage | None = None
    error: str | None = None

    @property
    def signal_name(self) -> str:
        """The signal as written in scenario ``expect.signals``: ``none`` when absent."""
        return self.signal or "none"

    def summary(self) -> str:
        parts = [f"iteration {self.number}: {self.outcome}"]
        if self.reason:
            parts.append(f"({self.reason})")
        parts.append(f"exit={self.exit_code} signal={self.signal_name}")
        parts.append(f"elapsed={_secs(self.duration)}")
        if self.truncated:
            parts.append(f"truncated(dropped {self.dropped_bytes} bytes)")
        if self.usage is not None:
            parts.append(_usage_text(self.usage))
        return " ".join(parts)


def _usage_text(usage: Usage) -> str:
    text = f"tokens={usage.input_tokens}in/{usage.output_tokens}out"
    if usage.cost is not None:
        text += f" cost={usage.cost:.4f}"
    return text


def _excerpt(text: str, lines: int = 6, width: int = 160) -> str:
    tail = text.rstrip("\n").splitlines()[-lines:]
    return "\n".join(
        "      | " + (line if len(line) <= width else line[:width] + "…") for line in tail
    )


@dataclass(frozen=True)
class LoopResult:
    """The outcome of one ``run_procedure`` call. Never raises ``SystemExit``; the CLI maps
    ``status`` to ``exit_code``."""

    procedure: str
    status: str
    records: tuple[IterationRecord, ...]
    timing: TimingStats
    elapsed: float
    max_iterations: int | None
    failure_threshold: int
    context: tuple[str, ...] = ()
    workdir: Path | None = None
    backend: str = ""
    error: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def iterations(self) -> int:
        return len(self.records)

    @property
    def outputs(self) -> list[str]:
        return [r.output for r in self.records]

    @property
    def prompts(self) -> list[str]:
        return [r.prompt for r in self.records]

    @property
    def signals(self) -> list[str]:
        """Per iteration: ``SUCCESS``, ``FAILURE`` or ``none``."""
        return [r.signal_name for r in self.records]

    @property
    def usage(self) -> Usage | None:
        """Summed token usage, ``None`` when no iteration reported any."""
        reported = [r.usage for r in self.records if r.usage is not None]
        if not reported:
            return None
        total = Usage()
        for usage in reported:
            total = total + usage
        return total

    def summary(self) -> str:
        return (
            f"Loop completed status={self.status} iterations={self.iterations} "
            f"total_elapsed={_secs(self.elapsed)}"
        )

    def report(self, *, output_lines: int = 6) -> str:
        """A readable account of the run: status, then each iteration with its output tail."""
        limit = "unlimited" if self.max_iterations is None else str(self.max_iterations)
        lines = [
            f"procedure {self.procedure!r}: status={self.status} "
            f"iterations={self.iterations} max_iterations={limit} "
            f"failure_threshold={self.failure_threshold}"
        ]
        if self.error:
            lines.append(f"  error: {self.error}")
        for record in self.records:
            lines.append("  " + record.summary())
            if record.error:
                lines.append(f"      error: {record.error}")
            if output_lines and record.output.strip():
                lines.append(_excerpt(record.output, output_lines))
        if not self.records:
            lines.append("  (no iteration ran)")
        return "\n".join(lines)

    def assert_status(self, status: str, *, iterations: int | None = None) -> LoopResult:
        """Raise ``AssertionError`` with the per-iteration report unless the run ended with
        ``status`` (and ran exactly ``iterations``, when given). Returns ``self``."""
        __tracebackhide__ = True  # pytest shows the failure at the caller's line
        if status not in EXIT_CODES:
            raise ValueError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
        problems = []
        if self.status != status:
            problems.append(f"expected status {status!r}, got {self.status!r}")
        if iterations is not None and self.iterations != iterations:
            problems.append(f"expected {iterations} iteration(s), ran {self.iterations}")
        if problems:
            raise AssertionError("; ".join(problems) + "\n" + self.report())
        return self

    def assert_signals(self, expected: Sequence[str]) -> LoopResult:
        """Raise ``AssertionError`` unless the per-iteration signals are ``expected``
        (each ``SUCCESS``, ``FAILURE`` or ``none``)."""
        __tracebackhide__ = True
        if list(expected) != self.signals:
            raise AssertionError(
                f"expected signals {list(expected)}, got {self.signals}\n" + self.report()
            )
        return self


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class LoopStarted:
    procedure: str
    max_iterations: int | None
    backend: str
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        limit = "unlimited" if self.max_iterations is None else str(self.max_iterations)
        return f"Starting loop procedure={self.procedure} max_iterations={limit}"


@dataclass(frozen=True)
class IterationStarted:
    procedure: str
    number: int
    max_iterations: int | None
    started_at: float
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        where = _of(self.number, self.max_iterations)
        return f"Starting iteration {where} procedure={self.procedure}"


@dataclass(frozen=True)
class IterationFinished:
    procedure: str
    record: IterationRecord
    max_iterations: int | None
    consecutive_failures: int
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        r = self.record
        text = (
            f"Completed iteration {_of(r.number, self.max_iterations)} "
            f"elapsed={_secs(r.duration)} status={r.outcome}"
        )
        if r.outcome == "failure":
            text += f" consecutive_failures={self.consecutive_failures}"
            if r.reason:
                text += f' reason="{r.reason}"'
        return text


@dataclass(frozen=True)
class LoopWarning:
    procedure: str
    text: str
    iteration: int | None = None
    level: int = field(default=logging.WARNING, repr=False)

    def message(self) -> str:
        return self.text


@dataclass(frozen=True)
class LoopFinished:
    result: LoopResult
    level: int = field(default=logging.INFO, repr=False)

    def message(self) -> str:
        text = self.result.summary()
        if self.result.timing.count:
            text += "\n" + self.result.timing.describe()
        return text


LoopEvent = LoopStarted | IterationStarted | IterationFinished | LoopWarning | LoopFinished


def _of(number: int, limit: int | None) -> str:
    return str(number) if limit is None else f"{number}/{limit}"


# --------------------------------------------------------------------------- interruption


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


# --------------------------------------------------------------------------- runner


def make_backend(settings: RunSettings) -> Backend:
    """The backend a resolved run uses: the command if one is set, else the HTTP API."""
    if settings.ai_cmd is not None:
        from pytest_ooda.backends.command import CommandBackend

        return CommandBackend(settings.ai_cmd)
    if settings.ai_api is not None:
        from pytest_ooda.backends.http import HttpBackend

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
) -> LoopResult:
    """Run procedure ``name`` of ``config`` until success, abort, the limit, or a signal.

    Without ``backend`` the AI command (or HTTP API) is resolved from ``config`` and the
    ``ai_cmd``/``ai_cmd_alias`` overrides; a ``ConfigError`` explains how to set one when
    nothing is configured. Limits come from :func:`resolve_run_settings` unless given
    here. ``stream`` receives the raw AI output live (by default stdout when
    ``show_ai_output`` is on). With ``handle_signals`` (and on the main thread) SIGINT
    and SIGTERM end the run with status ``interrupted`` after the AI's process group is
    killed; without it a ``KeyboardInterrupt`` propagates after the same clean-up.

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
    )
    procedure = config.procedure(name)
    if backend is None:
        backend = make_backend(settings)
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
        logger.log(event.level, event.message())
        if on_event is not None:
            on_event(event)

    records: list[IterationRecord] = []
    stats = RunningStats()
    consecutive = 0
    warned_truncation = False
    status = ""
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
                    status = "aborted"
                    error = str(exc)
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
                )
                records.append(record)
                stats.add(duration)
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
                if outcome.kind == "success":
                    status = "success"
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
        context=context,
        workdir=cwd,
        backend=repr(backend),
        error=error,
    )
    if error and status != "success":
        because = f"{cause}: {error}" if cause else error
        emit(LoopWarning(name, f"Loop {status}: {because}"))
    emit(LoopFinished(result))
    return result


# --------------------------------------------------------------------------- rendering


def format_run_settings(settings: RunSettings, *, executable: str | None = None) -> str:
    """The resolved settings of a run, one per line with their provenance (for dry runs)."""
    import shlex

    rows: list[tuple[str, str, str]] = []
    prov = settings.provenance

    def add(key: str, value: str) -> None:
        source = prov.get(key)
        rows.append((key, value, str(source) if source is not None else ""))

    add(
        "max_iterations",
        "unlimited" if settings.max_iterations is None else str(settings.max_iterations),
    )
    add(
        "iteration_timeout",
        "none" if settings.iteration_timeout is None else f"{settings.iteration_timeout}s",
    )
    add("max_output_buffer", f"{settings.max_output_buffer} bytes")
    add("failure_threshold", str(settings.failure_threshold))
    add("show_ai_output", str(settings.show_ai_output).lower())
    if settings.ai_cmd is not None:
        add("ai_cmd", shlex.join(settings.ai_cmd))
        if executable is not None:
            rows.append(("executable", executable, "found on PATH / checked executable"))
    elif settings.ai_api is not None:
        api = settings.ai_api
        add("ai_api", f"{api.provider} model={api.model}")
    width = max(len(k) for k, _, _ in rows)
    vwidth = max(len(v) for _, v, _ in rows)
    return "\n".join(f"  {k:<{width}}  {v:<{vwidth}}  {s}".rstrip() for k, v, s in rows)


class ConsoleReporter:
    """Renders loop events for a person: the spec's log lines, and on a terminal a live
    progress line (iteration, time in it, total time, last outcome) refreshed every
    ``interval`` seconds while an iteration runs.

    ``level`` is the config's ``log_level`` (``debug``, ``info``, ``warn``, ``error`` or a
    ``logging`` level): events below it are not shown, except the final summary, which
    always is. ``quiet`` raises the level to ``warn``; ``verbose`` (or ``debug``) adds a
    detail line per iteration. Call it as ``on_event``; ``close()`` stops the progress
    ticker.
    """

    def __init__(
        self,
        stream: Any = None,
        *,
        verbose: bool = False,
        quiet: bool = False,
        progress: bool | None = None,
        interval: float = 1.0,
        level: int | str = logging.INFO,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.level = LOG_LEVELS[level] if isinstance(level, str) else level
        if quiet:
            self.level = max(self.level, logging.WARNING)
        self.verbose = verbose or self.level <= logging.DEBUG
        self.quiet = self.level > logging.INFO
        if progress is None:
            isatty = getattr(self.stream, "isatty", None)
            progress = bool(isatty and isatty()) and not verbose
        self.progress = progress and not self.quiet
        self.interval = interval
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        self._line_shown = False
        self._loop_started = time.monotonic()
        self._last = "none yet"
        self._current: IterationStarted | None = None
        self._iteration_started = time.monotonic()
        self._broken = False

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, LoopStarted):
            self._loop_started = time.monotonic()
        if isinstance(event, IterationFinished | LoopFinished):
            self._stop_ticker()
        show = event.level >= self.level or isinstance(event, LoopFinished)
        with self._lock:
            self._clear()
            if show:
                prefix = "warning: " if event.level >= logging.WARNING else ""
                self._write(prefix + event.message() + "\n")
                if self.verbose and isinstance(event, IterationFinished):
                    record = event.record
                    self._write("  " + record.summary() + "\n")
                    if record.broken_pipe:
                        self._write("  the AI command exited before reading the whole prompt\n")
                    if record.error:
                        self._write(f"  error: {record.error}\n")
            self._write("", flush=True)
        if isinstance(event, IterationFinished):
            reason = f" ({event.record.reason})" if event.record.reason else ""
            self._last = event.record.outcome + reason
        if isinstance(event, IterationStarted) and self.progress:
            self._current = event
            self._start_ticker()

    def close(self) -> None:
        self._stop_ticker()

    def _write(self, text: str, *, flush: bool = False) -> None:
        # The log is a courtesy: a closed or broken stream (`ooda run 2>&1 | head`) must
        # not end the run, or change its exit code.
        if self._broken:
            return
        try:
            if text:
                self.stream.write(text)
            if flush:
                self.stream.flush()
        except (OSError, ValueError):
            self._broken = True

    def _clear(self) -> None:
        if self._line_shown:
            self._write("\r\x1b[K")
            self._line_shown = False

    def _start_ticker(self) -> None:
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="ooda-progress", daemon=True)
        self._ticker.start()

    def _stop_ticker(self) -> None:
        ticker = self._ticker
        if ticker is not None:
            self._stop.set()
            ticker.join(timeout=2)
            self._ticker = None
        with self._lock:
            self._clear()

    def progress_text(self) -> str:
        event = self._current
        if event is None:
            return ""
        now = time.monotonic()
        in_iteration = now - self._iteration_started
        total = now - self._loop_started
        return (
            f"{event.procedure}: iteration {_of(event.number, event.max_iterations)} running "
            f"{_clock(in_iteration)} · total {_clock(total)} · last: {self._last}"
        )

    def _tick(self) -> None:
        self._iteration_started = time.monotonic()
        while not self._stop.wait(self.interval):
            with self._lock:
                # A line wider than the terminal wraps, and "\r" then clears only its last
                # row: keep it to one row.
                width = shutil.get_terminal_size().columns - 1
                self._write("\r\x1b[K" + self.progress_text()[: max(width, 20)])
                self._write("", flush=True)
                self._line_shown = True


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
