"""How a run's outcome is decided: the one place that says ``success``, ``failure`` or
``error``, and why a run has the outcome it has.

``success`` and ``failure`` are the prompt's: the run met every per-run expectation and
ended as its scenario expects (``expect.status``, else ``success``), or not. ``error``
is the infrastructure's: the run could not measure the prompt at all, so it is left out
of success rates and may be retried.

A live run's outcome is decided once, by :func:`classify_outcome`, before its record is
built; the record carries it. Reports read it back and ask :func:`ended_because` why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda._types import RunOutcome
    from pytest_ooda.results.inputs import LoopFacts, ScenarioFacts

__all__ = ["UNMET", "classify_outcome", "ended_because", "expected_status", "failed_run"]

#: Why a ``failure`` whose loop ended as expected failed: it missed a check of
#: ``expect:`` (status, files, tools, commands, iterations, signals, the judge).
UNMET = "expectations"


def expected_status(declared: object) -> str:
    """The loop status a run is expected to end with: the scenario's ``expect.status``
    (a scenario written to check that a procedure gives up or runs out), else
    ``success``."""
    return declared if isinstance(declared, str) else "success"


def classify_outcome(
    scenario: ScenarioFacts,
    result: LoopFacts,
    problems: Sequence[str],
    *,
    judge_error: str | None = None,
    infra_error: str | None = None,
) -> tuple[RunOutcome, str | None]:
    """The run's outcome and, for an ``error``, its reason (``kind: detail``, the kinds
    of :data:`~pytest_ooda._types.InfraErrorKind`).

    The facts come from below: the loop ends a run with ``result.infra_error`` when the
    backends reported an infrastructure fault (an API's 429/529/5xx, a dropped
    connection, an agent that died before any output) and retrying did not help, or when
    the AI command could not be started at all; a step that fails before the loop (a
    sandbox that would not start) passes its own reason as ``infra_error``. Any of them
    makes the run an ``error``, whatever its expectations say: nothing about the prompt
    was measured. Nor was it when the loop made no iteration and says why, or when
    ``expect.judge`` got no usable answer (``judge_error``) from a run that met every
    other expectation.

    Otherwise the run is a ``success`` when it missed no expectation (``problems``) and
    its loop ended as expected (:func:`expected_status`), else a ``failure``.
    """
    if infra_error is not None:
        return "error", infra_error
    if result.infra_error is not None:
        return "error", result.infra_error
    if not result.records and result.error is not None:
        return "error", result.error
    if judge_error is not None and not problems:
        return "error", judge_error
    declared = scenario.expect.status if scenario.expect is not None else None
    if not problems and result.status == expected_status(declared):
        return "success", None
    return "failure", None


def ended_because(outcome: RunOutcome, status: str, declared: object) -> str | None:
    """Why a run has its outcome, where the loop's status says more than the outcome.

    A ``failure`` whose loop ended otherwise than its scenario expects (``declared``:
    its ``expect.status``) failed because of that: ``max-iters``, ``aborted``,
    ``interrupted``; one that ended ``success`` or as expected missed an ``expect:``
    check: :data:`UNMET`. A ``success`` names its loop's status when that is not
    ``success`` (a scenario that expects its procedure to give up). ``None`` for a plain
    success and for an ``error``, whose reason is the infrastructure's (counted apart).
    """
    if outcome == "error":
        return None
    if outcome == "success":
        return status if status != "success" else None
    return UNMET if status in ("success", expected_status(declared)) else status


def failed_run(
    scenario: ScenarioFacts, status: str, outcome: RunOutcome | None = None
) -> str | None:
    """Why a run — or a recording, by its ``recorded:`` status — is a failed one, not
    worth replaying: an infrastructure ``error``, or a loop status other than the
    scenario expects (:func:`expected_status`). ``None`` for a run that ended as
    expected (it may still have missed a check)."""
    if outcome == "error":
        return f"the run is an infrastructure error (it ended {status})"
    wanted = expected_status(scenario.expect.status if scenario.expect is not None else None)
    if status != wanted:
        return f"the run ended {status}, not {wanted} as expected"
    return None
