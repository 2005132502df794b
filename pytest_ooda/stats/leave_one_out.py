"""Which fragments of a prompt earn their tokens: leave-one-out ablation, judged over
paired runs.

An ablation session runs the scenario's full prompt (variant ``full``) and, beside it,
one arm per fragment left out (``without.observe.1``: the second fragment of Observe)
or per phase left out (``without.act``), round after round: run *k* of an arm is paired
with run *k* of the full prompt. Per arm:

- the **difference** in success rate, full minus without, from the pairs whose two runs
  are both valid; its interval is Agresti and Min's for paired rates;
- **McNemar's exact test** on the pairs that disagree, its p-value Holm-corrected over
  the arms;
- the **tokens** the fragment adds per iteration: the full prompt's input tokens per
  iteration minus the arm's, where both report usage (else estimated from the
  fragment's text in the full run's transcript, about four characters a token);
- the **verdict**: ``keep`` when the full prompt does significantly better (its adjusted
  p below the level), ``cut`` when the interval's upper end is below the margin (leaving
  it out costs less than ``margin`` of success rate, at the interval's confidence),
  otherwise ``can't tell`` with about how many more runs would settle it.

**Sequential stopping.** The arms are looked at after rounds 5, 10, 20, 40 … and the
last planned round; an arm whose verdict is settled at a look stops. Every look spends
an equal share of ``alpha`` (Bonferroni over the looks, valid however the looks
depend on each other): at each look the level is ``alpha / looks``, the p-values are
Holm-corrected over the arms at that level, and the intervals have confidence
``1 - level / arms`` (Bonferroni over the arms, Holm's first step) — so a fragment
called ``keep`` or ``cut`` is wrong with probability at most ``alpha`` over the whole
session.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda.stats.inference import (
    DEFAULT_ALPHA,
    _z,
    mcnemar_exact,
    paired_difference_interval,
)
from pytest_ooda.stats.variant_comparison import holm

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda._types import AblationVerdict
    from pytest_ooda.results import RunRecord

__all__ = [
    "DEFAULT_MARGIN",
    "DEFAULT_ROUNDS",
    "FULL",
    "Ablation",
    "ArmEffect",
    "ablation",
    "arm_name",
    "looks",
    "place_of",
]

#: The variant of the full prompt every arm is paired with.
FULL = "full"
#: A fragment that costs less success rate than this when left out is worth cutting.
DEFAULT_MARGIN = 0.1
#: Rounds an ablation plans unless told otherwise (``--runs``).
DEFAULT_ROUNDS = 30
#: The first look, after this many rounds; each later look doubles it.
FIRST_LOOK = 5
#: A fragment's tokens estimated from its text: about four characters each.
CHARS_PER_TOKEN = 4
_ARM = re.compile(r"without\.(observe|orient|decide|act)(?:\.(\d+))?\Z")


def arm_name(place: str) -> str:
    """The variant name of an arm: ``observe[1]`` -> ``without.observe.1``, ``act`` ->
    ``without.act`` (item ids allow no brackets)."""
    phase, _, rest = place.partition("[")
    return f"without.{phase}.{rest.rstrip(']')}" if rest else f"without.{phase}"


def place_of(arm: str) -> str | None:
    """What an arm leaves out (``observe[1]``, ``act``), or ``None`` for no arm."""
    found = _ARM.match(arm)
    if found is None:
        return None
    phase, index = found.groups()
    return f"{phase}[{index}]" if index is not None else phase


def _order(arm: str) -> tuple[int, int]:
    """Arms in the prompt's order: by phase, then fragment (a whole phase after its
    fragments)."""
    from pytest_ooda._types import PHASES

    place = place_of(arm) or ""
    phase, _, rest = place.partition("[")
    number = int(rest.rstrip("]")) if rest else 1 << 20
    return (PHASES.index(phase) if phase in PHASES else len(PHASES), number)


def looks(planned: int) -> tuple[int, ...]:
    """The rounds after which the arms are judged: 5, 10, 20, … below ``planned``, and
    ``planned`` itself."""
    out = []
    look = FIRST_LOOK
    while look < planned:
        out.append(look)
        look *= 2
    out.append(planned)
    return tuple(out)


@dataclass(frozen=True)
class ArmEffect:
    """One arm against the full prompt."""

    arm: str
    place: str
    #: The fragment's source as the full prompt's records name it (``None``: a phase).
    source: str | None
    pairs: int
    full_successes: int
    without_successes: int
    #: Pairs where only the full prompt's run succeeded, and only the arm's.
    only_full: int
    only_without: int
    interval: tuple[float, float]
    p_value: float
    adjusted: float
    tokens: float | None
    tokens_estimated: bool
    verdict: AblationVerdict
    #: About how many more rounds would settle a ``can't tell`` (``None``: no estimate).
    more_runs: int | None = None

    @property
    def difference(self) -> float:
        """Full minus without, over the pairs."""
        return (self.only_full - self.only_without) / self.pairs if self.pairs else 0.0

    @property
    def label(self) -> str:
        return f"{self.place} {self.source}" if self.source else f"{self.place} (whole phase)"

    def verdict_text(self) -> str:
        """``keep``, ``cut``, ``can't tell yet (12 more runs needed)``."""
        if self.verdict != "can't tell":
            return self.verdict
        if self.more_runs is None:
            return "can't tell yet"
        return f"can't tell yet ({self.more_runs} more runs needed)"


