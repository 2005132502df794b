"""The terminal renderings: cells, the stats table, gate lines, the comparison table
(and one test of the error column in all three renderings)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from sample_records import changed, record, sample

from pytest_ooda.report import (
    compare_markdown,
    compare_table,
    gate_lines,
    money,
    notes,
    render_html,
    report_markdown,
    seconds,
    stats_table,
)
from pytest_ooda.stats import compare, summarize

if TYPE_CHECKING:
    from pytest_ooda.results import RunRecord


def test_cells() -> None:
    assert money(None) == "-"
    assert money(0.01234) == "$0.0123"
    assert money(12.5) == "$12.50"
    assert seconds(4.25) == "4.2s"
    assert seconds(125) == "2m05s"


def test_the_stats_table() -> None:
    records = sample(17, 20, iterations=2, cost=0.05, tokens=900)
    lines = stats_table(summarize(records), 3)
    assert lines[0].split() == [
        "scenario",
        "runs",
        "ok",
        "errors",
        "rate",
        "95%",
        "CI",
        "pass^3",
        "pass@3",
        "iterations",
        "mean/med/max",
        "time/run",
        "tokens/run",
        "cost/run",
        "outcomes",
    ]
    assert lines[1].split() == [
        "build/happy",
        "20",
        "17",
        "0",
        "85%",
        "64%–95%",
        "0.60",
        "1.00",
        "2.00/2/2",
        "1.0s",
        "900",
        "$0.0500",
        "success",
        "17,",
        "failure",
        "3",
        "(max-iters",
        "3)",
    ]


def test_gate_lines_say_which_passed() -> None:
    gates = {"success_rate": {"min": 0.5}}
    stats = summarize(
        [*sample(1, 4, scenario="a", gates=gates), *sample(3, 4, scenario="b", gates=gates)]
    )
    lines, failed = gate_lines(stats)
    assert failed == 1
    assert lines[0].startswith("FAILED build/a: success rate 25% (1/4")
    assert lines[1] == "passed build/b: success rate >= 50%"


def test_compare_outputs() -> None:
    comparison = compare(sample(18, 20, cost=0.1), sample(9, 20, cost=0.2, fragment="b" * 64))
    text = "\n".join(compare_table(comparison))
    assert "build/happy  18/20 90%  9/20 45%  0 / 0   -45 pp" in text
    assert "$0.1000 -> $0.2000" in text
    assert "build/happy: fragments changed: observe[0] prompts/look.md" in text
    assert "1 scenario(s) regressed significantly" in text
    markdown = compare_markdown(comparison, title="t")
    assert ":x: 1 scenario(s) regressed significantly" in markdown
    calm = compare_markdown(compare(sample(9, 10), sample(9, 10)), title="t")
    assert ":white_check_mark: no scenario regressed significantly" in calm


def test_errors_have_their_own_column_in_every_rendering() -> None:
    failed = replace(
        record(False, outcome="error", error_reason="overloaded: HTTP 529 busy", status="aborted"),
        retries=2,
    )
    stats = summarize([*sample(3, 4), failed])
    [row] = stats_table(stats, 3)[1:]
    assert row.split()[:5] == ["build/happy", "5", "3", "1", "75%"]
    markdown = report_markdown(stats, k=3, title="t")
    assert "1 scenario(s), 5 run(s), 1 infrastructure error(s)." in markdown
    assert "| build/happy | 5 | 3 | 1 | 75% |" in markdown
    html = render_html(stats, k=3, title="t")
    assert re.search(r'title="infrastructure errors, not counted in the rate">1</td>', html)
    assert "3 of 4 valid runs" in html
    assert "⚠ infrastructure error" in html
    assert "infrastructure error: overloaded: HTTP 529 busy" in html
    assert "2 retries" in html


def test_the_outcomes_column_is_the_same_in_every_rendering() -> None:
    missed = replace(record(False, status="success"), problems=("file a.txt: missing",))
    errored = record(False, outcome="error", error_reason="rate-limit: 429", status="aborted")
    stats = summarize([*sample(2, 4), missed, errored])
    said = "success 2, failure 3 (max-iters 2, expectations 1), error 1"
    [row] = stats_table(stats, 3)[1:]
    assert row.endswith("  " + said)
    assert report_markdown(stats, k=3, title="t").splitlines()[6].endswith(f"| {said} |")
    html = render_html(stats, k=3, title="t")
    cells = re.findall(r'<td class="outcomes">(.*?)</td>', html, re.S)
    # The summary table's row and the scenario's own figure say the same.
    assert len(cells) == 2
    for cell in cells:
        words = re.sub(r"<[^>]+>", "", cell).replace(",", "").split()
        assert words == said.replace(",", "").split()
        assert '<span class="verdict verdict-failure">failure 3</span>' in cell
    assert "loop ended" not in html


def test_a_trigger_sets_prompts_are_no_mix_of_prompt_versions() -> None:
    """Each prompt of a trigger set is its own prompt version by design; only a prompt
    run under two versions (the skill edited between sessions) is a mix."""

    def case(name: str, prompt: str) -> RunRecord:
        entry = {"target": "skill greet", "case": name, "should_fire": True, "prompt": "hi"}
        return changed(record(True, prompt=prompt), trigger=entry)

    cases = [case("should-1", "a" * 64), case("should-2", "b" * 64)]
    assert not [line for line in notes(summarize(cases)) if "prompt versions" in line]
    edited = [*cases, case("should-1", "c" * 64)]
    assert "note: build/happy mixes 2 prompt versions" in "\n".join(notes(summarize(edited)))
