"""Model-graded outcomes: ``expect.judge`` rubrics graded after a run, with votes, a
content-addressed grading cache, verdicts kept in recordings for offline replay, and
calibration against labelled examples (``ooda judge check``).

:mod:`.model` (the data), :mod:`.schema` (reading ``expect.judge``), :mod:`.inputs`
(what the judge sees of a run), :mod:`.ask` (the prompt, the strict answer shape, the
HTTP and agent-command judges), :mod:`.grading` (votes, cache, budget), :mod:`.calibration`
(accuracy, agreement, Cohen's kappa) and :mod:`.run` (grading a finished run: the one
path the live run and the replay share).
"""

from __future__ import annotations

from pytest_ooda.judge.ask import (
    AnswerError,
    judge_prompt,
    make_asker,
    parse_answer,
)
from pytest_ooda.judge.calibration import (
    Calibration,
    calibrate,
    cohens_kappa,
    render,
)
from pytest_ooda.judge.grading import (
    GradingCache,
    cache_for,
    grade,
    replay_grading,
)
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
from pytest_ooda.judge.run import (
    JudgeContext,
    Judged,
    judge_live,
    judge_places,
    judge_replay,
    run_inputs,
)
from pytest_ooda.judge.schema import (
    MAX_JUDGE_FILE_BYTES,
    load_examples,
    read_examples,
    read_judge,
)

__all__ = [
    "MAX_JUDGE_FILE_BYTES",
    "AnswerError",
    "Calibration",
    "Grading",
    "GradingCache",
    "JudgeBackendSpec",
    "JudgeContext",
    "JudgeInputs",
    "JudgeSpec",
    "Judged",
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
    "judge_live",
    "judge_places",
    "judge_prompt",
    "judge_replay",
    "load_examples",
    "make_asker",
    "parse_answer",
    "read_examples",
    "read_judge",
    "render",
    "replay_grading",
    "run_inputs",
    "workspace_diff",
]
