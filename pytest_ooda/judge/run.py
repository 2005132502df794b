"""Grading a finished run of a scenario: the one path the live run and the replay share.

A live run asks the judge (through the grading cache, within what is left of the run's
budget). A replay grades with the verdicts its recording keeps (``judged:``), offline;
with ``regrade`` it asks the judge again and says which verdicts flipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pytest_ooda.judge.grading import grade, replay_grading
from pytest_ooda.judge.inputs import gather
from pytest_ooda.judge.model import RecordedGrading, inputs_key

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from pytest_ooda.config import Config
    from pytest_ooda.judge.grading import GradingCache
    from pytest_ooda.judge.model import Grading, JudgeInputs, JudgeSpec
    from pytest_ooda.loop import LoopResult


class _Expect(Protocol):
    @property
    def judge(self) -> JudgeSpec | None: ...


class Scenario(Protocol):
    """What grading needs of a scenario (``pytest_ooda.scenario.Scenario`` is one): the
    judge package reads scenarios, never imports them, so that ``scenario`` can import
    ``judge`` (to read ``expect.judge``) without a circle."""

    @property
    def procedure(self) -> str: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def expect(self) -> _Expect | None: ...
    @property
    def judged(self) -> RecordedGrading | None: ...
    @property
    def label(self) -> str: ...
    def workspace_dir(self) -> Path | None: ...


@dataclass(frozen=True)
class Judged:
    """A run's grading and what follows from it: ``problem`` when the run failed its
    rubric, ``error`` when the judge gave no usable answer (the run is an ``error``),
    ``notes`` for a person (recorded verdicts for another rubric, flipped verdicts), and
    ``recorded``, the verdicts a recording of the run keeps."""

    grading: Grading | None
    problem: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()
    recorded: RecordedGrading | None = None


@dataclass(frozen=True)
class JudgeContext:
    """What asking a judge needs besides the run: the config (aliases), the results
    directory's cache, the environment (API keys) and a redactor for reasons."""

    config: Config | None = None
    cache: GradingCache | None = None
    env: Mapping[str, str] | None = None
    redact: Callable[[str], str] | None = None


def run_inputs(
    scenario: Scenario,
    result: LoopResult,
    workspace: Path | None,
    redact: Callable[[str], str] | None = None,
) -> JudgeInputs:
    """What the judge is shown of this run (call it before verification commands run,
    which may write into the workspace), each text redacted by ``redact`` first: what
    the judge is shown leaves the machine."""
    return gather(_spec(scenario), result, workspace, scenario.workspace_dir(), redact)


def _spec(scenario: Scenario) -> JudgeSpec:
    spec = scenario.expect.judge if scenario.expect is not None else None
    if spec is None:
        raise ValueError(f"scenario {scenario.label} has no expect.judge")
    return spec


def judge_places(scenario: Scenario, config: Config | None) -> dict[str, str]:
    """What a judge command's ``{scenario_dir}`` and ``{config_dir}`` stand for: the
    scenario file's folder and the folder of the config file declaring its procedure
    (absolute), so a repository's ``judge.py`` travels to CI."""
    from pathlib import Path

    places: dict[str, str] = {}
    if scenario.path is not None:
        places["scenario_dir"] = str(Path(scenario.path).parent.absolute())
    declared = None
    if config is not None and scenario.procedure in config.procedures:
        declared = config.procedures[scenario.procedure].location.file
    if declared is None and config is not None and config.files:
        declared = config.files[-1]
    if declared is not None:
        places["config_dir"] = str(Path(declared).parent.absolute())
    return places


def _ask(
    scenario: Scenario,
    inputs: JudgeInputs,
    context: JudgeContext,
    budget: float | None,
    run: str | None = None,
) -> Grading:
    from pytest_ooda.errors import OodaError
    from pytest_ooda.judge.ask import make_asker

    spec = _spec(scenario)
    try:
        asker = make_asker(
            spec.backend,
            config=context.config,
            procedure=scenario.procedure,
            env=context.env,
            places=judge_places(scenario, context.config),
        )
    except OodaError as error:
        # A judge the config cannot resolve (an unknown alias): at the judge block.
        if error.file is not None or scenario.path is None:
            raise
        raise error.relocated(
            file=str(scenario.path),
            line=spec.backend.line or spec.line,
            column=spec.backend.column or 1,
        ) from None
    return grade(
        spec, inputs, asker, cache=context.cache, budget=budget, redact=context.redact, run=run
    )


def _judged(grading: Grading, notes: tuple[str, ...] = ()) -> Judged:
    recorded = None
    if grading.error is None and grading.key is not None:
        recorded = RecordedGrading(grading.key, grading.votes)
    return Judged(grading, grading.problem(), grading.error, notes, recorded)


def judge_live(
    scenario: Scenario,
    inputs: JudgeInputs,
    context: JudgeContext,
    *,
    budget: float | None = None,
    run: str | None = None,
) -> Judged:
    """Ask the judge about a live run; ``budget`` is what the judge may spend, ``run``
    the run's id (its votes are its own unless ``judge_cache: content``)."""
    return _judged(_ask(scenario, inputs, context, budget, run))


def judge_replay(
    scenario: Scenario,
    inputs: JudgeInputs,
    context: JudgeContext,
    *,
    regrade: bool = False,
) -> Judged:
    """Grade a replay with the recorded verdicts (offline), or, with ``regrade``, ask
    the judge again and note a verdict that flipped."""
    spec = _spec(scenario)
    recorded = scenario.judged
    key = inputs_key(spec, inputs)
    if regrade:
        fresh = _ask(scenario, inputs, context, None)
        notes: tuple[str, ...] = ()
        if recorded is not None and fresh.error is None:
            before = replay_grading(spec, recorded)
            if before.passed is not fresh.passed:
                notes = (
                    f"regraded: {_word(before.passed)} -> {_word(fresh.passed)} (recorded "
                    f"{before.pass_votes} of {len(before.votes)} pass votes, now "
                    f"{fresh.pass_votes} of {len(fresh.votes)})",
                )
        return _judged(fresh, notes)
    if recorded is None:
        return Judged(
            None,
            problem="expect.judge: the scenario keeps no verdicts (judged:) to grade a "
            "replay with; re-record it (pytest -m live --ooda-record-mode=all) or ask the "
            "judge with --ooda-regrade",
        )
    grading = replay_grading(spec, recorded)
    notes = ()
    if recorded.key and recorded.key != key:
        notes = (
            "the recorded verdicts were given for another rubric or other inputs; "
            "pytest --ooda-regrade asks the judge again",
        )
    if len(recorded.votes) != spec.votes:
        notes += (f"{len(recorded.votes)} recorded vote(s) graded under votes: {spec.votes}",)
    return Judged(grading, grading.problem(), grading.error, notes, recorded)


def _word(passed: bool | None) -> str:
    return "pass" if passed else "fail" if passed is False else "error"
