"""``ooda compare --by variant``: pairwise Fisher tests per scenario, Holm's correction
checked against a hand computation, the ranking, and infrastructure errors left out."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sample_records import changed, record, write
from scipy import stats as scipy_stats

from pytest_ooda.cli import main as ooda
from pytest_ooda.report import variant_markdown
from pytest_ooda.stats.variant_comparison import compare_variants, holm

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.results import RunRecord


def runs(variant: str, ok: int, total: int, scenario: str = "happy") -> list[RunRecord]:
    return [
        changed(record(index < ok, scenario=scenario), variant=variant) for index in range(total)
    ]


def test_holm_by_hand() -> None:
    # Sorted: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> 0.06
    # (adjusted p-values never decrease along the order).
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 0.5 x 2 caps at 1; 0.9 stays below it
    assert holm([]) == []


def test_pairs_ranking_and_correction() -> None:
    records = [
        *runs("a", 18, 20),
        *runs("b", 6, 20),
        *runs("c", 10, 20),
        *runs("a", 5, 5, scenario="other"),
        *runs("b", 0, 5, scenario="other"),
    ]
    # An infrastructure error is counted apart, never as a failure.
    records.append(changed(record(False), variant="b", outcome="error", error_reason="no CLI"))
    found = compare_variants(records, alpha=0.05)
    assert [rank.variant for rank in found.ranking] == ["a", "c", "b"]
    a, _, b = found.ranking
    assert (a.pooled.runs, a.pooled.successes) == (25, 23)
    assert (b.pooled.runs, b.pooled.errors) == (25, 1)
    pairs = {(pair.scenario, pair.a, pair.b): pair for pair in found.pairs}
    assert len(pairs) == 4
    raw = [pair.p_value for pair in found.pairs]
    expected_ab = scipy_stats.fisher_exact([[18, 2], [6, 14]]).pvalue
    assert pairs[("happy", "a", "b")].p_value == pytest.approx(expected_ab)
    assert [pair.adjusted for pair in found.pairs] == pytest.approx(holm(raw))
    assert pairs[("happy", "a", "b")].winner(0.05) == "a"
    assert pairs[("happy", "b", "c")].winner(0.05) is None
    assert (a.wins, b.losses) == (
        sum(1 for p in found.pairs if p.winner(0.05) == "a"),
        sum(1 for p in found.pairs if p.winner(0.05) not in (None, "b") and "b" in (p.a, p.b)),
    )
    markdown = variant_markdown(found, title="variants")
    assert "| 1 | `a` | 25 | 92% |" in markdown
    assert "Holm-corrected" in markdown


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "r.jsonl", [*runs("fast", 9, 10), *runs("slow", 2, 10)])
    assert ooda(["compare", "--by", "variant", str(tmp_path / "r.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "20 run(s) from 1 file(s)" in out
    assert "   1  fast" in out
    assert "fast better" in out
    assert ooda(["compare", str(tmp_path / "r.jsonl")]) == 1
    assert "give BASE and NEW" in capsys.readouterr().err
