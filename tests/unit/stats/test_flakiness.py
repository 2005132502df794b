"""A scenario across sessions: stable-pass, flaky, stable-fail over its current prompt's
runs, and a change point where an unchanged prompt's rate moved."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sample_records import changed, record

from pytest_ooda.stats import history

if TYPE_CHECKING:
    from pytest_ooda.results import RunRecord


def session(
    name: str,
    day: int,
    successes: int,
    runs: int,
    *,
    prompt: str = "a" * 64,
    model: str = "model-1",
    commit: str = "c" * 40,
    scenario: str = "happy",
    errors: int = 0,
) -> list[RunRecord]:
    out = []
    for k in range(runs + errors):
        made = record(
            k < successes,
            scenario=scenario,
            run=k + 1,
            runs=runs,
            prompt=prompt,
            session=name,
            finished_at=f"2025-06-{day:02d}T10:{k:02d}:00+00:00",
            outcome="error" if k >= runs else None,
        )
        out.append(changed(made, model=model, git_commit=commit))
    return out


def test_every_run_passing_is_stable_pass_and_none_is_stable_fail() -> None:
    records = [*session("s1", 1, 5, 5), *session("s2", 2, 6, 6)]
    records += session("s1", 1, 0, 5, scenario="sad") + session("s2", 2, 0, 5, scenario="sad")
    happy, sad = history(records)
    assert (happy.label, happy.state, happy.successes, happy.valid) == (
        "build/happy",
        "stable-pass",
        11,
        11,
    )
    assert [point.session for point in happy.points] == ["s1", "s2"]
    assert sad.state == "stable-fail"
    assert sad.rate == 0.0
    assert happy.note().startswith("stable-pass: 100% (11/11, 95% CI 74%–100%) over 2 session(s)")


def test_rates_like_66_69_74_percent_are_one_flaky_scenario_without_a_change_point() -> None:
    records = [*session("s1", 1, 23, 35), *session("s2", 2, 24, 35), *session("s3", 3, 26, 35)]
    (item,) = history(records)
    assert item.state == "flaky"
    assert item.change_point is None
    assert (item.successes, item.valid, item.since) == (73, 105, 0)
    low, high = item.interval
    assert low < 0.7 < high


def test_an_unchanged_prompt_whose_rate_moves_has_a_change_point() -> None:
    records = [*session("s1", 1, 10, 10), *session("s2", 2, 10, 10), *session("s3", 3, 9, 10)]
    records += session("s4", 4, 2, 10, model="model-2", commit="d" * 40)
    records += session("s5", 5, 3, 10, model="model-2", commit="d" * 40)
    (item,) = history(records)
    change = item.change_point
    assert change is not None
    assert change.index == 3
    assert item.since == 3
    assert change.before == (29, 30)
    assert change.after == (5, 20)
    assert change.p_value < 0.05
    assert change.differs == ("agent model-1 -> model-2", "commit cccccccc -> dddddddd")
    assert item.state == "flaky"
    assert (item.successes, item.valid) == (5, 20)


def test_a_small_wobble_is_no_change_point_after_the_correction() -> None:
    records = [*session("s1", 1, 8, 10), *session("s2", 2, 6, 10), *session("s3", 3, 7, 10)]
    assert history(records)[0].change_point is None


def test_a_new_prompt_starts_a_new_regime() -> None:
    records = [*session("s1", 1, 0, 5), *session("s2", 2, 0, 5)]
    records += session("s3", 3, 5, 5, prompt="b" * 64) + session("s4", 4, 5, 5, prompt="b" * 64)
    (item,) = history(records)
    assert item.prompt_changes == (2,)
    assert item.since == 2
    assert item.state == "stable-pass"
    assert item.change_point is None


def test_errors_are_left_out_and_few_runs_say_so() -> None:
    (item,) = history(session("s1", 1, 2, 3, errors=4))
    assert item.points[0].errors == 4
    assert item.points[0].valid == 3
    assert item.state == "too-few-runs"
    assert item.note() == "too few runs to say (3 valid over 1 session(s))"


def test_a_new_side_is_judged_against_the_history_broke_noise_or_better() -> None:
    # 66 %, 69 %, 74 %: a flaky scenario; 6 of 10 is within its noise, 1 of 10 broke it.
    records = [*session("s1", 1, 23, 35), *session("s2", 2, 24, 35), *session("s3", 3, 26, 35)]
    (flaky,) = history(records)
    noise = flaky.judge(6, 10)
    assert noise is not None
    assert (noise.call, noise.successes, noise.valid) == ("within noise", 6, 10)
    assert noise.p_value > 0.05
    broke = flaky.judge(1, 10)
    assert broke is not None
    assert broke.call == "broke"
    assert broke.p_value < 0.05
    assert broke.rate == 0.1
    # A stable failure that now passes is better; nothing new, or too little history,
    # says nothing.
    (failing,) = history([*session("s1", 1, 0, 10), *session("s2", 2, 0, 10)])
    better = failing.judge(9, 10)
    assert better is not None
    assert better.call == "better"
    assert failing.judge(0, 0) is None
    (few,) = history(session("s1", 1, 2, 3))
    assert few.judge(0, 10) is None
