"""What one live run counts as: the one place that decides ``success``, ``failure`` or
``error``.

``success`` and ``failure`` are the prompt's: the run met every per-run expectation and
ended as expected, or not. ``error`` is the infrastructure's: the run could not measure
the prompt at all, so it is left out of success rates and may be retried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda._types import RunOutcome
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.scenario import Scenario

__all__ = ["classify_outcome"]


def classify_outcome(
    scenario: Scenario,
    result: LoopResult,
    problems: Sequence[str],
    *,
    judge_error: str | None = None,
    infra_error: str | None = None,
) -> tuple[RunOutcome, str | None]:
    """The run's outcome and, for an ``error``, its reason (``kind: detail``, the kinds
    of :data:`~pytest_ooda._types.InfraErrorKind`).

    An AI command that could not be started at all (not found, not executable) made no
    iteration: nothing about the prompt was measured. Nor was it when ``expect.judge``
    got no usable answer (``judge_error``) from a run that met every other expectation.

    The facts come from below: the loop ends a run with ``result.infra_error`` when the
    backends reported an infrastructure fault (an API's 429/529/5xx, a dropped
    connection, an agent that died before any output) and retrying did not help, or when
    the AI command could not be started at all; a step that fails before the loop (a
    sandbox that would not start) passes its own reason as ``infra_error``. Any of them
    makes the run an ``error``, whatever its expectations say: nothing about the prompt
    was measured.
    """
    from pytest_ooda.evaluate import run_succeeded

    if infra_error is not None:
        return "error", infra_error
    if result.infra_error is not None:
        return "error", result.infra_error
    if not result.records and result.error is not None:
        return "error", result.error
    if judge_error is not None and not problems:
        return "error", judge_error
    if run_succeeded(scenario, result, problems):
        return "success", None
    return "failure", None
