"""A/B comparison: p-values from scipy, verdicts, fragments that changed."""

from __future__ import annotations

import pytest
from sample_records import record, sample
from scipy import stats as scipy_stats

from pytest_ooda.stats import compare


@pytest.mark.parametrize(
    ("base", "new", "verdict"),
    [
        ((18, 20), (9, 20), "regressed"),
        ((9, 20), (18, 20), "improved"),
        ((15, 20), (13, 20), "inconclusive"),
        ((10, 20), (10, 20), "inconclusive"),
        ((20, 20), (0, 3), "regressed"),
    ],
)
def test_verdicts_follow_fishers_exact_test(
    base: tuple[int, int], new: tuple[int, int], verdict: str
) -> None:
    result = compare(sample(*base), sample(*new))
    [item] = result.scenarios
    expected = scipy_stats.fisher_exact(
        [[base[0], base[1] - base[0]], [new[0], new[1] - new[0]]]
    ).pvalue
    assert item.p_value == pytest.approx(expected, rel=1e-9)
    assert item.verdict == verdict
    assert item.rate_change == pytest.approx(new[0] / new[1] - base[0] / base[1])
    assert result.regressed == ((item,) if verdict == "regressed" else ())


def test_alpha_decides_significance() -> None:
    base, new = sample(16, 20), sample(9, 20)
    [item] = compare(base, new).scenarios
    assert item.p_value is not None
    assert 0.01 < item.p_value < 0.05
    assert item.verdict == "regressed"
    assert compare(base, new, alpha=0.01).scenarios[0].verdict == "inconclusive"
    with pytest.raises(ValueError, match="alpha must be between 0 and 1"):
        compare(base, new, alpha=1.5)


def test_scenarios_on_one_side_only() -> None:
    result = compare(sample(1, 2, scenario="old"), sample(1, 2, scenario="fresh"))
    assert [(item.label, item.verdict, item.p_value) for item in result.scenarios] == [
        ("build/fresh", "new-only", None),
        ("build/old", "base-only", None),
    ]
    assert result.scenarios[0].rate_change is None
    assert result.scenarios[0].prompt_changed is None


def test_iterations_cost_and_changed_fragments() -> None:
    base = sample(5, 5, iterations=2, cost=0.10)
    new = sample(5, 5, iterations=3, cost=0.25, fragment="b" * 64, prompt="q" * 64)
    [item] = compare(base, new).scenarios
    assert item.iterations_change == pytest.approx(1.0)
    assert item.cost_change == pytest.approx(0.15)
    assert item.prompt_changed is True
    assert item.changed_fragments == ("observe[0] prompts/look.md",)
    [same] = compare(base, sample(5, 5)).scenarios
    assert same.prompt_changed is False
    assert same.changed_fragments == ()
    assert same.cost_change is None  # the new side reported no cost


def test_records_of_other_scenarios_do_not_mix() -> None:
    base = [*sample(10, 10), *sample(0, 10, scenario="other")]
    new = [*sample(10, 10), *sample(10, 10, scenario="other")]
    verdicts = {item.label: item.verdict for item in compare(base, new).scenarios}
    assert verdicts == {"build/happy": "inconclusive", "build/other": "improved"}
    assert record(True).label == "build/happy"
