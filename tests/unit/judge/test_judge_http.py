"""The judge through the ``http`` backend against a real local server: scripted
verdicts, votes and pass rules, malformed answers and HTTP 529 retried, a judge that
never answers well is an ``error``, and the grading cache proven by counting requests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from judge_server import JudgeServer, verdict

from pytest_ooda.config import ApiSettings
from pytest_ooda.judge import (
    JudgeBackendSpec,
    JudgeInputs,
    JudgeSpec,
    cache_for,
    grade,
    make_asker,
)

if TYPE_CHECKING:
    from pathlib import Path

INPUTS = JudgeInputs(output="Hello Ada and Bob.")
ENV = {"OODA_TEST_JUDGE_KEY": "k-123"}


def spec_for(server: JudgeServer, **changes: object) -> JudgeSpec:
    api = ApiSettings(
        provider="anthropic",
        model="judge-model",
        base_url=server.url,
        api_key_env="OODA_TEST_JUDGE_KEY",
        price_input_per_mtok=1.0,
        price_output_per_mtok=2.0,
    )
    base: dict[str, object] = {
        "rubric": "The greeting names everyone present.",
        "backend": JudgeBackendSpec(ai_api=api),
        "inputs": ("output",),
    }
    base.update(changes)
    return JudgeSpec(**base)  # type: ignore[arg-type]


def asked(server: JudgeServer, spec: JudgeSpec, **options: object):  # type: ignore[no-untyped-def]
    return grade(spec, INPUTS, make_asker(spec.backend, env=ENV), **options)  # type: ignore[arg-type]


def test_votes_under_each_pass_rule() -> None:
    with JudgeServer() as server:
        server.answer(verdict("pass"), verdict("fail", "Bob is missing"), verdict("pass"))
        graded = asked(server, spec_for(server, votes=3))
        assert [vote.verdict for vote in graded.votes] == ["pass", "fail", "pass"]
        assert graded.passed is True
        assert graded.agreement == pytest.approx(2 / 3)
        assert (graded.input_tokens, graded.output_tokens) == (300, 30)
        assert graded.cost == pytest.approx(3 * (100 * 1 + 10 * 2) / 1e6)
        # The request is the Anthropic Messages API with the rubric and the output.
        body = server.requests[0]
        assert body["model"] == "judge-model"
        prompt = body["messages"][0]["content"]
        assert "The greeting names everyone present." in prompt
        assert "Hello Ada and Bob." in prompt

        server.answer(verdict("pass"), verdict("fail", "Bob is missing"), verdict("pass"))
        strict = asked(server, spec_for(server, votes=3, pass_rule="all"))
        assert strict.passed is False
        assert strict.problem() == (
            "judge: 2 of 3 vote(s) passed, needed all 3 (vote 2: Bob is missing)"
        )

        server.answer(verdict("fail"), verdict("fail"), verdict("pass"))
        one = asked(server, spec_for(server, votes=3, pass_rule="at_least", at_least=1))
        assert one.passed is True


def test_malformed_answers_and_529_are_retried() -> None:
    with JudgeServer() as server:
        server.answer("Sure! The run passes.").fail(529).answer(verdict("pass", "ok"))
        graded = asked(server, spec_for(server, retries=2))
        assert graded.passed is True
        assert graded.error is None
        assert graded.votes[0].attempts == 3
        assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("The run passes.", "the answer is not JSON"),
        ('{"verdict": "yes", "reason": "fine"}', '"verdict" must be "pass" or "fail"'),
        ('{"verdict": "pass"}', '"reason" must be a non-empty string'),
        ('{"verdict": "pass", "reason": "ok", "confidence": 1}', "unexpected key(s) confidence"),
        ('["pass"]', "not a JSON object"),
    ],
)
def test_a_judge_that_never_answers_well_is_an_error(answer: str, message: str) -> None:
    with JudgeServer(default=answer) as server:
        graded = asked(server, spec_for(server, retries=1))
        assert graded.passed is None
        assert graded.error is not None
        assert message in graded.error
        assert graded.problem() is None  # an error, not a procedure failure
        assert len(server.requests) == 2


def test_http_529_every_time_is_an_error_naming_it() -> None:
    with JudgeServer() as server:
        for _ in range(3):
            server.fail(529)
        graded = asked(server, spec_for(server, retries=2))
        assert graded.passed is None
        assert graded.error is not None
        assert "HTTP 529" in graded.error


def test_gradings_are_cached_by_content(tmp_path: Path) -> None:
    cache = cache_for(tmp_path / "results")
    with JudgeServer(default=verdict("pass")) as server:
        spec = spec_for(server, votes=3)
        first = asked(server, spec, cache=cache)
        assert len(server.requests) == 3
        again = asked(server, spec, cache=cache_for(tmp_path / "results"))
        assert len(server.requests) == 3, "a second grading of the same content asks nothing"
        assert again.passed is first.passed is True
        assert all(vote.cached for vote in again.votes)
        assert again.cost is None  # nothing paid twice
        # A changed rubric is a new question for every vote; one more vote asks one more.
        asked(server, spec_for(server, votes=3, rubric="Everyone is greeted by name."), cache=cache)
        assert len(server.requests) == 6
        asked(server, spec_for(server, votes=4), cache=cache)
        assert len(server.requests) == 7


def test_an_errored_vote_is_not_cached(tmp_path: Path) -> None:
    cache = cache_for(tmp_path)
    with JudgeServer() as server:
        server.answer("no json")
        asked(server, spec_for(server, retries=0), cache=cache)
        server.answer(verdict("pass"))
        graded = asked(server, spec_for(server, retries=0), cache=cache)
        assert graded.passed is True
        assert len(server.requests) == 2


def test_the_judge_budget_stops_further_votes() -> None:
    with JudgeServer(default=verdict("pass")) as server:
        graded = asked(server, spec_for(server, votes=3), budget=0.0001)
        # The first vote costs $0.00012 and spends the budget; the rest are not asked.
        assert len(server.requests) == 1
        assert graded.passed is None
        assert graded.error is not None
        assert "budget" in graded.error


def test_a_missing_api_key_is_an_error_not_a_crash() -> None:
    with JudgeServer(default=verdict("pass")) as server:
        spec = spec_for(server)
        graded = grade(spec, INPUTS, make_asker(spec.backend, env={}))
        assert graded.error is not None
        assert "OODA_TEST_JUDGE_KEY" in graded.error
        assert server.requests == []
