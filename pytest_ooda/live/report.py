"""What a person must hear about a live run that did not fail it (the failure report
itself is the scenario's: :func:`pytest_ooda.scenario.failure_text`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ooda.loop import LoopResult

__all__ = ["agent_warnings"]


def agent_warnings(result: LoopResult) -> list[str]:
    """What a person must hear about an agent's run that did not fail it: tools it was
    denied, a budget it could not be held to."""
    from pytest_ooda.loop import unenforced_warning

    found = [text for record in result.records if (text := record.denial_warning())]
    unenforced = unenforced_warning(result)
    if unenforced is not None:
        found.append(unenforced)
    return found
