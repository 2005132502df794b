"""Statistics for repeated runs, checked against scipy (a test-only dependency) and
published values."""

from __future__ import annotations

import itertools

import pytest
from scipy import stats as scipy_stats

from pytest_ooda.stats import fisher_exact, pass_at_k, pass_hat_k, wilson_interval


@pytest.mark.parametrize(
    ("successes", "runs"), [(0, 1), (0, 20), (7, 20), (20, 20), (1, 3), (50, 100)]
)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_scipy(successes: int, runs: int, confidence: float) -> None:
    expected = scipy_stats.binomtest(successes, runs).proportion_ci(confidence, method="wilson")
    low, high = wilson_interval(successes, runs, confidence)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)


def test_wilson_without_runs_knows_nothing() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_fisher_matches_scipy_on_every_small_table() -> None:
    for a, b, c, d in itertools.product(range(7), repeat=4):
        expected = scipy_stats.fisher_exact([[a, b], [c, d]]).pvalue
        assert fisher_exact(a, b, c, d) == pytest.approx(expected, rel=1e-9, abs=1e-12), (
            a,
            b,
            c,
            d,
        )


@pytest.mark.parametrize(
    "table", [(18, 2, 9, 11), (20, 0, 12, 8), (45, 5, 38, 12), (3, 17, 10, 10)]
)
def test_fisher_matches_scipy_on_run_sized_tables(table: tuple[int, int, int, int]) -> None:
    expected = scipy_stats.fisher_exact([table[:2], table[2:]]).pvalue
    assert fisher_exact(*table) == pytest.approx(expected, rel=1e-9)


def test_pass_at_k_and_pass_hat_k() -> None:
    # The HumanEval estimator's closed form, and its limits.
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 8, 3) == 1.0  # fewer than 3 failures: one of any 3 succeeds
    assert pass_hat_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_hat_k(10, 7, 3) == pytest.approx(35 / 120)
    assert pass_hat_k(10, 10, 10) == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: wilson_interval(5, 3), "successes <= runs"),
        (lambda: wilson_interval(1, 3, 1.5), "confidence"),
        (lambda: pass_at_k(3, 1, 4), "k <= runs"),
        (lambda: fisher_exact(-1, 0, 0, 0), ">= 0"),
    ],
)
def test_bad_arguments_say_what_was_expected(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
