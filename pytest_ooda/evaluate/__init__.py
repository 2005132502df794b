"""Measuring procedures from repeated live runs.

:mod:`.stats` (Wilson interval, pass@k, pass^k, Fisher's exact test, the defaults),
:mod:`.results` (the versioned results-log schema), :mod:`.reading` (reading and
merging files, streamed), :mod:`.outcome` (how a run's outcome is decided),
:mod:`.record` (a live run into a record), :mod:`.log` (writing the log),
:mod:`.aggregate` (per-scenario statistics and aggregate expectations),
:mod:`.comparison` and :mod:`.variant_comparison` (A/B and variant comparison), :mod:`.tally`
(early stopping's shared counts), and the renderers :mod:`.render_text`,
:mod:`.render_markdown` and :mod:`.html_report` (with :mod:`.pages`, :mod:`.run_view`,
:mod:`.compare_pages` and :mod:`.outputs`, the HTML pages' content; Jinja is imported
where a page is rendered), and ``ooda view``'s :mod:`.index` (the sessions of results
directories, read as they grow) and :mod:`.viewer` (its pages over HTTP).
"""

from __future__ import annotations

from pytest_ooda.evaluate.aggregate import (
    Gates,
    ScenarioStats,
    check_gates,
    drop_duplicates,
    summarize,
)
from pytest_ooda.evaluate.compare_pages import render_compare_html, render_variants_html
from pytest_ooda.evaluate.comparison import (
    Comparison,
    ScenarioComparison,
    compare,
)
from pytest_ooda.evaluate.html_report import ReportPage, render_html, report_files, report_pages
from pytest_ooda.evaluate.index import ResultsIndex, unfinished
from pytest_ooda.evaluate.log import ResultsLog, SessionStamp, session_stamp
from pytest_ooda.evaluate.outcome import classify_outcome, failed_run
from pytest_ooda.evaluate.reading import (
    RecordSource,
    Results,
    ResultsFile,
    read_record,
    read_results,
)
from pytest_ooda.evaluate.record import (
    AiIdentity,
    RecordHead,
    ai_identity,
    build_record,
    fragment_hashes,
    timestamp,
)
from pytest_ooda.evaluate.render_markdown import (
    compare_markdown,
    report_markdown,
)
from pytest_ooda.evaluate.render_text import (
    compare_table,
    gate_lines,
    notes,
    stats_table,
)
from pytest_ooda.evaluate.results import (
    SCHEMA,
    SCHEMA_VERSION,
    FragmentHash,
    RunRecord,
)
from pytest_ooda.evaluate.stats import (
    DEFAULT_ALPHA,
    DEFAULT_K,
    Sprt,
    fisher_exact,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)
from pytest_ooda.evaluate.tally import add_tally, tally_counts
from pytest_ooda.evaluate.variant_comparison import (
    compare_variants,
    variant_markdown,
    variant_table,
)
from pytest_ooda.evaluate.viewer import Viewer, make_server

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_K",
    "SCHEMA",
    "SCHEMA_VERSION",
    "AiIdentity",
    "Comparison",
    "FragmentHash",
    "Gates",
    "RecordHead",
    "RecordSource",
    "ReportPage",
    "Results",
    "ResultsFile",
    "ResultsIndex",
    "ResultsLog",
    "RunRecord",
    "ScenarioComparison",
    "ScenarioStats",
    "SessionStamp",
    "Sprt",
    "Viewer",
    "add_tally",
    "ai_identity",
    "build_record",
    "check_gates",
    "classify_outcome",
    "compare",
    "compare_markdown",
    "compare_table",
    "compare_variants",
    "drop_duplicates",
    "failed_run",
    "fisher_exact",
    "fragment_hashes",
    "gate_lines",
    "make_server",
    "notes",
    "pass_at_k",
    "pass_hat_k",
    "read_record",
    "read_results",
    "render_compare_html",
    "render_html",
    "render_variants_html",
    "report_files",
    "report_markdown",
    "report_pages",
    "session_stamp",
    "stats_table",
    "summarize",
    "tally_counts",
    "timestamp",
    "unfinished",
    "variant_markdown",
    "variant_table",
    "wilson_interval",
]
