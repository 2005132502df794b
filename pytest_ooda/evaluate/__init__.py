"""Measuring procedures from repeated live runs.

:mod:`.stats` (Wilson interval, pass@k, pass^k, Fisher's exact test), :mod:`.results`
(the versioned results-log schema, reading and merging files), :mod:`.record` (a live
run into a record), :mod:`.log` (writing the log), :mod:`.aggregate` (per-scenario
statistics and aggregate expectations), :mod:`.compare` (A/B comparison), and the
renderers :mod:`.render_text`, :mod:`.render_markdown` and :mod:`.render_html`.
"""

from __future__ import annotations

from pytest_ooda.evaluate.aggregate import DEFAULT_K, Gates, ScenarioStats, check_gates, summarize
from pytest_ooda.evaluate.compare import DEFAULT_ALPHA, Comparison, ScenarioComparison, compare
from pytest_ooda.evaluate.results import (
    SCHEMA,
    SCHEMA_VERSION,
    Results,
    RunRecord,
    read_results,
)
from pytest_ooda.evaluate.stats import fisher_exact, pass_at_k, pass_hat_k, wilson_interval

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_K",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Comparison",
    "Gates",
    "Results",
    "RunRecord",
    "ScenarioComparison",
    "ScenarioStats",
    "check_gates",
    "compare",
    "fisher_exact",
    "pass_at_k",
    "pass_hat_k",
    "read_results",
    "summarize",
    "wilson_interval",
]
