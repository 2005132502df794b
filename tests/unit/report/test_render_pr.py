"""The pull request's comment, rendered by a real Markdown renderer (markdown-it-py,
CommonMark with GitHub's tables) and checked for its structure: the hidden marker, one
heading, a table row per touched scenario with its verdict and interval, each
scenario's notes and its prompt diff folded in <details>, and the report's link."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from markdown_it import MarkdownIt
from sample_records import changed, record

from pytest_ooda.report import MARKER, pr_markdown
from pytest_ooda.results import FragmentHash, RunRecord
from pytest_ooda.stats import compare, history


def _prompt(text: str) -> dict[str, Any]:
    return {
        "prompt": [
            {"source": "preamble", "text": "OODA"},
            {"source": "prompts/greet.md", "text": text},
        ]
    }


def side(
    successes: int, runs: int, *, scenario: str, fragment: str, text: str, session: str, cost: float
) -> list[RunRecord]:
    return [
        changed(
            record(
                k < successes,
                scenario=scenario,
                procedure="greet",
                run=k + 1,
                runs=runs,
                cost=cost,
                tokens=1000 if fragment == "a" else 1300,
                session=session,
                prompt=fragment * 64,
            ),
            fragments=(FragmentHash("act", 0, "prompts/greet.md", fragment * 64),),
            transcript=_prompt(text),
        )
        for k in range(runs)
    ]


def tokens(markdown: str) -> list[Any]:
    return MarkdownIt("commonmark").enable("table").parse(markdown)


def test_the_comment_is_one_marked_comment_with_a_row_per_touched_scenario() -> None:
    base = side(18, 20, scenario="happy", fragment="a", text="Greet them.", session="b", cost=0.05)
    base += side(
        10, 20, scenario="steady", fragment="a", text="Greet them.", session="b", cost=0.05
    )
    new = side(
        6, 20, scenario="happy", fragment="b", text="Greet them loudly.", session="n", cost=0.07
    )
    new += side(
        11, 20, scenario="steady", fragment="b", text="Greet them loudly.", session="n", cost=0.07
    )
    markdown = pr_markdown(
        compare(base, new),
        histories={item.label: item for item in history(base)},
        untouched=["greet/quiet"],
        report_url="https://example.com/runs/1#artifacts",
    )
    parsed = tokens(markdown)
    assert markdown.startswith(MARKER + "\n")
    assert parsed[0].type == "html_block"
    assert parsed[0].content.strip() == MARKER
    headings = [parsed[i + 1].content for i, t in enumerate(parsed) if t.type == "heading_open"]
    assert headings == [
        "pytest-ooda: prompt changes measured",
        "greet/happy",
        "greet/steady",
    ]
    rows = []
    row: list[str] = []
    for index, token in enumerate(parsed):
        if token.type == "tr_open":
            row = []
        elif token.type in ("td_open", "th_open"):
            row.append(parsed[index + 1].content)
        elif token.type == "tr_close":
            rows.append(row)
    assert rows[0] == [
        "scenario",
        "verdict",
        "base",
        "new",
        "change (95% CI)",
        "detectable",
        "cost/run",
        "tokens/run",
    ]
    happy = rows[1]
    assert happy[:4] == ["greet/happy", ":x: regressed", "18/20 90%", "6/20 30%"]
    assert happy[4].startswith("-60 pp (-")
    assert happy[6] == "$0.0500 → $0.0700 (+$0.0200)"
    assert happy[7] == "1,000 → 1,300 (+300)"
    assert rows[2][1] == ":grey_question: inconclusive"
    assert rows[2][5].endswith(" pp")
    links = [
        t.attrGet("href")
        for t in parsed
        if t.type == "inline"
        for t in t.children or ()
        if t.type == "link_open"
    ]
    assert links == ["https://example.com/runs/1#artifacts"]
    fences = [t for t in parsed if t.type == "fence"]
    assert [t.info for t in fences] == ["diff", "diff"]
    assert "-Greet them.\n+Greet them loudly." in fences[0].content
    details = [t.content for t in parsed if t.type == "html_block" and "details" in t.content]
    assert len(details) == 4
    assert "<summary>prompt diff: 1 fragment(s)" in details[0]
    assert "1 untouched: replayed, not run" in markdown
    assert "it never failed before" not in markdown  # 18/20 is flaky, not stable
    notes = [line for line in markdown.splitlines() if line.startswith("- history")]
    # happy: 18/20 before, 6/20 here — below its history, not noise.
    assert "; this broke: 6/20 (30%) here, below it (p 0.000244)" in notes[0]
    assert "noise" not in notes[0]
    # steady: 10/20 before, 11/20 here — a failure at this rate is not news.
    assert "; within its noise: 11/20 (55%) here (p 1), a failure at this rate" in notes[1]
    assert markdown.rstrip().endswith("significant regression: **greet/happy**")


def test_a_stable_scenario_that_regresses_is_news_and_nothing_touched_says_so() -> None:
    base = side(20, 20, scenario="happy", fragment="a", text="x", session="b", cost=0.01)
    new = side(5, 20, scenario="happy", fragment="b", text="y", session="n", cost=0.01)
    markdown = pr_markdown(compare(base, new), histories={i.label: i for i in history(base)})
    assert "; this broke: 5/20 (25%) here, and it never failed before (p 7.71e-07)" in markdown
    empty = pr_markdown(compare(base, new), touched=set())
    assert "nothing was run live" in empty
    assert empty.rstrip().endswith("no touched scenario regressed significantly")


def test_budget_notes_and_no_transcript() -> None:
    base = [
        replace(r, transcript=None)
        for r in side(3, 4, scenario="happy", fragment="a", text="x", session="b", cost=0.01)
    ]
    new = [
        replace(r, transcript=None)
        for r in side(2, 4, scenario="happy", fragment="b", text="y", session="n", cost=0.01)
    ]
    markdown = pr_markdown(
        compare(base, new), budget={"greet/happy": "budget spent after 4 of 20 runs"}
    )
    assert "inconclusive: budget spent" in markdown
    assert "- budget spent after 4 of 20 runs" in markdown
    assert "Fragments changed: act[0] prompts/greet.md (no transcript kept)." in markdown
