"""Leave-one-out ablation judged over paired runs: keep what the full prompt needs,
cut what costs less than the margin, can't tell (with the runs it needs) otherwise."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sample_records import changed, record

from pytest_ooda.backends import Usage
from pytest_ooda.results import FragmentHash, RunRecord
from pytest_ooda.stats import ablation, arm_name, looks, place_of

FRAGMENTS = (
    FragmentHash("observe", 0, "prompts/key.md", "a" * 64),
    FragmentHash("observe", 1, "prompts/inert.md", "b" * 64),
    FragmentHash("act", 0, "inline", "c" * 64),
)


def arm(
    variant: str, outcomes: list[bool], *, tokens: int = 1000, runs: int = 30
) -> list[RunRecord]:
    return [
        changed(
            record(ok, scenario="one", procedure="fix", run=k, runs=runs),
            variant=variant,
            fragments=FRAGMENTS,
            usage=Usage(input_tokens=tokens, output_tokens=10, cost=0.01),
        )
        for k, ok in enumerate(outcomes, start=1)
    ]


def test_arm_names_and_places_go_both_ways() -> None:
    assert arm_name("observe[1]") == "without.observe.1"
    assert arm_name("act") == "without.act"
    assert place_of("without.observe.1") == "observe[1]"
    assert place_of("without.act") == "act"
    assert place_of("full") is None
    assert place_of("without.nowhere") is None
    assert looks(30) == (5, 10, 20, 30)
    assert looks(5) == (5,)
    assert looks(3) == (3,)


def test_the_decisive_fragment_is_keep_and_the_inert_ones_cut() -> None:
    records = arm("full", [True] * 30, tokens=1200)
    records += arm("without.observe.0", [False] * 10, tokens=1150)
    records += arm("without.observe.1", [True] * 30, tokens=1180)
    records += arm("without.act.0", [True] * 30, tokens=1190)
    (found,) = ablation(records, margin=0.1)
    assert found.label == "fix/one"
    by_place = {item.place: item for item in found.arms}
    assert [item.place for item in found.arms] == ["observe[0]", "observe[1]", "act[0]"]
    key = by_place["observe[0]"]
    assert (key.verdict, key.source, key.pairs, key.only_full) == ("keep", "prompts/key.md", 10, 10)
    assert key.difference == 1.0
    assert key.adjusted < found.level
    assert key.tokens == pytest.approx(50.0)
    assert not key.tokens_estimated
    inert = by_place["observe[1]"]
    assert inert.verdict == "cut"
    assert inert.interval[1] < 0.1
    assert inert.tokens == pytest.approx(20.0)
    assert by_place["act[0]"].verdict == "cut"
    assert found.level == pytest.approx(0.05 / 4)
    assert found.confidence == pytest.approx(1 - 0.05 / 4 / 3)


def test_too_few_pairs_cannot_tell_and_say_how_many_more() -> None:
    records = arm("full", [True] * 5, runs=30) + arm("without.observe.1", [True] * 5, runs=30)
    (found,) = ablation(records, margin=0.1)
    (item,) = found.arms
    assert item.verdict == "can't tell"
    assert item.more_runs is not None
    assert item.more_runs > 5
    assert item.verdict_text() == f"can't tell yet ({item.more_runs} more runs needed)"


def test_only_valid_pairs_count_and_a_fragment_that_hurts_is_cut() -> None:
    full = arm("full", [False] * 20)
    full[0] = replace(full[0], outcome="error")
    records = full + arm("without.observe.1", [True] * 20)
    (found,) = ablation(records, margin=0.1, planned=20)
    (item,) = found.arms
    assert item.pairs == 19
    assert item.only_without == 19
    assert item.verdict == "cut"
    assert item.interval[1] < 0


def test_tokens_are_estimated_from_the_transcript_without_usage() -> None:
    transcript = {"prompt": [{"source": "prompts/inert.md", "text": "x" * 400}]}
    full = [replace(r, usage=None, transcript=transcript) for r in arm("full", [True] * 5)]
    without = [replace(r, usage=None) for r in arm("without.observe.1", [True] * 5)]
    (found,) = ablation(full + without)
    (item,) = found.arms
    assert item.tokens == 100
    assert item.tokens_estimated


def test_sessions_without_a_full_arm_are_no_ablation() -> None:
    assert ablation(arm("opus", [True] * 3) + arm("without.act", [True] * 3)) == []
