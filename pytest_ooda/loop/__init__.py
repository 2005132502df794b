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
    from pytest_ooda._types import EXIT_CODES as EXIT_CODES
    from pytest_ooda._types import STATUSES as STATUSES
    from pytest_ooda.loop.budget import tightest as tightest
    from pytest_ooda.loop.budget import unenforced_warning as unenforced_warning
    from pytest_ooda.loop.console import LOGGING_LEVELS as LOGGING_LEVELS
    from pytest_ooda.loop.console import ConsoleReporter as ConsoleReporter
    from pytest_ooda.loop.console import format_rows as format_rows
    from pytest_ooda.loop.console import format_run_settings as format_run_settings
    from pytest_ooda.loop.console import run_settings_rows as run_settings_rows
    from pytest_ooda.loop.events import IterationFinished as IterationFinished
    from pytest_ooda.loop.events import IterationStarted as IterationStarted
    from pytest_ooda.loop.events import LoopEvent as LoopEvent
    from pytest_ooda.loop.events import LoopFinished as LoopFinished
    from pytest_ooda.loop.events import LoopStarted as LoopStarted
    from pytest_ooda.loop.events import LoopWarning as LoopWarning
    from pytest_ooda.loop.result import IterationRecord as IterationRecord
    from pytest_ooda.loop.result import LoopResult as LoopResult
    from pytest_ooda.loop.result import RunningStats as RunningStats
    from pytest_ooda.loop.result import TimingStats as TimingStats
    from pytest_ooda.loop.runner import make_backend as make_backend
    from pytest_ooda.loop.runner import run_procedure as run_procedure
    from pytest_ooda.loop.signals import FAILURE_SIGNAL as FAILURE_SIGNAL
    from pytest_ooda.loop.signals import SUCCESS_SIGNAL as SUCCESS_SIGNAL
    from pytest_ooda.loop.signals import Outcome as Outcome
    from pytest_ooda.loop.signals import decide_outcome as decide_outcome
    from pytest_ooda.loop.signals import find_signal as find_signal
    from pytest_ooda.loop.tables import iteration_table as iteration_table
    from pytest_ooda.loop.tables import served_table as served_table
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