@dataclass(frozen=True)
class Ablation:
    """Every arm of one scenario's ablation."""

    label: str
    arms: tuple[ArmEffect, ...]
    alpha: float
    margin: float
    planned: int
    full_runs: int
    full_successes: int

    @property
    def level(self) -> float:
        """The significance level of each look."""
        return self.alpha / len(looks(self.planned))

    @property
    def confidence(self) -> float:
        """The intervals' confidence."""
        return 1 - self.level / max(1, len(self.arms))


def _pairs(
    full: Mapping[int, RunRecord], arm: Mapping[int, RunRecord]
) -> list[tuple[RunRecord, RunRecord]]:
    """Run k of the full prompt with run k of the arm, both valid."""
    return [
        (full[k], arm[k])
        for k in sorted(full.keys() & arm.keys())
        if full[k].valid and arm[k].valid
    ]


def _prompt_tokens(records: Sequence[RunRecord]) -> float | None:
    """Mean input tokens (cache included) per iteration, over runs that report usage."""
    values = [
        (record.usage.total_tokens - record.usage.output_tokens) / len(record.iterations)
        for record in records
        if record.usage is not None and record.iterations
    ]
    return statistics.fmean(values) if values else None


def _text_tokens(full: Sequence[RunRecord], source: str | None) -> float | None:
    """A fragment's tokens estimated from its text in a full run's transcript."""
    if source is None:
        return None
    for record in full:
        for segment in (record.transcript or {}).get("prompt") or ():
            if isinstance(segment, dict) and segment.get("source") == source:
                return len(str(segment.get("text") or "")) / CHARS_PER_TOKEN
    return None


def _source(full: Sequence[RunRecord], place: str) -> str | None:
    phase, _, rest = place.partition("[")
    if not rest:
        return None
    index = int(rest.rstrip("]"))
    for record in full:
        for fragment in record.head.fragments:
            if fragment.phase == phase and fragment.index == index:
                return fragment.source
    return None


def _more_runs(
    pairs: int, only_full: int, only_without: int, z: float, margin: float
) -> int | None:
    """About how many more rounds the interval needs to settle either way, projecting
    the disagreement seen so far (Agresti and Min's adjustment keeps it above zero)."""
    n = pairs + 2
    disagree = (only_full + only_without + 1) / n
    change = (only_full - only_without) / n
    spread = max(disagree - change * change, 1e-9)
    needed = []
    if change < margin:
        needed.append(z * z * spread / (margin - change) ** 2)
    if change > 0:
        needed.append(z * z * spread / change**2)
    if not needed:
        return None
    return max(1, math.ceil(min(needed)) - pairs)


def _judged_as(records: Mapping[str, Mapping[int, RunRecord]]) -> Mapping[str, Any]:
    """How the session that made these runs judged them (its stamp's ``ablation``:
    margin, alpha, rounds), so a report judges them alike; empty when it says none."""
    for group in records.values():
        for record in group.values():
            stamp = record.head.stamp
            if stamp is not None and stamp.ablation:
                return stamp.ablation
    return {}


