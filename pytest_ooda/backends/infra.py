"""Telling the infrastructure's faults from the procedure's: an API that is rate-limited,
overloaded or failing (HTTP 429, 529, 5xx), a connection that cannot be made, an agent
command that cannot be started or dies before saying anything. What an agent's own
messages mean is the agent's to say (:meth:`pytest_ooda.agents.Agent.fault`).

An iteration the infrastructure spoiled measured nothing about the prompt, so the
backends mark it (``BackendResult.infra_error``, a reason ``"kind: detail"``) and the
loop retries it instead of counting it as a failure; a run that still ends that way is
an ``error``, left out of success rates. Everything here reads what a backend already
has — a status code, a header, the agent's own error text — and guesses nothing from
the procedure's output: only a failing exit or a failed report is ever classified.
"""

from __future__ import annotations

import email.utils
import time

from pytest_ooda._types import Evidence, InfraErrorKind

# The HTTP statuses and the reason format are the agents package's, shared with every
# agent's reading of its own messages.
from pytest_ooda.agents import infra_reason, kind_of_status

__all__ = [
    "RETRYABLE",
    "InfraErrorKind",
    "died_silently",
    "infra_reason",
    "kind_of",
    "kind_of_status",
    "parse_retry_after",
    "silence_evidence",
]

#: Kinds worth trying again: a command that cannot be started will not start on a
#: second try either.
RETRYABLE: frozenset[InfraErrorKind] = frozenset(
    ("rate-limit", "overloaded", "server-error", "connection", "agent-died")
)


def kind_of(reason: str | None) -> str | None:
    """The kind at the head of a reason made by :func:`infra_reason`."""
    if not reason:
        return None
    return reason.split(":", 1)[0].strip() or None


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


def silence_evidence(term_signal: int | None) -> Evidence:
    """What an agent that ended before any output rests on: a signal killed it — the
    harness saw that (the OOM killer, a kill from outside) — or it exited non-zero on
    its own, which is the agent's doing: by the policy of docs/evaluating.md it counts
    as the agent's word (a failure, unless ``count_agent_reported_errors: as_errors``)."""
    return "harness" if term_signal is not None else "agent"


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
