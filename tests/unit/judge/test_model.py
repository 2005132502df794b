"""Votes combined by the pass rules, and judge errors."""

from __future__ import annotations

from pytest_ooda.judge import Vote
from pytest_ooda.judge.model import combine

from .helpers import spec


def test_pass_rules_and_errors() -> None:
    passing, failing = Vote("pass", "ok"), Vote("fail", "no")
    assert combine(spec(), (passing, failing, passing)).passed is True
    assert combine(spec(), (passing, failing, failing)).passed is False
    assert combine(spec(4), (passing, passing, failing, failing)).passed is False  # 3 needed
    assert combine(spec(pass_rule="all"), (passing, passing, failing)).passed is False
    errored = combine(spec(), (passing, Vote(None, error="HTTP 529 Overloaded"), passing))
    assert (errored.passed, errored.error) == (None, "judge error: HTTP 529 Overloaded")
