"""The Markdown rendering: cells that cannot break the table."""

from __future__ import annotations

from sample_records import sample

from pytest_ooda.report import report_markdown
from pytest_ooda.stats import summarize


def test_markdown_cells_cannot_break_the_table() -> None:
    stats = summarize(sample(1, 2, scenario="a|b<i>c"))
    text = report_markdown(stats, k=3, title="Runs | <script>")
    assert text.startswith("## Runs \\| &lt;script&gt;\n")
    row = next(line for line in text.splitlines() if "build/a" in line)
    assert "build/a\\|b&lt;i&gt;c" in row
    assert row.count(" | ") == 12
