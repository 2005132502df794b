"""The judge step of a live run: ``expect.judge`` graded after the loop (inputs taken
before the verification commands run), within what the agent left of the run's budget,
through the results directory's grading cache (:mod:`pytest_ooda.judge`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pytest_ooda.config import Config
    from pytest_ooda.judge import Judged, JudgeInputs
    from pytest_ooda.live.settings import LiveSettings
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


def judge_budget(scenario: Scenario, result: LoopResult, settings: LiveSettings) -> float | None:
    """What the judge may spend: the run's budget less what the agent spent."""
    from pytest_ooda.loop import tightest

    limit = tightest(scenario.max_cost, settings.max_cost)
    if limit is None:
        return None
    usage = result.usage
    spent = usage.cost if usage is not None and usage.cost is not None else 0.0
    return max(limit - spent, 0.0)


def judge_run(
    scenario: Scenario,
    result: LoopResult,
    inputs: JudgeInputs | None,
    problems: Sequence[str],
    *,
    config: Config,
    settings: LiveSettings,
    redactor: Redactor,
) -> Judged | None:
    """Grade the run, unless it has no judge or already failed another expectation
    (its outcome is decided; the judge's money is saved) or made no iteration."""
    if inputs is None or problems or not result.records:
        return None
    from pytest_ooda.judge import JudgeContext, cache_for, judge_live

    context = JudgeContext(
        config=config,
        cache=cache_for(settings.judge_cache, ignore_dir=settings.ignore_dir),
        env=os.environ,
        redact=redactor,
    )
    return judge_live(scenario, inputs, context, budget=judge_budget(scenario, result, settings))
