"""Intervals of a difference of success rates (two samples: Newcombe's hybrid score;
paired runs: Agresti and Min) and McNemar's exact test, held to published values and
to scipy."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from pytest_ooda.stats import difference_interval, mcnemar_exact, paired_difference_interval


def test_newcombe_hybrid_score_interval_matches_his_published_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, example (a): 56/70 against 48/80,
    # method 10: 0.0524 to 0.3339 for p1 - p2.
    low, high = difference_interval(48, 80, 56, 70)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


def test_the_difference_interval_stays_in_range_and_widens_with_confidence() -> None:
    assert difference_interval(0, 5, 5, 5)[1] <= 1.0
    assert difference_interval(5, 5, 0, 5)[0] >= -1.0
    narrow = difference_interval(17, 20, 9, 20, 0.9)
    wide = difference_interval(17, 20, 9, 20, 0.99)
    assert wide[0] < narrow[0] < -0.4 < narrow[1] < wide[1]
    assert difference_interval(0, 0, 3, 4) == (-1.0, 1.0)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (5, 0), (7, 2), (3, 3), (0, 12), (20, 9)])
def test_mcnemar_exact_is_the_binomial_test_of_the_disagreeing_pairs(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else scipy_stats.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected)


def test_agresti_min_adds_half_a_pair_to_each_cell() -> None:
    # 30 pairs, 8 only-first, 2 only-second: adjusted n 32, cells 8.5 and 2.5.
    n, b, c = 32, 8.5, 2.5
    change = (b - c) / n
    half = 1.959963984540054 * math.sqrt((b + c) - (b - c) ** 2 / n) / n
    low, high = paired_difference_interval(30, 8, 2)
    assert (low, high) == pytest.approx((change - half, change + half))


def test_pairs_that_all_agree_still_bound_the_difference() -> None:
    low, high = paired_difference_interval(40, 0, 0, 0.99)
    assert low == -high
    assert 0 < high < 0.07
    assert paired_difference_interval(0, 0, 0) == (-1.0, 1.0)
    assert paired_difference_interval(10, 10, 0)[1] == 1.0
    with pytest.raises(ValueError, match="disagreeing pairs"):
        paired_difference_interval(3, 2, 2)
