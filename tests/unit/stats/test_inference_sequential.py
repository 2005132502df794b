"""Early stopping's sequential test, checked by simulation, and the power figures of
``ooda compare`` checked against simulated Fisher tests."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_ooda.stats.inference import (
    STOP_ALPHA,
    Sprt,
    min_detectable_difference,
    runs_needed,
)

SEQUENCES = 10_000
#: The most runs a simulated scenario may make (its ``repeat:``).
MAX_RUNS = 60


def _simulate(sprt: Sprt, rate: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sequence: the early verdict (1 passed, 0 failed, -1 none within MAX_RUNS)
    and the runs it took."""
    rng = np.random.default_rng(seed)
    outcomes = rng.random((SEQUENCES, MAX_RUNS)) < rate
    successes = np.cumsum(outcomes, axis=1)
    failures = np.arange(1, MAX_RUNS + 1) - successes
    statistic = successes * sprt.step_success + failures * sprt.step_failure
    crossed = (statistic >= sprt.upper) | (statistic <= sprt.lower)
    stopped = crossed.any(axis=1)
    first = np.where(stopped, crossed.argmax(axis=1), MAX_RUNS - 1)
    final = statistic[np.arange(SEQUENCES), first]
    verdict = np.where(stopped, (final >= sprt.upper).astype(int), -1)
    return verdict, first + 1


@pytest.mark.parametrize("minimum", [0.5, 0.8, 0.9])
def test_wrong_early_verdicts_stay_within_alpha(
    minimum: float, record_property: pytest.RecordProperty
) -> None:
    sprt = Sprt(minimum)
    # Below the indifference zone an early "passed" is wrong, above it an early "failed".
    cases = [
        (sprt.low, 1),
        (max(0.01, sprt.low - sprt.margin), 1),
        (sprt.high, 0),
        (min(0.99, sprt.high + sprt.margin), 0),
    ]
    report = []
    for seed, (rate, wrong) in enumerate(cases):
        verdict, runs = _simulate(sprt, rate, seed)
        wrong_rate = float(np.mean(verdict == wrong))
        # Wald's bound is alpha/(1 - beta); the binomial noise of 10,000 sequences is
        # about 0.002 at these rates.
        assert wrong_rate <= STOP_ALPHA / (1 - STOP_ALPHA) + 0.005, (minimum, rate, wrong_rate)
        saved = MAX_RUNS - float(np.mean(np.where(verdict >= 0, runs, MAX_RUNS)))
        report.append(f"rate {rate:.2f}: wrong {wrong_rate:.4f}, runs saved {saved:.1f}/{MAX_RUNS}")
        # Far from the minimum the test settles long before MAX_RUNS.
        if abs(rate - minimum) >= 2 * sprt.margin - 1e-9:
            assert saved > MAX_RUNS / 3
    record_property("early_stopping", "; ".join(report))
    print(f"min {minimum}: " + "; ".join(report))


def test_the_sprt_settles_obvious_cases_and_waits_on_close_ones() -> None:
    sprt = Sprt(0.8)
    assert (sprt.low, sprt.high) == pytest.approx((0.7, 0.9))
    assert sprt.decide(0, 0) is None
    assert sprt.decide(30, 0) is True
    assert sprt.decide(0, 5) is False
    assert sprt.decide(8, 2) is None
    # The zone narrows near the ends so both hypotheses stay proper rates.
    assert Sprt(0.95).high < 1
    with pytest.raises(ValueError, match="minimum"):
        Sprt(1.0)


def _fisher_power(base: float, new: float, runs: int, alpha: float, seed: int) -> float:
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(seed)
    a = rng.binomial(runs, base, 400)
    c = rng.binomial(runs, new, 400)
    rejected = sum(
        scipy_stats.fisher_exact([[x, runs - x], [y, runs - y]]).pvalue < alpha
        for x, y in zip(a, c, strict=True)
    )
    return rejected / 400


def test_minimum_detectable_difference_is_about_80_percent_power() -> None:
    # 5 runs against 10: only a huge drop could have shown.
    small = min_detectable_difference(5, 10, 1.0)
    assert small is not None
    assert small > 0.45
    # With 60 runs a side from 85%, the stated difference is detected about 80% of the
    # time (Fisher's test is a little more conservative than the approximation).
    difference = min_detectable_difference(60, 60, 0.85)
    assert difference is not None
    power = _fisher_power(0.85, 0.85 - difference, 60, 0.05, seed=1)
    assert 0.65 <= power <= 0.9, power
    assert min_detectable_difference(0, 10, 0.5) is None


def test_runs_needed_to_detect_a_difference() -> None:
    needed = runs_needed(0.8, 0.2)
    assert needed is not None
    assert 50 <= needed <= 90
    assert runs_needed(0.8, 0.4) < needed  # type: ignore[operator]
    power = _fisher_power(0.8, 0.6, needed, 0.05, seed=2)
    assert 0.65 <= power <= 0.92, power
    # Both directions impossible: no number of runs helps.
    assert runs_needed(0.5, 0.9) is None
    with pytest.raises(ValueError, match="difference"):
        runs_needed(0.5, 0)