def ablation(
    records: Iterable[RunRecord],
    *,
    alpha: float | None = None,
    margin: float | None = None,
    planned: int | None = None,
) -> list[Ablation]:
    """Every scenario among ``records`` that ran a ``full`` variant and at least one
    arm, each arm judged as at its latest look. ``alpha``, ``margin`` and ``planned``
    (the rounds planned) default to what the ablation session recorded, else
    :data:`DEFAULT_ALPHA`, :data:`DEFAULT_MARGIN` and the most runs any record was
    planned with."""
    by_scenario: dict[str, dict[str, dict[int, RunRecord]]] = {}
    for record in records:
        variant = record.head.variant or ""
        if variant != FULL and place_of(variant) is None:
            continue
        label = f"{record.head.procedure}/{record.head.scenario}"
        by_scenario.setdefault(label, {}).setdefault(variant, {})[record.head.run] = record
    out = []
    for label, arms in sorted(by_scenario.items()):
        full = arms.get(FULL)
        if not full or len(arms) < 2:
            continue
        recorded = _judged_as(arms)
        rounds = (
            planned
            or recorded.get("rounds")
            or max(record.head.runs for group in arms.values() for record in group.values())
        )
        out.append(
            _judge(
                label,
                full,
                arms,
                alpha=alpha or float(recorded.get("alpha") or DEFAULT_ALPHA),
                margin=margin or float(recorded.get("margin") or DEFAULT_MARGIN),
                planned=int(rounds),
            )
        )
    return out


def _judge(
    label: str,
    full: Mapping[int, RunRecord],
    arms: Mapping[str, Mapping[int, RunRecord]],
    *,
    alpha: float,
    margin: float,
    planned: int,
) -> Ablation:
    names = sorted((name for name in arms if name != FULL), key=_order)
    level = alpha / len(looks(planned))
    confidence = 1 - level / len(names)
    z = _z(1 - level / len(names) / 2)
    full_runs = [record for record in full.values() if record.valid]
    measured = []
    for name in names:
        pairs = _pairs(full, arms[name])
        only_full = sum(a.outcome == "success" and b.outcome != "success" for a, b in pairs)
        only_without = sum(a.outcome != "success" and b.outcome == "success" for a, b in pairs)
        measured.append((name, pairs, only_full, only_without))
    adjusted = holm([mcnemar_exact(b, c) for _, _, b, c in measured])
    effects = []
    for (name, pairs, only_full, only_without), p_adjusted in zip(measured, adjusted, strict=True):
        place = place_of(name) or name
        source = _source(full_runs, place)
        interval = paired_difference_interval(len(pairs), only_full, only_without, confidence)
        verdict: AblationVerdict = "can't tell"
        if pairs and p_adjusted < level and only_full > only_without:
            verdict = "keep"
        elif pairs and interval[1] < margin:
            verdict = "cut"
        with_tokens = _prompt_tokens([a for a, _ in pairs])
        without_tokens = _prompt_tokens([b for _, b in pairs])
        tokens = (
            with_tokens - without_tokens
            if with_tokens is not None and without_tokens is not None
            else None
        )
        estimated = tokens is None
        if estimated:
            tokens = _text_tokens(full_runs, source)
        effects.append(
            ArmEffect(
                arm=name,
                place=place,
                source=source,
                pairs=len(pairs),
                full_successes=sum(a.outcome == "success" for a, _ in pairs),
                without_successes=sum(b.outcome == "success" for _, b in pairs),
                only_full=only_full,
                only_without=only_without,
                interval=interval,
                p_value=mcnemar_exact(only_full, only_without),
                adjusted=p_adjusted,
                tokens=tokens,
                tokens_estimated=estimated and tokens is not None,
                verdict=verdict,
                more_runs=_more_runs(len(pairs), only_full, only_without, z, margin)
                if verdict == "can't tell"
                else None,
            )
        )
    return Ablation(
        label,
        tuple(effects),
        alpha,
        margin,
        planned,
        len(full_runs),
        sum(record.outcome == "success" for record in full_runs),
    )
