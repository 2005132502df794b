"""Reports of results: view models, the shared formatters, the one template set, and
text, Markdown and HTML output.

:mod:`.render_text` (the per-scenario table, the gate verdicts, the ``ooda compare``
table and the variant ranking; the cell formatters every renderer shares),
:mod:`.render_markdown` (the same as GitHub-flavoured Markdown), :mod:`.html_report`
(the one Jinja2 template set in ``templates/``, for ``ooda report --html``, ``ooda
compare --html`` and every ``ooda view`` page; a static report pages its runs), and the
HTML pages' view models: :mod:`.pages` (a scenario's figures, the scenarios × variants
matrix, a session's badge), :mod:`.run_detail` (one run: its iterations as the loop
decided them, transcript, judge section), :mod:`.compare_pages` (two sides with the
prompt diff by fragment; variants) and :mod:`.outputs` (outputs side by side);
:mod:`.render_pr` (one pull-request comment of a comparison), :mod:`.render_history`
(scenarios across sessions) and :mod:`.render_ablation` (keep / cut / can't tell).

Above ``results/`` and ``stats/``; ``view/`` serves these pages and this package never
imports it. Jinja2 is imported where a page is rendered, so the text and Markdown
reports never load it.
"""

from __future__ import annotations

from pytest_ooda.report.compare_pages import render_compare_html, render_variants_html
from pytest_ooda.report.html_report import (
    TEMPLATES,
    ReportPage,
    render_html,
    render_page,
    report_files,
    report_pages,
)
from pytest_ooda.report.outputs import output_columns
from pytest_ooda.report.pages import (
    DEFAULT_VARIANT,
    matrix,
    prompt_versions,
    scenario_view,
    session_verdict,
)
from pytest_ooda.report.render_ablation import (
    ablation_lines,
    ablation_markdown,
    ablation_view,
    render_ablation_html,
)
from pytest_ooda.report.render_fingerprint import (
    fingerprint_lines,
    fingerprint_text,
    fingerprint_view,
)
from pytest_ooda.report.render_history import (
    history_lines,
    history_markdown,
    history_view,
    render_history_html,
)
from pytest_ooda.report.render_markdown import (
    compare_markdown,
    report_markdown,
    variant_markdown,
)
from pytest_ooda.report.render_pr import MARKER, pr_markdown
from pytest_ooda.report.render_text import (
    compare_table,
    gate_lines,
    money,
    notes,
    seconds,
    stats_table,
    variant_table,
)
from pytest_ooda.report.run_detail import reason, run_view

__all__ = [
    "DEFAULT_VARIANT",
    "MARKER",
    "TEMPLATES",
    "ReportPage",
    "ablation_lines",
    "ablation_markdown",
    "ablation_view",
    "compare_markdown",
    "compare_table",
    "fingerprint_lines",
    "fingerprint_text",
    "fingerprint_view",
    "gate_lines",
    "history_lines",
    "history_markdown",
    "history_view",
    "matrix",
    "money",
    "notes",
    "output_columns",
    "pr_markdown",
    "prompt_versions",
    "reason",
    "render_ablation_html",
    "render_compare_html",
    "render_history_html",
    "render_html",
    "render_page",
    "render_variants_html",
    "report_files",
    "report_markdown",
    "report_pages",
    "run_view",
    "scenario_view",
    "seconds",
    "session_verdict",
    "stats_table",
    "variant_markdown",
    "variant_table",
]
