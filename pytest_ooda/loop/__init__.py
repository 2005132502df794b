"""The loop: run a procedure iteration by iteration until a terminal status.

The contract is this module. :mod:`.runner` holds the state machine (limits, failure
threshold, interruption) and ``run_procedure``; :mod:`.result` what a run produced
(``LoopResult``, per-iteration records, timing statistics); :mod:`.events` the events a
run emits; :mod:`.console` their rendering for a person; :mod:`.signals` the promise
tags and the outcome matrix of one iteration.
"""

from __future__ import annotations

from pytest_ooda._types import EXIT_CODES, STATUSES
from pytest_ooda.loop.budget import (
    tightest,
    unenforced_warning,
)
from pytest_ooda.loop.console import (
    LOGGING_LEVELS,
    ConsoleReporter,
    format_rows,
    format_run_settings,
    run_settings_rows,
)
from pytest_ooda.loop.events import (
    IterationFinished,
    IterationStarted,
    LoopEvent,
    LoopFinished,
    LoopStarted,
    LoopWarning,
)
from pytest_ooda.loop.result import (
    IterationRecord,
    LoopResult,
    RunningStats,
    TimingStats,
)
from pytest_ooda.loop.runner import make_backend, run_loop, run_procedure
from pytest_ooda.loop.signals import (
    FAILURE_SIGNAL,
    SUCCESS_SIGNAL,
    Outcome,
    decide_outcome,
    find_signal,
)
from pytest_ooda.loop.tables import (
    iteration_table,
    served_table,
)

__all__ = [
    "EXIT_CODES",
    "FAILURE_SIGNAL",
    "LOGGING_LEVELS",
    "STATUSES",
    "SUCCESS_SIGNAL",
    "ConsoleReporter",
    "IterationFinished",
    "IterationRecord",
    "IterationStarted",
    "LoopEvent",
    "LoopFinished",
    "LoopResult",
    "LoopStarted",
    "LoopWarning",
    "Outcome",
    "RunningStats",
    "TimingStats",
    "decide_outcome",
    "find_signal",
    "format_rows",
    "format_run_settings",
    "iteration_table",
    "make_backend",
    "run_loop",
    "run_procedure",
    "run_settings_rows",
    "served_table",
    "tightest",
    "unenforced_warning",
]
