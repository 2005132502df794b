"""What fired, measured over a scenario's runs: each named assertion's pass rate
(``skill greet fired`` in 7 of 10 runs, 40%–89%), and for a trigger set its **recall**
(of the runs whose prompt should fire the target, the share where it fired), its
**precision** (of the runs where the target fired, the share whose prompt should have
fired it), each with its Wilson interval, and what fired instead when the target did
not. Over valid runs only: an infrastructure ``error`` measured nothing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda.stats.inference import CONFIDENCE, wilson_interval

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.results import RunRecord

__all__ = ["AssertionStats", "TriggerStats", "assertion_stats", "trigger_stats"]

#: The kinds that may fire instead of a trigger set's target.
_CHOSEN_KINDS = ("skill", "subagent")


@dataclass(frozen=True)
class AssertionStats:
    """One named assertion over the runs that checked it."""

    name: str
    passed: int
    runs: int

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.passed, self.runs, CONFIDENCE)


def assertion_stats(records: Sequence[RunRecord]) -> tuple[AssertionStats, ...]:
    """Each assertion the valid runs checked, in the order they first appear."""
    passed: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    for record in records:
        if record.outcome == "error":
            continue
        for entry in record.assertions:
            runs[entry.name] += 1
            passed[entry.name] += int(entry.passed)
    return tuple(AssertionStats(name, passed[name], runs[name]) for name in runs)


@dataclass(frozen=True)
class TriggerStats:
    """A trigger set's runs: ``hits`` (should fire, fired), ``misses`` (should fire, did
    not), ``false_alarms`` (should not fire, fired), ``quiet`` (should not, did not)."""

    target: str
    hits: int = 0
    misses: int = 0
    false_alarms: int = 0
    quiet: int = 0
    #: What fired (``kind:name``) in the runs the target should have fired and did not,
    #: and how often, most often first.
    instead: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def recall(self) -> float | None:
        total = self.hits + self.misses
        return self.hits / total if total else None

    @property
    def recall_interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.hits + self.misses, CONFIDENCE)

    @property
    def precision(self) -> float | None:
        fired = self.hits + self.false_alarms
        return self.hits / fired if fired else None

    @property
    def precision_interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.hits + self.false_alarms, CONFIDENCE)


def _fired(record: RunRecord, target: str) -> bool:
    """Whether the record's trigger assertion saw its target fire."""
    for entry in record.assertions:
        if entry.name.startswith(target + " "):
            fired_expected = entry.name.endswith(" fired")
            return entry.passed == fired_expected
    return False


def trigger_stats(records: Sequence[RunRecord]) -> TriggerStats | None:
    """The trigger set's measures, ``None`` when no valid run is one of its prompts."""
    cases = [r for r in records if r.head.trigger is not None and r.outcome != "error"]
    if not cases:
        return None
    target = str(cases[0].head.trigger["target"]) if cases[0].head.trigger is not None else ""
    counts: Counter[tuple[bool, bool]] = Counter()
    instead: Counter[str] = Counter()
    kind, _, name = target.partition(" ")
    for record in cases:
        assert record.head.trigger is not None
        should = bool(record.head.trigger.get("should_fire"))
        fired = _fired(record, target)
        counts[(should, fired)] += 1
        if should and not fired:
            instead.update(
                label
                for label in dict.fromkeys(record.activations)
                if label.partition(":")[0] in _CHOSEN_KINDS and label != f"{kind}:{name}"
            )
    return TriggerStats(
        target,
        hits=counts[(True, True)],
        misses=counts[(True, False)],
        false_alarms=counts[(False, True)],
        quiet=counts[(False, False)],
        instead=MappingProxyType(dict(instead.most_common())),
    )
