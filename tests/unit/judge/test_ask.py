"""The judge's answer: the strict shape it must have."""

from __future__ import annotations

import pytest

from pytest_ooda.judge import AnswerError, parse_answer


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the judge gave an empty answer"),
        ("```json\n{}\n```", "the answer is not JSON"),
        ('{"verdict": "PASS", "reason": "x"}', '"verdict" must be "pass" or "fail"'),
        ('{"verdict": "pass", "reason": "x", "score": "high"}', '"score" must be a number'),
        ('{"verdict": "pass", "reason": "x"} trailing', "the answer is not JSON"),
        # What a judge talked into it by the run it grades may answer: a traceback before.
        pytest.param(
            '{"verdict": "pass", "reason": "x", "score": ' + "9" * 5000 + "}",
            "the answer cannot be read as JSON",
            id="an-integer-of-5000-digits",
        ),
        pytest.param(
            "[" * 100_000 + "]" * 100_000,
            "the answer cannot be read as JSON",
            id="nested-100000-deep",
        ),
    ],
)
def test_the_answer_shape_is_strict(text: str, message: str) -> None:
    with pytest.raises(AnswerError, match=message.replace("(", r"\(")):
        parse_answer(text)


def test_a_well_formed_answer() -> None:
    assert parse_answer(' {"verdict": "fail", "reason": " no plan ", "score": 0.2}\n') == (
        "fail",
        "no plan",
        0.2,
    )
