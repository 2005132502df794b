"""Positive controls: scenarios marked ``control: true`` that succeed whenever the harness
can observe the agent at all (docs/evaluating.md).

A control fails when its own gates fail (``expect.success_rate`` …), or, without gates,
when any of its runs did not succeed (an infrastructure error included: the harness
did not see the agent work). Then nothing else measured beside it means anything about a
prompt: a sandbox without the API key, an agent that cannot log in, a proxy that cannot
be reached fail every scenario alike. So every other scenario of the same variant (the
same agent and settings) is *blocked*: its gates and comparisons are inconclusive —
"the harness could not observe the behaviour: control <name> failed" — never a prompt's
regression. :func:`apply_controls` marks a session's statistics so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["CONTROL_FAILED", "apply_controls", "control_failure", "harness_blind"]


class Measured(Protocol):
    """What this module reads of a scenario's statistics (``aggregate.ScenarioStats``,
    a dataclass it changes with ``dataclasses.replace``)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def label(self) -> str: ...
    @property
    def runs(self) -> int: ...
    @property
    def successes(self) -> int: ...
    @property
    def gates(self) -> Any: ...
    @property
    def records(self) -> Sequence[Any]: ...
    @property
    def control(self) -> bool: ...
    @property
    def control_failed(self) -> str | None: ...
    @property
    def blocked_by(self) -> tuple[str, ...]: ...
    def outcome_text(self) -> str: ...


Stats = TypeVar("Stats", bound=Measured)

#: What a blocked scenario's gates and comparisons say.
CONTROL_FAILED = "the harness could not observe the behaviour: control {name} failed"


def control_failure(stats: Stats, gate_problems: Callable[[Stats], list[str]]) -> str | None:
    """Why the control ``stats`` failed (``gate_problems``: its own gates' misses), or
    ``None`` when it succeeded."""
    if stats.gates is not None:
        problems = gate_problems(stats)
        return problems[0] if problems else None
    missed = stats.runs - stats.successes
    if not missed:
        return None
    return f"{missed} of {stats.runs} run(s) did not succeed: {stats.outcome_text()}"


def _variant(stats: Measured) -> str | None:
    return stats.records[0].head.variant if stats.records else None


def apply_controls(
    stats: Sequence[Stats], gate_problems: Callable[[Stats], list[str]]
) -> list[Stats]:
    """``stats`` with each control's failure (``control_failed``) and, on every other
    scenario of a variant whose control failed, the controls that block it
    (``blocked_by``)."""
    failed: dict[str | None, list[str]] = {}
    marked: list[Stats] = []
    for item in stats:
        if item.control:
            why = control_failure(item, gate_problems)
            if why is not None:
                failed.setdefault(_variant(item), []).append(item.label)
                item = replace(item, control_failed=why)
        marked.append(item)
    if not failed:
        return marked
    return [
        item
        if item.control or not failed.get(_variant(item))
        else replace(item, blocked_by=tuple(failed[_variant(item)]))
        for item in marked
    ]


def harness_blind(stats: Measured) -> str | None:
    """Why the harness could not observe ``stats``'s scenario: a control of its variant
    failed (or it is a control, and failed); ``None`` when it could."""
    if stats.control_failed is not None:
        return CONTROL_FAILED.format(name=stats.label)
    if stats.blocked_by:
        return CONTROL_FAILED.format(name=", ".join(stats.blocked_by))
    return None
