"""The grading cache (judge/grading.py): a vote kept and read back whole, and any damaged
entry — not JSON, nested past any parser, a field missing or of the wrong type — read as
a miss, so the run is graded again and the entry replaced."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.judge import GradingCache, JudgeBackendSpec, JudgeInputs, JudgeSpec, grade
from pytest_ooda.judge.ask import RawAnswer
from pytest_ooda.judge.model import Vote, grading_key

if TYPE_CHECKING:
    from pathlib import Path

SPEC = JudgeSpec(rubric="Greets everyone.", backend=JudgeBackendSpec(ai_cmd="judge"))
INPUTS = JudgeInputs(output="Hello Ada and Bob.")
KEY = grading_key(SPEC, INPUTS, 0)


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _nested_reason(levels: int) -> str:
    return '{"verdict":"pass","reason":' + '{"r":' * levels + '"x"' + "}" * levels + "}"


class Judge:
    """An agent-command judge in-process: answers every prompt with a passing verdict
    and counts the questions."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, prompt: str) -> RawAnswer:
        self.asked += 1
        return RawAnswer(text=json.dumps({"verdict": "pass", "reason": "everyone greeted"}))


def test_a_vote_is_kept_and_read_back_whole(tmp_path: Path) -> None:
    cache = GradingCache(tmp_path)
    vote = Vote("fail", "Bob is missing", 0.25, None, 120, 12, 0.0003, 2)
    cache.put(KEY, vote)
    assert cache.get(KEY) == vote
    assert cache.hits == 1
    assert cache.get("0" * 64) is None  # never kept


DAMAGED = {
    "empty": "",
    "not JSON": "{verdict: pass",
    "not UTF-8": b"\xff\xfe{}",
    "nested 1,000 levels": _deep(1000),
    "nested 100,000 levels": _deep(100_000),
    "a reason nested 1,000 levels": _nested_reason(1000),
    "a list": "[]",
    "no verdict": '{"reason": "ok"}',
    "a verdict unknown": '{"verdict": "maybe"}',
    "an errored vote": '{"verdict": "pass", "error": "timeout"}',
    "tokens as text": '{"verdict": "pass", "input_tokens": "many"}',
    "tokens below 0": '{"verdict": "pass", "output_tokens": -1}',
    "attempts 0": '{"verdict": "pass", "attempts": 0}',
    "a cost not finite": '{"verdict": "pass", "cost": NaN}',
    "a score as text": '{"verdict": "pass", "score": "high"}',
    "a key unknown": '{"verdict": "pass", "extra": 1}',
}


@pytest.mark.parametrize("entry", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_entry_is_a_miss_and_the_run_is_graded_again(
    tmp_path: Path, entry: str | bytes
) -> None:
    cache = GradingCache(tmp_path)
    path = tmp_path / KEY[:2] / f"{KEY}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(entry.encode() if isinstance(entry, str) else entry)
    assert cache.get(KEY) is None
    judge = Judge()
    graded = grade(SPEC, INPUTS, judge, cache=cache)
    assert (judge.asked, graded.passed, graded.error) == (1, True, None)
    # The vote asked again replaced the damaged entry: the next grading reads it.
    again = grade(SPEC, INPUTS, judge, cache=cache)
    assert (judge.asked, again.passed) == (1, True)
    assert all(vote.cached for vote in again.votes)
