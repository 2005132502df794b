"""The promise signals and the outcome matrix of one iteration.

Kept apart from the runner so the matrix can be read (and tested) as the table it is in
the spec: FAILURE wins over SUCCESS, a timeout ignores both, a non-zero exit without a
signal is a failure, and a clean exit without a signal means "keep going" — except for a
one-turn procedure (:func:`one_turn`), where it means "done". A backend's ``error``
(output it could not read, an error the agent reported) is a failure too.
"""

from __future__ import annotations

import signal as signal_module
from dataclasses import dataclass
from typing import TYPE_CHECKING

__all__ = [
    "FAILURE_SIGNAL",
    "ONE_TURN",
    "SUCCESS_SIGNAL",
    "Outcome",
    "decide_outcome",
    "find_signal",
    "one_turn",
]

from pytest_ooda._types import FAILURE_SIGNAL, SUCCESS_SIGNAL

if TYPE_CHECKING:
    from pytest_ooda.config import Procedure

#: Why a clean turn of a one-turn procedure ended its run.
ONE_TURN = "the turn ended: a raw prompt that asks for no promise runs once"


def one_turn(procedure: Procedure, prompt: str) -> bool:
    """Whether a clean iteration (no signal, exit 0) of ``procedure`` ends its run: a
    ``raw`` prompt (a slash command, a skill's trigger words) that never mentions the
    SUCCESS promise is one turn of the agent's own loop, and nothing in it could ever
    signal success — the scenario's checks (``expect.files``, ``expect.commands``,
    ``expect.activation``) decide whether it did its work."""
    return procedure.prompt_format == "raw" and SUCCESS_SIGNAL not in prompt


def find_signal(output: str) -> str | None:
    """``"FAILURE"`` if the failure promise appears anywhere, else ``"SUCCESS"`` if the
    success promise does, else ``None``."""
    if FAILURE_SIGNAL in output:
        return "FAILURE"
    if SUCCESS_SIGNAL in output:
        return "SUCCESS"
    return None


@dataclass(frozen=True)
class Outcome:
    """``kind`` is ``ok`` (continue, failures reset), ``success`` (stop) or ``failure``."""

    kind: str
    reason: str = ""


def decide_outcome(
    exit_code: int, signal: str | None, *, timed_out: bool = False, error: str | None = None
) -> Outcome:
    """Apply the outcome matrix; ``error`` is a backend's explanation of a failed call.

    An ``error`` fails the iteration whatever the exit code and the signals say: an agent
    CLI exits 0 after output that could not be read (a torn stream), and a promise in
    text that may be cut short proves nothing.
    """
    if timed_out:
        return Outcome("failure", "timed out")
    if error:
        return Outcome("failure", error)
    if signal == "FAILURE":
        return Outcome("failure", "FAILURE signal")
    if signal == "SUCCESS":
        return Outcome("success", "SUCCESS signal")
    if exit_code != 0:
        if exit_code < 0:
            try:
                name = signal_module.Signals(-exit_code).name
            except ValueError:
                name = f"signal {-exit_code}"
            return Outcome("failure", f"killed by {name}")
        return Outcome("failure", f"exit code {exit_code}")
    return Outcome("ok")
