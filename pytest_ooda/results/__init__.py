"""The results record and its log: what a live run leaves behind, and the one rule of
its outcome.

:mod:`.schema` (the versioned record, :class:`RunRecord`, declared once: each field
with its column — its JSON form, its check when read, whether the summary reader keeps
it, its label in a report), :mod:`.decode` (a line read and checked field by field
through that declaration), :mod:`.builder` (:func:`build_record`, the one builder of a
run's record), :mod:`.outcome` (how a run's outcome is decided: ``success``,
``failure`` or ``error``), :mod:`.log` (:class:`ResultsLog`, the one writer of a
session's log), :mod:`.session` (the :class:`SessionStamp` its records carry),
:mod:`.reading` (reading and merging logs, streamed), :mod:`.resume` (which earlier
run a run would make again, for ``--ooda-resume``), :mod:`.tally` (early stopping's
shared counts), :mod:`.budget` (a session's budget and its shared spend), :mod:`.fired`
(a run's named assertions), and :mod:`.inputs` (what the builder and the outcome rule read of a
loop, a workspace and a scenario, as protocols).

The bottom of the reading side (``results ─> stats ─> report ─> view``) and the top of
the running side: ``live/`` and ``executors/`` import this package and none of the
other three, and it imports nothing above ``config/`` (the leaves it uses: ``errors``,
``_types``, ``_util``, ``reader``, ``facts``, ``redact``, ``config``), so a cluster
worker building a record and a reader of a log load neither the loop, the statistics,
the renderers nor the viewer.
"""

from __future__ import annotations

from pytest_ooda.results.budget import BUDGET_SPENT, Budget, Spend, Spent
from pytest_ooda.results.builder import ai_identity, build_record, timestamp
from pytest_ooda.results.decode import decode_record
from pytest_ooda.results.fired import assertion_entries, trigger_entry
from pytest_ooda.results.log import ResultsLog
from pytest_ooda.results.outcome import (
    UNMET,
    classify_outcome,
    ended_because,
    expected_status,
    failed_run,
)
from pytest_ooda.results.reading import (
    RecordSource,
    Results,
    ResultsFile,
    read_record,
    read_results,
)
from pytest_ooda.results.resume import RunKey, finished_runs
from pytest_ooda.results.schema import (
    SCHEMA,
    SCHEMA_VERSION,
    AiIdentity,
    AssertionEntry,
    FragmentHash,
    IterationEntry,
    RecordHead,
    RunRecord,
    column,
    compared,
    shown,
)
from pytest_ooda.results.session import SessionStamp, session_stamp
from pytest_ooda.results.tally import add_tally, tally_counts

__all__ = [
    "BUDGET_SPENT",
    "SCHEMA",
    "SCHEMA_VERSION",
    "UNMET",
    "AiIdentity",
    "AssertionEntry",
    "Budget",
    "FragmentHash",
    "IterationEntry",
    "RecordHead",
    "RecordSource",
    "Results",
    "ResultsFile",
    "ResultsLog",
    "RunKey",
    "RunRecord",
    "SessionStamp",
    "Spend",
    "Spent",
    "add_tally",
    "ai_identity",
    "assertion_entries",
    "build_record",
    "classify_outcome",
    "column",
    "compared",
    "decode_record",
    "ended_because",
    "expected_status",
    "failed_run",
    "finished_runs",
    "read_record",
    "read_results",
    "session_stamp",
    "shown",
    "tally_counts",
    "timestamp",
    "trigger_entry",
]
