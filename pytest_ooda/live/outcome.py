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
    scenario: Scenario, result: LoopResult, problems: Sequence[str]
) -> tuple[RunOutcome, str | None]:
    """The run's outcome and, for an ``error``, its reason.

    An AI command that could not be started at all (not found, not executable) made no
    iteration: nothing about the prompt was measured.
    """
    from pytest_ooda.evaluate.record import run_succeeded

    if not result.records and result.error is not None:
        return "error", result.error
    if run_succeeded(scenario, result, problems):
        return "success", None
    return "failure", None
