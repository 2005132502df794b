"""``ooda ablate``'s session: the full prompt and one arm per fragment left out, run in
paired rounds until each arm's verdict is settled, the rounds run out, or the budget
is spent.

Round *k* runs the full prompt (variant ``full``) once and each arm still open once,
every run planned by :func:`pytest_ooda.live.plan_run` (the arm a variant whose
``without`` names what it leaves out) and made by :func:`pytest_ooda.live.run_live`,
its record appended to a results log as it finishes. After the rounds of
:func:`pytest_ooda.stats.looks`, the arms are judged
(:func:`pytest_ooda.stats.ablation`) and a settled arm stops; the full prompt runs
while any arm is open. Before each run the session's :class:`~pytest_ooda.results.Budget`
is asked: once the next run would pass it, no run starts, and every arm still open is
*can't tell yet* with the runs it would need.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda.results import Budget, ResultsLog, SessionStamp, Spent

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from pytest_ooda.config import Config, Procedure
    from pytest_ooda.results import RunRecord
    from pytest_ooda.scenario import Scenario
    from pytest_ooda.settings import SessionSettings
    from pytest_ooda.stats import Ablation, ArmEffect
    from pytest_ooda.variants import Variant

__all__ = ["AblationRun", "ablation_arms", "run_ablation"]


def ablation_arms(procedure: Procedure, phases: Sequence[str] = ()) -> tuple[str, ...]:
    """What the arms leave out: every fragment of ``procedure`` (``observe[0]`` …, in
    phase order) and each of the whole ``phases`` asked for (``all``: every phase that
    has a fragment)."""
    from pytest_ooda._types import PHASES

    composed = procedure.phases()
    places = [f"{phase}[{index}]" for phase in PHASES for index in range(len(composed[phase]))]
    wanted = [phase for phase in PHASES if composed[phase]] if "all" in phases else phases
    places.extend(phase for phase in PHASES if phase in wanted)
    return tuple(places)


@dataclass
class AblationRun:
    """What an ablation session did: its records, the spend, where the log went and
    why it stopped."""

    records: list[RunRecord] = field(default_factory=list)
    spent: Spent = field(default_factory=Spent)
    log: Path | None = None
    #: Why runs stopped before the planned rounds (the budget), or ``None``.
    stopped: str | None = None
    #: The arms settled at a look, by the round they were settled after.
    settled: dict[str, int] = field(default_factory=dict)
    result: Ablation | None = None


def _variants(places: Sequence[str], source: str | None) -> list[Variant]:
    from pytest_ooda.stats import FULL, arm_name
    from pytest_ooda.variants import Variant

    full = Variant(FULL, source=source)
    return [full, *(Variant(arm_name(place), without=(place,), source=source) for place in places)]


def run_ablation(
    session: SessionSettings,
    scenario: Scenario,
    *,
    config: Config,
    places: Sequence[str],
    rounds: int,
    budget: Budget | None = None,
    alpha: float,
    margin: float,
    on_run: Callable[[RunRecord, Spent], None] | None = None,
) -> AblationRun:
    """Run ``scenario``'s ablation: the full prompt and an arm per place, ``rounds``
    paired rounds at most, within ``budget``; records go to the session's results
    directory."""
    from pytest_ooda.live import plan_run, run_live
    from pytest_ooda.stats import FULL, ablation, looks

    budget = budget or Budget()
    stamp = replace(
        SessionStamp.start(session.root),
        budget=MappingProxyType(budget.to_json()) if budget else None,
        ablation=MappingProxyType({"margin": margin, "alpha": alpha, "rounds": rounds}),
    )
    log = ResultsLog(session.results_dir, session=stamp.session, ignore_dir=session.ignore_dir)
    variants = _variants(places, str(scenario.path) if scenario.path else None)
    open_arms = {variant.name for variant in variants if variant.name != FULL}
    checkpoints = set(looks(rounds))
    done = AblationRun()
    try:
        for number in range(1, rounds + 1):
            for variant in variants:
                if variant.name != FULL and variant.name not in open_arms:
                    continue
                refusal = budget.refusal(done.spent) if budget else None
                if refusal is not None:
                    done.stopped = refusal
                    break
                plan = plan_run(
                    session,
                    scenario.procedure,
                    scenario,
                    config=config,
                    variant=variant,
                    run=number,
                    runs=rounds,
                    nodeid=f"ablate[{scenario.name}@{variant.name}#{number}]",
                    stamp=stamp,
                )
                record = run_live(plan).record
                done.log = log.append(record)
                done.records.append(record)
                usage = record.usage
                done.spent = done.spent.plus(
                    usage.cost if usage else None, usage.total_tokens if usage else None
                )
                if on_run is not None:
                    on_run(record, done.spent)
            if done.stopped is not None:
                break
            if number in checkpoints:
                for arm in _judge(done.records, alpha, margin, rounds):
                    if arm.verdict != "can't tell" and arm.arm in open_arms:
                        open_arms.discard(arm.arm)
                        done.settled[arm.arm] = number
            if not open_arms:
                break
    finally:
        log.close()
    judged = ablation(done.records, alpha=alpha, margin=margin, planned=rounds)
    done.result = judged[0] if judged else None
    return done


def _judge(
    records: Sequence[RunRecord], alpha: float, margin: float, rounds: int
) -> list[ArmEffect]:
    """The arms as a look judges them."""
    from pytest_ooda.stats import ablation

    judged = ablation(records, alpha=alpha, margin=margin, planned=rounds)
    return list(judged[0].arms) if judged else []
