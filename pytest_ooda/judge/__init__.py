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
    from pytest_ooda.judge.ask import AnswerError as AnswerError
    from pytest_ooda.judge.ask import judge_prompt as judge_prompt
    from pytest_ooda.judge.ask import make_asker as make_asker
    from pytest_ooda.judge.ask import parse_answer as parse_answer
    from pytest_ooda.judge.calibration import Calibration as Calibration
    from pytest_ooda.judge.calibration import calibrate as calibrate
    from pytest_ooda.judge.calibration import cohens_kappa as cohens_kappa
    from pytest_ooda.judge.calibration import render as render
    from pytest_ooda.judge.grading import GradingCache as GradingCache
    from pytest_ooda.judge.grading import cache_for as cache_for
    from pytest_ooda.judge.grading import grade as grade
    from pytest_ooda.judge.grading import replay_grading as replay_grading
    from pytest_ooda.judge.inputs import gather as gather
    from pytest_ooda.judge.inputs import workspace_diff as workspace_diff
    from pytest_ooda.judge.model import Grading as Grading
    from pytest_ooda.judge.model import JudgeBackendSpec as JudgeBackendSpec
    from pytest_ooda.judge.model import JudgeInputs as JudgeInputs
    from pytest_ooda.judge.model import JudgeSpec as JudgeSpec
    from pytest_ooda.judge.model import LabelledExample as LabelledExample
    from pytest_ooda.judge.model import RecordedGrading as RecordedGrading
    from pytest_ooda.judge.model import Vote as Vote
    from pytest_ooda.judge.model import grading_key as grading_key
    from pytest_ooda.judge.model import inputs_key as inputs_key
    from pytest_ooda.judge.run import JudgeContext as JudgeContext
    from pytest_ooda.judge.run import Judged as Judged
    from pytest_ooda.judge.run import judge_live as judge_live
    from pytest_ooda.judge.run import judge_replay as judge_replay
    from pytest_ooda.judge.run import run_inputs as run_inputs
    from pytest_ooda.judge.schema import MAX_JUDGE_FILE_BYTES as MAX_JUDGE_FILE_BYTES
    from pytest_ooda.judge.schema import read_examples as read_examples
    from pytest_ooda.judge.schema import read_judge as read_judge
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
