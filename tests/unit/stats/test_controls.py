"""``stats.controls``: a positive control fails when its gates do (or, without gates,
when any run did not succeed), and then the other scenarios of its variant are blocked:
their gates and comparisons say the harness could not observe the behaviour."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sample_records import changed, sample

from pytest_ooda.stats import check_gates, compare, compare_variants, harness_blind, summarize

if TYPE_CHECKING:
    from pytest_ooda.results import RunRecord

GATE = {"success_rate": {"min": 0.8}}


def _control(successes: int, runs: int, **options: object) -> list[RunRecord]:
    return [
        changed(item, control=True)
        for item in sample(successes, runs, scenario="smoke", **options)  # type: ignore[arg-type]
    ]


def test_a_failed_control_blocks_the_other_scenarios_gates() -> None:
    records = [*sample(5, 5, gates=GATE), *_control(4, 5)]
    happy, smoke = summarize(records)
    assert smoke.control
    assert smoke.control_failed == (
        "1 of 5 run(s) did not succeed: success 4, failure 1 (max-iters 1)"
    )
    assert happy.blocked_by == ("build/smoke",)
    assert harness_blind(happy) == (
        "the harness could not observe the behaviour: control build/smoke failed"
    )
    assert check_gates(happy) == [
        "inconclusive: the harness could not observe the behaviour: control build/smoke failed"
    ]


def test_a_control_with_gates_fails_only_when_they_do() -> None:
    records = [*sample(5, 5, gates=GATE), *_control(4, 5, gates=GATE)]
    happy, smoke = summarize(records)
    assert smoke.control_failed is None
    assert happy.blocked_by == ()
    failing = [*sample(5, 5, gates=GATE), *_control(3, 5, gates=GATE)]
    happy, smoke = summarize(failing)
    assert smoke.control_failed is not None
    assert "success rate 60%" in smoke.control_failed
    assert happy.blocked_by == ("build/smoke",)


def test_an_error_fails_a_control_and_only_its_variant_is_blocked() -> None:
    records = [
        *(changed(item, variant="a") for item in sample(5, 5, gates=GATE)),
        *(changed(item, variant="b") for item in sample(5, 5, gates=GATE)),
        *(changed(item, variant="a") for item in _control(1, 1)),
        *(
            changed(item, variant="b", outcome="error", error_reason="auth: Not logged in")
            for item in _control(0, 1)
        ),
    ]
    by_label = {stats.label: stats for stats in summarize(records)}
    assert by_label["build/happy@a"].blocked_by == ()
    assert by_label["build/happy@b"].blocked_by == ("build/smoke@b",)
    assert "error 1" in (by_label["build/smoke@b"].control_failed or "")


def test_a_comparison_with_a_failed_control_is_inconclusive_whatever_the_rates() -> None:
    base = [*sample(5, 5), *_control(1, 1)]
    new = [*sample(0, 5), *_control(0, 1)]
    comparison = compare(base, new)
    happy, smoke = comparison.scenarios
    assert happy.verdict == smoke.verdict == "inconclusive"
    assert happy.harness == (
        "the harness could not observe the behaviour: control build/smoke failed (new)"
    )
    assert comparison.regressed == ()
    assert comparison.blind == (happy, smoke)
    # Without the control the same runs regressed.
    assert compare(sample(5, 5), sample(0, 5)).scenarios[0].verdict == "regressed"


def test_variant_pairs_with_a_blocked_side_have_no_winner() -> None:
    records = [
        *(changed(item, variant="a") for item in sample(10, 10)),
        *(changed(item, variant="b") for item in sample(0, 10)),
        *(changed(item, variant="b") for item in _control(0, 1)),
    ]
    comparison = compare_variants(records)
    [pair] = [pair for pair in comparison.pairs if pair.scenario == "happy"]
    assert pair.blind == (
        "the harness could not observe the behaviour: control build/smoke@b failed (b)"
    )
    assert pair.winner(0.05) is None
