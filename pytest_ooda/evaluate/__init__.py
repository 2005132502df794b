"""Measuring procedures from repeated live runs.

:mod:`.stats` (Wilson interval, pass@k, pass^k, Fisher's exact test, the defaults),
:mod:`.results` (the versioned results-log schema), :mod:`.reading` (reading and
merging files, streamed), :mod:`.outcome` (how a run's outcome is decided),
:mod:`.record` (a live run into a record), :mod:`.log` (writing the log),
:mod:`.aggregate` (per-scenario statistics and aggregate expectations),
:mod:`.comparison` and :mod:`.variant_comparison` (A/B and variant comparison), :mod:`.tally`
(early stopping's shared counts), and the renderers :mod:`.render_text`,
:mod:`.render_markdown` and :mod:`.html_report`.

Names are resolved on first use (see :mod:`pytest_ooda._exports`): ``ooda --help`` and a
pytest session without live runs import none of it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.evaluate.aggregate import (
        Gates as Gates,
        ScenarioStats as ScenarioStats,
        check_gates as check_gates,
        drop_duplicates as drop_duplicates,
        summarize as summarize,
    )
    from pytest_ooda.evaluate.comparison import (
        Comparison as Comparison,
        ScenarioComparison as ScenarioComparison,
        compare as compare,
    )
    from pytest_ooda.evaluate.html_report import (
        render_compare_html as render_compare_html,
        render_html as render_html,
    )
    from pytest_ooda.evaluate.log import ResultsLog as ResultsLog, session_stamp as session_stamp
    from pytest_ooda.evaluate.outcome import classify_outcome as classify_outcome
    from pytest_ooda.evaluate.reading import (
        RecordSource as RecordSource,
        Results as Results,
        ResultsFile as ResultsFile,
        read_record as read_record,
        read_results as read_results,
    )
    from pytest_ooda.evaluate.record import (
        AiIdentity as AiIdentity,
        ai_identity as ai_identity,
        build_record as build_record,
        fragment_hashes as fragment_hashes,
        timestamp as timestamp,
    )
    from pytest_ooda.evaluate.render_markdown import (
        compare_markdown as compare_markdown,
        report_markdown as report_markdown,
    )
    from pytest_ooda.evaluate.render_text import (
        compare_table as compare_table,
        gate_lines as gate_lines,
        notes as notes,
        stats_table as stats_table,
    )
    from pytest_ooda.evaluate.results import (
        SCHEMA as SCHEMA,
        SCHEMA_VERSION as SCHEMA_VERSION,
        FragmentHash as FragmentHash,
        RunRecord as RunRecord,
    )
    from pytest_ooda.evaluate.stats import (
        DEFAULT_ALPHA as DEFAULT_ALPHA,
        DEFAULT_K as DEFAULT_K,
        Sprt as Sprt,
        fisher_exact as fisher_exact,
        pass_at_k as pass_at_k,
        pass_hat_k as pass_hat_k,
        wilson_interval as wilson_interval,
    )
    from pytest_ooda.evaluate.tally import add_tally as add_tally, tally_counts as tally_counts
    from pytest_ooda.evaluate.variant_comparison import (
        compare_variants as compare_variants,
        variant_markdown as variant_markdown,
        variant_table as variant_table,
    )
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
