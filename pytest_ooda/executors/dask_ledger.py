"""The scheduler's half of a Dask session's ledger: which run attempts have begun, on
which worker, and which the controller cancelled.

It lives in the Dask scheduler as a scheduler plugin, so it outlives any worker, and the
functions below run there (``Client.run_on_scheduler``), one at a time on the
scheduler's event loop, which makes each claim atomic. This module is shipped to the
scheduler by value (``cloudpickle.register_pickle_by_value``): it imports nothing of
pytest-ooda, and the scheduler needs only Dask.
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin

#: What ``begin`` answers for an attempt the controller cancelled.
CANCELLED = "cancelled"


class Claims(SchedulerPlugin):  # type: ignore[misc]  # Dask is read as Any
    """One session's claims: attempt -> the worker it began on, and the cancelled."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.begun: dict[str, str] = {}
        self.cancelled: set[str] = set()


def begin(ticket: str, where: str, plugin: str, dask_scheduler: Any = None) -> str | None:
    """``None``: attempt ``ticket`` may run on ``where``. Else why not: it was cancelled,
    or it began before (on a worker since lost: Dask is running it again)."""
    claims: Claims = dask_scheduler.plugins[plugin]
    if ticket in claims.cancelled:
        return CANCELLED
    earlier = claims.begun.get(ticket)
    if earlier is not None:
        return f"the worker running it ({earlier}) was lost"
    claims.begun[ticket] = where
    return None


def cancel(ticket: str, plugin: str, dask_scheduler: Any = None) -> bool:
    """Whether attempt ``ticket`` had not begun; it never will."""
    claims: Claims = dask_scheduler.plugins[plugin]
    if ticket in claims.begun:
        return False
    claims.cancelled.add(ticket)
    return True
