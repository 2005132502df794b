"""What fired, measured: each assertion's pass rate and interval, a trigger set's recall
and precision with what fired instead, and a variant pair's lift with Newcombe's
interval (checked against his published example)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sample_records import changed, record

from pytest_ooda.report import variant_markdown
from pytest_ooda.report.render_fired import fired_lines, lift_text
from pytest_ooda.report.render_text import notes, variant_table
from pytest_ooda.results import AssertionEntry, FragmentHash, RunRecord, trigger_entry
from pytest_ooda.stats import compare_variants, difference_interval, summarize


def test_newcombe_s_hybrid_score_interval() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, table II, example (a): 56/70 vs
    # 48/80, method 10 (score, no continuity correction): 0.0524 to 0.3339.
    low, high = difference_interval(48, 80, 56, 70)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    assert difference_interval(0, 0, 3, 5) == (-1.0, 1.0)
    low, high = difference_interval(10, 10, 10, 10)
    assert low < 0 < high


def _asserted(ok: bool, *entries: tuple[str, bool], **fields: object) -> RunRecord:
    assertions = tuple(AssertionEntry(name, passed) for name, passed in entries)
    return changed(record(ok), assertions=assertions, **fields)


def test_each_assertion_gets_its_own_rate_and_interval() -> None:
    records = [
        *(
            _asserted(True, ("skill greet fired", True), ("trajectory ordered: Write", True))
            for _ in range(7)
        ),
        *(
            _asserted(False, ("skill greet fired", False), ("trajectory ordered: Write", True))
            for _ in range(3)
        ),
        replace(_asserted(False, ("skill greet fired", False)), outcome="error"),
    ]
    (stats,) = summarize(records)
    by_name = {item.name: item for item in stats.assertions}
    greet = by_name["skill greet fired"]
    assert (greet.passed, greet.runs) == (7, 10)  # the error run measured nothing
    assert [round(x, 2) for x in greet.interval] == [0.40, 0.89]
    assert fired_lines(stats) == [
        "build/happy: skill greet fired: 7/10 70% (40%–89%)",
        "build/happy: trajectory ordered: Write: 10/10 100% (72%–100%)",
    ]
    assert fired_lines(stats)[0] in notes([stats])


def _case(should: bool, fired: bool, *activations: str) -> RunRecord:
    name = "skill greet fired" if should else "skill greet not_fired"
    trigger = trigger_entry("skill greet", "should-1" if should else "should-not-1", should, "p")
    ok = fired == should
    return _asserted(ok, (name, ok), trigger=trigger, activations=activations)


def test_a_trigger_set_s_recall_precision_and_what_fired_instead() -> None:
    records = [
        *(_case(True, True, "skill:greet") for _ in range(7)),
        *(_case(True, False, "skill:farewell") for _ in range(2)),
        _case(True, False),
        _case(False, True, "skill:greet"),
        *(_case(False, False) for _ in range(9)),
    ]
    (stats,) = summarize(records)
    triggers = stats.triggers
    assert triggers is not None
    assert (triggers.hits, triggers.misses, triggers.false_alarms, triggers.quiet) == (7, 3, 1, 9)
    assert triggers.recall == pytest.approx(0.7)
    assert triggers.precision == pytest.approx(7 / 8)
    assert dict(triggers.instead) == {"skill:farewell": 2}
    assert fired_lines(stats)[0] == (
        "build/happy: triggers of skill greet: recall 7/10 70% (40%–89%), precision 7/8 88% "
        "(53%–98%); fired instead: skill:farewell 2"
    )
    quiet = summarize([_case(False, False)])[0].triggers
    assert quiet is not None
    assert quiet.precision is None
    assert summarize([record(True)])[0].triggers is None


def _lift_runs(variant: str, ok: int, total: int, material: bool) -> list[RunRecord]:
    fragments = (FragmentHash("observe", 0, "p.md", "a" * 64),)
    if material:
        fragments += (FragmentHash("claude", 0, ".claude/skills/greet/SKILL.md", "b" * 64),)
    return [
        changed(record(index < ok), variant=variant, fragments=fragments) for index in range(total)
    ]


def test_the_variant_report_leads_with_the_lift_of_the_material() -> None:
    records = [*_lift_runs("a-with", 9, 10, True), *_lift_runs("b-without", 3, 10, False)]
    comparison = compare_variants(records)
    (pair,) = comparison.pairs
    # The run without the material is the baseline, whatever the names sort to.
    assert (pair.a, pair.b) == ("b-without", "a-with")
    difference, (low, high) = pair.lift
    assert difference == pytest.approx(0.6)
    assert (low, high) == difference_interval(3, 10, 9, 10)
    assert lift_text(pair) == "lift of a-with over b-without: +60 pp (95% CI +17 to +81 pp)"
    assert any(
        line.startswith("  build/happy: lift of a-with over b-without: +60 pp")
        for line in variant_table(comparison)
    )
    assert "| build/happy | +60 pp (95% CI +17 to +81 pp) |" in variant_markdown(
        comparison, title="t"
    )


def test_a_workspace_s_own_material_is_not_the_material_the_lift_is_of() -> None:
    # Both variants run in a workspace holding its own .claude/ (in every run's prompt
    # identity); only one installs the plugin: it is still the one with the material.
    own = FragmentHash("claude", 1, "workspace/.claude/commands/c.md", "c" * 64)
    records = [
        *(
            changed(r, fragments=(*r.head.fragments, own))
            for r in _lift_runs("a-with", 9, 10, True)
        ),
        *(changed(r, fragments=(own,)) for r in _lift_runs("b-without", 3, 10, False)),
    ]
    (pair,) = compare_variants(records).pairs
    assert (pair.a, pair.b) == ("b-without", "a-with")


def test_the_html_report_shows_what_fired() -> None:
    from pytest_ooda.report import render_html

    records = [
        *(_case(True, True, "skill:greet") for _ in range(3)),
        _case(True, False, "skill:farewell"),
    ]
    page = render_html(summarize(records), k=3, title="t")
    assert "<h3>What fired</h3>" in page
    assert "triggers of skill greet: recall 3/4 75%" in page
    assert "skill greet fired: 3/4 75% (30%–95%)" in page
