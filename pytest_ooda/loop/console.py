"""Rendering a run for a person: the settings block, and a console reporter that
turns events into log lines and a summary."""

from __future__ import annotations

import datetime
import logging
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import LOG_LEVELS, LOG_TIMESTAMP_FORMATS, LogLevel, LogTimestampFormat
from pytest_ooda.loop.events import (
    IterationFinished,
    IterationStarted,
    LoopEvent,
    LoopFinished,
    LoopStarted,
    _of,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.config import RunSettings


#: The config's ``log_level`` values as ``logging`` levels.
LOGGING_LEVELS = dict(
    zip(LOG_LEVELS, (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR), strict=False)
)


def format_timestamp(
    fmt: LogTimestampFormat, *, since: float, now: datetime.datetime | None = None
) -> str:
    """A log line's timestamp as rooda writes it (``""`` for ``none``).

    ``time``/``time-ms``: local ``[HH:MM:SS.mmm]``; ``relative``: ``[+1.234s]`` since the
    monotonic clock read ``since``; ``iso``: local RFC 3339 with the fraction's trailing
    zeros dropped (Go's ``time.RFC3339Nano``), e.g. ``2026-02-08T20:59:35.877-08:00``.
    ``now`` (default: the current local time) is shown in its own zone when it has one.
    """
    if fmt == "none":
        return ""
    if fmt == "relative":
        return f"[+{max(time.monotonic() - since, 0.0):.3f}s]"
    moment = (
        now
        if now is not None and now.tzinfo is not None
        else ((now or datetime.datetime.now()).astimezone())
    )
    if fmt == "iso":
        text = moment.strftime("%Y-%m-%dT%H:%M:%S")
        if moment.microsecond:
            text += f".{moment.microsecond:06d}".rstrip("0")
        offset = moment.utcoffset() or datetime.timedelta(0)
        if not offset:
            return text + "Z"
        minutes = int(offset.total_seconds()) // 60
        sign = "+" if minutes >= 0 else "-"
        hours, rest = divmod(abs(minutes), 60)
        return f"{text}{sign}{hours:02d}:{rest:02d}"
    return f"[{moment.strftime('%H:%M:%S')}.{moment.microsecond // 1000:03d}]"


def run_settings_rows(
    settings: RunSettings, *, executable: str | None = None
) -> list[tuple[str, str, str]]:
    """The resolved settings of a run as ``(key, value, provenance)`` rows: what ``ooda
    run --dry-run`` and ``ooda show --provenance`` print."""
    import shlex

    rows: list[tuple[str, str, str]] = []
    prov = settings.provenance

    def add(key: str, value: str) -> None:
        source = prov.get(key)
        rows.append((key, value, str(source) if source is not None else "default"))

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
    add("prompt_format", settings.prompt_format)
    if settings.ai_cmd is not None:
        add("ai_cmd", shlex.join(settings.ai_cmd))
        if executable is not None:
            rows.append(("executable", executable, "found on PATH / checked executable"))
        add("ai_output", settings.ai_output)
    elif settings.ai_api is not None:
        api = settings.ai_api
        add("ai_api", f"{api.provider} model={api.model}")
    else:
        rows.append(("ai_cmd", "(none configured)", ""))
    add("max_cost", "none" if settings.max_cost is None else f"${settings.max_cost:g}")
    add("max_tokens", "none" if settings.max_tokens is None else str(settings.max_tokens))
    add("sandbox", "none" if settings.sandbox is None else settings.sandbox.describe())
    return rows


def format_rows(rows: Sequence[tuple[str, str, str]]) -> str:
    """``rows`` as aligned ``key  value  provenance`` lines, indented by two spaces."""
    width = max(len(k) for k, _, _ in rows)
    vwidth = max(len(v) for _, v, _ in rows)
    return "\n".join(f"  {k:<{width}}  {v:<{vwidth}}  {s}".rstrip() for k, v, s in rows)


def format_run_settings(settings: RunSettings, *, executable: str | None = None) -> str:
    """The resolved settings of a run, one per line with their provenance (for dry runs)."""
    return format_rows(run_settings_rows(settings, executable=executable))


class ConsoleReporter:
    """Renders loop events for a person: the spec's log lines, and on a terminal a live
    progress line (iteration, time in it, total time, last outcome) refreshed every
    ``interval`` seconds while an iteration runs.

    ``level`` is the config's ``log_level`` (``debug``, ``info``, ``warn``, ``error`` or a
    ``logging`` level): events below it are not shown, except the final summary, which
    always is. ``quiet`` raises the level to ``warn``; ``verbose`` (or ``debug``) adds a
    detail line per iteration. ``timestamps`` is the config's ``log_timestamp_format``:
    each log line starts with one (see :func:`format_timestamp`). Call it as
    ``on_event``; ``close()`` stops the progress ticker.
    """

    def __init__(
        self,
        stream: Any = None,
        *,
        verbose: bool = False,
        quiet: bool = False,
        progress: bool | None = None,
        interval: float = 1.0,
        level: int | LogLevel = logging.INFO,
        timestamps: LogTimestampFormat = LOG_TIMESTAMP_FORMATS[0],
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if timestamps not in LOG_TIMESTAMP_FORMATS:
            raise ValueError(f"timestamps must be one of {', '.join(LOG_TIMESTAMP_FORMATS)}")
        self.timestamps = timestamps
        self.level = LOGGING_LEVELS[level] if isinstance(level, str) else level
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
                stamp = format_timestamp(self.timestamps, since=self._loop_started)
                for line in (prefix + event.message()).split("\n"):
                    self._write(f"{stamp} {line}\n" if stamp else line + "\n")
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
        import shutil  # here: it loads bz2 and lzma, which a quick `ooda show` never needs

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
