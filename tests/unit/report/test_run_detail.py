"""One run as the pages show it: its title, each iteration as the loop decided it (a
failed one saying how), and the judge section built for reading."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sample_records import changed, record

from pytest_ooda.report.run_detail import iteration_story, judge_view, run_title, run_view
from pytest_ooda.results import IterationEntry


def _entry(number: int, outcome: str = "ok", **fields: object) -> IterationEntry:
    base: dict[str, object] = {"signal": None, "exit_code": 0, "duration_s": 1.0}
    return IterationEntry(number=number, outcome=outcome, **{**base, **fields})  # type: ignore[arg-type]


def test_the_title_names_scenario_variant_and_run_k_of_n() -> None:
    run = changed(record(True, run=4, runs=12), variant="opus")
    assert run_title(run) == "build/happy · opus · run 4 of 12"
    assert run_title(record(True, run=1, runs=1)) == "build/happy · run 1 of 1"


@pytest.mark.parametrize(
    ("iterations", "status", "outcome", "problems", "expected"),
    [
        # The run missed an expectation though its one iteration went on fine: the
        # iteration says so instead of "ok".
        (
            [_entry(1)],
            "success",
            "failure",
            ("file GREETING.md: expected to exist",),
            ("bad", "no signal: the loop went on; the run missed an expectation: "
             "file GREETING.md: expected to exist"),
        ),
        (
            [_entry(1), _entry(2)],
            "max-iters",
            "failure",
            (),
            ("bad", "no signal, and the iteration limit was reached (max-iters) "
             "(the scenario expects success)"),
        ),
        (
            [_entry(1, "failure", reason="exit code 2", exit_code=2)],
            "aborted",
            "failure",
            (),
            ("bad", "failed: exit code 2; it counts toward the abort threshold; the loop aborted"),
        ),
        (
            [_entry(1, "failure", reason="timed out after 5s", timed_out=True)],
            "aborted",
            "failure",
            (),
            ("bad", "failed: timed out (timed out after 5s); it counts toward the abort "
             "threshold; the loop aborted"),
        ),
        (
            [_entry(1, "success", signal="SUCCESS")],
            "success",
            "success",
            (),
            ("ok", "SUCCESS signalled: the loop stopped"),
        ),
        (
            [_entry(1, infra_error="overloaded: HTTP 529", retries=2)],
            "aborted",
            "error",
            (),
            ("bad", "infrastructure error after 3 tries: overloaded: HTTP 529"),
        ),
    ],
)  # fmt: skip
def test_each_iteration_says_what_the_loop_made_of_it(
    iterations: list[IterationEntry],
    status: str,
    outcome: str,
    problems: tuple[str, ...],
    expected: tuple[str, str],
) -> None:
    run = replace(
        record(False),
        iterations=tuple(iterations),
        status=status,
        outcome=outcome,  # type: ignore[arg-type]
        problems=problems,
    )
    assert iteration_story(run, run.iterations[-1]) == expected


def test_an_earlier_iteration_that_went_on_is_neutral() -> None:
    run = replace(record(False), iterations=(_entry(1), _entry(2)), status="max-iters")
    assert iteration_story(run, run.iterations[0]) == ("neutral", "no signal: the loop went on")


JUDGE = {
    "passed": False,
    "error": None,
    "rule": "a majority (2) of 3",
    "needed": 2,
    "pass_votes": 1,
    "agreement": 2 / 3,
    "votes": [
        {"verdict": "pass", "reason": "Names both.", "input_tokens": 1200, "output_tokens": 40,
         "cost": 0.004, "attempts": 1},
        {"verdict": "fail", "reason": "Bob is missing.", "input_tokens": 1200,
         "output_tokens": 38, "cost": 0.004, "attempts": 2},
        {"verdict": "fail", "reason": "Only Ada.", "input_tokens": 1200, "output_tokens": 30,
         "cost": 0.004, "attempts": 1, "cached": True},
    ],
    "input_tokens": 2400,
    "output_tokens": 78,
    "cost": 0.008,
    "key": "ab" * 32,
    "replayed": False,
    "rubric": "The greeting names everyone present.",
    "rubric_file": "rubrics/greeting.md",
    "judge": "anthropic:claude-haiku-4-5",
}  # fmt: skip


def test_the_judge_section_is_built_for_reading() -> None:
    view = judge_view(JUDGE)
    assert view is not None
    assert (view["verdict"], view["rule"], view["pass_votes"]) == ("fail", "a majority (2) of 3", 1)
    assert view["rubric"] == "The greeting names everyone present."
    assert view["rubric_file"] == "rubrics/greeting.md"
    assert view["who"] == "anthropic:claude-haiku-4-5"
    assert view["agreement"] == "67%"
    assert (view["tokens_in"], view["tokens_out"], view["cost"]) == ("2,400", "78", "$0.0080")
    assert view["source"] == "1 of 3 vote(s) from the cache, the others asked now"
    assert view["key"] == "ab" * 6
    votes = [(v["number"], v["verdict"], v["reason"], v["cached"]) for v in view["votes"]]
    assert votes == [
        (1, "pass", "Names both.", False),
        (2, "fail", "Bob is missing.", False),
        (3, "fail", "Only Ada.", True),
    ]
    assert view["votes"][1]["attempts"] == 2
    assert view["votes"][0]["tokens"] == "1,200 / 40"


@pytest.mark.parametrize(
    ("change", "source", "verdict"),
    [
        ({"votes": [{**vote, "cached": True} for vote in JUDGE["votes"]]},  # type: ignore[attr-defined]
         "from the cache: all 3 vote(s) answered earlier, nothing paid again", "fail"),
        ({"votes": [{"verdict": "pass", "reason": "ok"}], "passed": True},
         "asked now: no vote came from the cache", "pass"),
        ({"replayed": True}, "replayed: the verdicts recorded with the scenario, no judge asked",
         "fail"),
        ({"error": "judge error: HTTP 529", "passed": None},
         "1 of 3 vote(s) from the cache, the others asked now", "error"),
    ],
)  # fmt: skip
def test_where_the_votes_came_from(change: dict[str, object], source: str, verdict: str) -> None:
    view = judge_view({**JUDGE, **change})
    assert view is not None
    assert (view["source"], view["verdict"]) == (source, verdict)


def test_a_judge_field_of_an_older_record_has_no_rubric() -> None:
    older = {key: value for key, value in JUDGE.items() if key not in ("rubric", "judge")}
    view = judge_view(older)
    assert view is not None
    assert view["rubric"] is None
    assert judge_view(None) is None


def test_a_run_view_has_the_title_and_the_judge() -> None:
    run = replace(record(False, run=2, runs=3), judge=JUDGE)
    view = run_view(run, anchor="build/happy/2", full=True)
    assert view["title"] == "build/happy · run 2 of 3"
    assert view["judge"]["verdict"] == "fail"
    assert [item["story"][0] for item in view["iterations"]] == ["bad"]


def test_a_run_the_change_selection_ran_live_says_why() -> None:
    why = {
        "ref": "main",
        "commit": "3f2a1c0d" + "0" * 32,
        "reasons": ["observe[0] prompts/shared.md", "workspace: guests.txt"],
        "untouched": 2,
    }
    view = run_view(changed(record(True), changed=why), anchor="a", full=False)
    assert (
        "live: changed since main (3f2a1c0d)",
        "observe[0] prompts/shared.md; workspace: guests.txt",
    ) in view["facts"]
    plain = run_view(record(True), anchor="a", full=False)
    assert not [label for label, _ in plain["facts"] if label.startswith("live:")]
