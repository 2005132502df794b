"""Model-graded outcomes: ``expect.judge`` rubrics graded after a run, with votes, a
content-addressed grading cache, verdicts kept in recordings for offline replay, and
calibration against labelled examples (``ooda judge check``).

:mod:`.model` (the data), :mod:`.schema` (reading ``expect.judge``), :mod:`.inputs`
(what the judge sees of a run), :mod:`.ask` (the prompt, the strict answer shape, the
HTTP and agent-command judges), :mod:`.grade` (votes, cache, budget), :mod:`.calibration`
(accuracy, agreement, Cohen's kappa) and :mod:`.run` (grading a finished run: the one
path the live run and the replay share).
"""

from __future__ import annotations

from pytest_ooda.judge.ask import AnswerError, judge_prompt, make_asker, parse_answer
from pytest_ooda.judge.calibration import Calibration, calibrate, cohens_kappa
from pytest_ooda.judge.grade import GradingCache, cache_for, grade, replay_grading
from pytest_ooda.judge.inputs import gather, workspace_diff
from pytest_ooda.judge.model import (
    Grading,
    JudgeBackendSpec,
    JudgeInputs,
    JudgeSpec,
    LabelledExample,
    RecordedGrading,
    Vote,
    grading_key,
    inputs_key,
)

__all__ = [
    "AnswerError",
    "Calibration",
    "Grading",
    "GradingCache",
    "JudgeBackendSpec",
    "JudgeInputs",
    "JudgeSpec",
    "LabelledExample",
    "RecordedGrading",
    "Vote",
    "cache_for",
    "calibrate",
    "cohens_kappa",
    "gather",
    "grade",
    "grading_key",
    "inputs_key",
    "judge_prompt",
    "make_asker",
    "parse_answer",
    "replay_grading",
    "workspace_diff",
]
