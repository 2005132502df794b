"""An ablation's table: tokens per iteration, the change with its interval, the
adjusted p-value and the verdict, in the terminal, Markdown and HTML."""

from __future__ import annotations

from sample_records import changed, record

from pytest_ooda.backends import Usage
from pytest_ooda.report import ablation_lines, ablation_markdown, render_ablation_html
from pytest_ooda.results import FragmentHash, RunRecord
from pytest_ooda.stats import Ablation, ablation


def _arm(variant: str, outcomes: list[bool], tokens: int) -> list[RunRecord]:
    return [
        changed(
            record(ok, procedure="fix", scenario="one", run=k, runs=20),
            variant=variant,
            fragments=(FragmentHash("observe", 0, "prompts/key.md", "a" * 64),),
            usage=Usage(input_tokens=tokens, output_tokens=1),
        )
        for k, ok in enumerate(outcomes, start=1)
    ]


def _ablation() -> Ablation:
    records = _arm("full", [True] * 10, 500) + _arm("without.observe.0", [False] * 10, 480)
    records += _arm("without.act", [True] * 3, 300)
    return ablation(records)[0]


def test_the_terminal_table() -> None:
    lines = ablation_lines(_ablation())
    assert lines[0].startswith(
        "ablation of fix/one: full prompt 10/10; looks after rounds 5, 10, 20"
    )
    assert lines[2].split()[:3] == ["fragment", "tokens/iter", "full"]
    key = lines[3]
    assert key.startswith("observe[0] prompts/key.md")
    assert key.rstrip().endswith("keep")
    assert "+20" in key
    assert "+100 pp" in key
    phase = lines[4]
    assert phase.startswith("act (whole phase)")
    assert "can't tell yet (" in phase


def test_markdown_and_html() -> None:
    found = _ablation()
    markdown = ablation_markdown(found)
    assert markdown.startswith("## ablation of fix/one\n")
    assert "| observe[0] prompts/key.md | +20 | 10/10 | 0/10 | +100 pp |" in markdown
    html = render_ablation_html([found], title="ablation")
    assert '<tr data-verdict="keep">' in html
    assert '<tr data-verdict="cant-tell">' in html
    assert 'class="verdict verdict-cant-tell"' in html
