"""Telling the infrastructure's faults from the procedure's: an API that is rate-limited,
overloaded or failing (HTTP 429, 529, 5xx), a connection that cannot be made, an agent
command that cannot be started or dies before saying anything.

An iteration the infrastructure spoiled measured nothing about the prompt, so the
backends mark it (``BackendResult.infra_error``, a reason ``"kind: detail"``) and the
loop retries it instead of counting it as a failure; a run that still ends that way is
an ``error``, left out of success rates. Everything here reads what a backend already
has — a status code, a header, the agent's own error text — and guesses nothing from
the procedure's output: only a failing exit or a failed report is ever classified.
"""

from __future__ import annotations

import email.utils
import re
import time

from pytest_ooda._types import InfraErrorKind

__all__ = [
    "RETRYABLE",
    "InfraErrorKind",
    "api_error_text",
    "died_silently",
    "error_message",
    "infra_reason",
    "kind_of",
    "kind_of_status",
    "parse_retry_after",
]

#: Kinds worth trying again: a command that cannot be started will not start on a
#: second try either.
RETRYABLE: frozenset[InfraErrorKind] = frozenset(
    ("rate-limit", "overloaded", "server-error", "connection", "agent-died")
)

#: Claude Code's text for an API failure it gave up retrying:
#: ``API Error: 529 {...}`` / ``API Error: Connection error.``
_CLAUDE_API_ERROR = re.compile(
    r"^\s*API Error:\s*(?:(\d{3})\b|(Connection error|Request timed out))"
)
#: A status named in an agent's error message (Codex: ``last status: 429 Too Many
#: Requests``, ``unexpected status 503 Service Unavailable``).
_STATUS_IN_TEXT = re.compile(r"\b(?:status|HTTP)[ :]*(\d{3})\b", re.IGNORECASE)
_WORDS: tuple[tuple[re.Pattern[str], InfraErrorKind], ...] = (
    (re.compile(r"too many requests|rate.?limit", re.IGNORECASE), "rate-limit"),
    (re.compile(r"overloaded", re.IGNORECASE), "overloaded"),
    (
        re.compile(
            r"stream disconnected|connection (?:error|refused|reset|closed)|"
            r"error sending request|network error",
            re.IGNORECASE,
        ),
        "connection",
    ),
    (
        re.compile(r"internal server error|service unavailable|bad gateway", re.IGNORECASE),
        "server-error",
    ),
)


def kind_of_status(status: int) -> InfraErrorKind | None:
    """The kind of an HTTP status the provider is to blame for, else ``None``."""
    if status == 429:
        return "rate-limit"
    if status == 529 or status == 503:
        return "overloaded"
    if 500 <= status <= 599:
        return "server-error"
    return None


def infra_reason(kind: InfraErrorKind, detail: str) -> str:
    """The reason as results and reports show it: ``rate-limit: HTTP 429 …``."""
    detail = " ".join(detail.split())
    if len(detail) > 300:
        detail = detail[:299] + "…"
    return f"{kind}: {detail}" if detail else kind


def kind_of(reason: str | None) -> str | None:
    """The kind at the head of a reason made by :func:`infra_reason`."""
    if not reason:
        return None
    return reason.split(":", 1)[0].strip() or None


def api_error_text(text: str) -> str | None:
    """The reason when ``text`` is Claude Code's report of an API failure (its last
    words before exiting non-zero); ``None`` for anything else."""
    for line in reversed(text.strip().splitlines()[-5:]):
        match = _CLAUDE_API_ERROR.match(line)
        if match is None:
            continue
        if match.group(1):
            kind = kind_of_status(int(match.group(1)))
            if kind is not None:
                return infra_reason(kind, line.strip())
            return None
        return infra_reason("connection", line.strip())
    return None


def error_message(text: str) -> str | None:
    """The reason when an agent's error message (Codex's ``error`` / ``turn.failed``
    events) blames the API or the connection; ``None`` for anything else."""
    status = _STATUS_IN_TEXT.search(text)
    if status is not None:
        kind = kind_of_status(int(status.group(1)))
        if kind is not None:
            return infra_reason(kind, text)
    for pattern, kind in _WORDS:
        if pattern.search(text):
            return infra_reason(kind, text)
    return None


def died_silently(exit_code: int, term_signal: int | None) -> str:
    """The reason for an agent that ended badly before printing a single byte: it never
    got to the prompt, so nothing was measured."""
    if term_signal is not None:
        import signal as signals

        try:
            name = signals.Signals(term_signal).name
        except ValueError:
            name = f"signal {term_signal}"
        return infra_reason("agent-died", f"killed by {name} before any output")
    return infra_reason("agent-died", f"exited with code {exit_code} before any output")


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date;
    ``None`` when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)
