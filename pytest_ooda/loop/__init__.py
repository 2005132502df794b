"""The loop: run a procedure iteration by iteration until a terminal status.

The contract is this module. :mod:`.runner` holds the state machine (limits, failure
threshold, interruption) and ``run_procedure``; :mod:`.result` what a run produced
(``LoopResult``, per-iteration records, timing statistics); :mod:`.events` the events a
run emits; :mod:`.console` their rendering for a person; :mod:`.signals` the promise
tags and the outcome matrix of one iteration.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda._types import EXIT_CODES as EXIT_CODES, STATUSES as STATUSES
    from pytest_ooda.loop.budget import (
        tightest as tightest,
        unenforced_warning as unenforced_warning,
    )
    from pytest_ooda.loop.console import (
        LOGGING_LEVELS as LOGGING_LEVELS,
        ConsoleReporter as ConsoleReporter,
        format_rows as format_rows,
        format_run_settings as format_run_settings,
        run_settings_rows as run_settings_rows,
    )
    from pytest_ooda.loop.events import (
        IterationFinished as IterationFinished,
        IterationStarted as IterationStarted,
        LoopEvent as LoopEvent,
        LoopFinished as LoopFinished,
        LoopStarted as LoopStarted,
        LoopWarning as LoopWarning,
    )
    from pytest_ooda.loop.result import (
        IterationRecord as IterationRecord,
        LoopResult as LoopResult,
        RunningStats as RunningStats,
        TimingStats as TimingStats,
    )
    from pytest_ooda.loop.runner import make_backend as make_backend, run_procedure as run_procedure
    from pytest_ooda.loop.signals import (
        FAILURE_SIGNAL as FAILURE_SIGNAL,
        SUCCESS_SIGNAL as SUCCESS_SIGNAL,
        Outcome as Outcome,
        decide_outcome as decide_outcome,
        find_signal as find_signal,
    )
    from pytest_ooda.loop.tables import (
        iteration_table as iteration_table,
        served_table as served_table,
    )
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
