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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.judge.ask import (
        AnswerError as AnswerError,
        judge_prompt as judge_prompt,
        make_asker as make_asker,
        parse_answer as parse_answer,
    )
    from pytest_ooda.judge.calibration import (
        Calibration as Calibration,
        calibrate as calibrate,
        cohens_kappa as cohens_kappa,
        render as render,
    )
    from pytest_ooda.judge.grading import (
        GradingCache as GradingCache,
        cache_for as cache_for,
        grade as grade,
        replay_grading as replay_grading,
    )
    from pytest_ooda.judge.inputs import gather as gather, workspace_diff as workspace_diff
    from pytest_ooda.judge.model import (
        Grading as Grading,
        JudgeBackendSpec as JudgeBackendSpec,
        JudgeInputs as JudgeInputs,
        JudgeSpec as JudgeSpec,
        LabelledExample as LabelledExample,
        RecordedGrading as RecordedGrading,
        Vote as Vote,
        grading_key as grading_key,
        inputs_key as inputs_key,
    )
    from pytest_ooda.judge.run import (
        JudgeContext as JudgeContext,
        Judged as Judged,
        judge_live as judge_live,
        judge_replay as judge_replay,
        run_inputs as run_inputs,
    )
    from pytest_ooda.judge.schema import (
        MAX_JUDGE_FILE_BYTES as MAX_JUDGE_FILE_BYTES,
        read_examples as read_examples,
        read_judge as read_judge,
    )
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
