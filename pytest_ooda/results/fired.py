"""What a run's record says fired and held, beyond its outcome: each named assertion of
``expect.activation`` and ``expect.trajectory`` and whether the run met it (so each gets
its own pass rate), what fired (``skill:greet``, ``hook:PreToolUse:Write``), the
scenario's ``setup:`` commands, and — for a run of a trigger set — which prompt it was
and whether the target should fire: made for a record here, declared in :mod:`.schema`
with the record's other fields (:class:`~.schema.AssertionEntry`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.results.schema import AssertionEntry

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["assertion_entries", "trigger_entry"]


def trigger_entry(target: str, case: str, should_fire: bool, prompt: str) -> dict[str, Any]:
    """The record's ``trigger``: the set's target (``skill greet``), the case
    (``should-2``), whether it should fire, and the prompt."""
    return {"target": target, "case": case, "should_fire": should_fire, "prompt": prompt}


def assertion_entries(found: Sequence[Any]) -> tuple[AssertionEntry, ...]:
    """``found`` (a scenario's assertions: ``name``, ``passed``, ``detail``) as entries."""
    return tuple(AssertionEntry(item.name, item.passed, item.detail) for item in found)
