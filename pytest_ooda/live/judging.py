"""The judge step of a live run: ``expect.judge`` graded after the loop (inputs taken
before the verification commands run), within what the agent left of the run's budget,
through the results directory's grading cache (:mod:`pytest_ooda.judge`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pytest_ooda.judge import Judged, JudgeInputs
    from pytest_ooda.live.plan import RunPlan
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.redact import Redactor
    from pytest_ooda.scenario import Scenario


def judge_inputs(
    scenario: Scenario, result: LoopResult, workdir: Path, redactor: Redactor | None = None
) -> JudgeInputs | None:
    """What the judge will be shown (redacted), when the scenario has a judge."""
    if scenario.expect is None or scenario.expect.judge is None:
        return None
    from pytest_ooda.judge import run_inputs

    return run_inputs(scenario, result, workdir, redactor)


def judge_budget(plan: RunPlan, result: LoopResult) -> float | None:
    """What the judge may spend: the run's cost budget less what the agent spent."""
    limit = plan.settings.max_cost
    if limit is None:
        return None
    usage = result.usage
    spent = usage.cost if usage is not None and usage.cost is not None else 0.0
    return max(limit - spent, 0.0)


def judge_run(
    plan: RunPlan,
    result: LoopResult,
    inputs: JudgeInputs | None,
    problems: Sequence[str],
    *,
    redactor: Redactor,
) -> Judged | None:
    """Grade the run, unless it has no judge or already failed another expectation
    (its outcome is decided; the judge's money is saved) or made no iteration."""
    if inputs is None or problems or not result.records:
        return None
    from pytest_ooda.judge import JudgeContext, cache_for, judge_live

    context = JudgeContext(
        config=plan.config,
        cache=cache_for(plan.judge_cache, ignore_dir=plan.ignore_dir),
        env=os.environ,
        redact=redactor,
    )
    return judge_live(
        plan.scenario, inputs, context, budget=judge_budget(plan, result), run=plan.run_id
    )
