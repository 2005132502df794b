"""The controller's side of a distributed session: :class:`Dispatcher` hands runs to an
:class:`~pytest_ooda.executors.Engine`, a window of them at a time, and settles each
once.

Every run is added up front (:meth:`Dispatcher.add`), in the order the session will ask
for them, and submitted as the window allows: at most ``window`` attempts are on the
cluster at once (by default twice its slots, so no worker waits for the controller), the
rest wait here, where cancelling them costs nothing. Each submission is one attempt,
keyed by the run's id and its attempt number. Whoever waits (:meth:`Dispatcher.settle`)
pumps: tops the window up, takes finished attempts, and settles their runs. An attempt
whose worker was lost goes back to the front of the queue while the run has retries
left, else the run settles as lost; a run settles exactly once, so no run is lost or
counted twice. ``on_settled`` hears of each run as it settles, in whatever order they
finish: the session writes its record then, not when its test item comes up.

Cancelling (early stopping) takes a run out of the queue, or withdraws a submitted
attempt that has not begun (the engine's ledger decides atomically); a run that has
begun finishes and settles as usual.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ooda.executors.base import NotRun, Raised, Ran, TaskFailed, WorkerLost

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ooda.executors.base import Engine

__all__ = ["Dispatcher", "Settled"]

#: How long one wait for finished attempts lasts before the window is looked at again.
_WAIT = 1.0


@dataclass(eq=False)
class _Job:
    run_id: str
    payload: Any
    retries: int
    attempts: int = 0
    lost: list[str] = field(default_factory=list)
    ticket: str = ""
    #: When its first attempt was submitted.
    started: float | None = None


@dataclass(frozen=True)
class Settled:
    """How a run ended on the cluster: ``value`` is what the worker function made (on
    worker ``where``); ``error`` what it raised, to raise again here; ``lost`` why each
    lost attempt was lost (every attempt, when the run never ran); ``cancelled``: it
    was cancelled before it began; ``failed``: the task broke (the worker's traceback)."""

    run_id: str
    value: Any = None
    where: str | None = None
    error: Exception | None = None
    lost: tuple[str, ...] = ()
    cancelled: bool = False
    failed: str | None = None
    #: When its first attempt went to the cluster (``None``: it never did).
    started: float | None = None

    @property
    def ran(self) -> bool:
        return self.where is not None and self.error is None


class Dispatcher:
    """Runs on an engine, each settled once (see the module's docstring)."""

    def __init__(
        self,
        engine: Engine,
        function: Callable[..., Any],
        *,
        session: str,
        window: int | None = None,
        on_settled: Callable[[Settled], None] | None = None,
    ) -> None:
        self.engine = engine
        self.function = function
        self.session = session
        self.window = window if window is not None else max(1, 2 * engine.slots())
        self.on_settled = on_settled
        self.shared: Any = None
        self._ledger = engine.ledger()
        self._queue: collections.deque[_Job] = collections.deque()
        self._jobs: dict[str, _Job] = {}
        self._running: dict[Any, _Job] = {}
        self._settled: dict[str, Settled] = {}
        self.submitted = 0

    # ------------------------------------------------------------------ adding

    def ship(self, data: bytes) -> None:
        """Put what every task receives (the packed source) on the cluster, once."""
        self.shared = self.engine.share(data)

    def add(self, run_id: str, payload: Any, *, retries: int = 0) -> None:
        """Queue run ``run_id`` (``payload``: what the worker function runs), with
        ``retries`` more attempts after a lost worker. A run id added twice is one run."""
        if run_id in self._jobs:
            return
        job = _Job(run_id, payload, retries)
        self._jobs[run_id] = job
        self._queue.append(job)

    def __contains__(self, run_id: str) -> bool:
        return run_id in self._jobs

    # ------------------------------------------------------------------ waiting

    def settle(self, run_id: str) -> Settled:
        """Wait for run ``run_id`` to settle (pumping: others settle meanwhile)."""
        if run_id not in self._jobs:
            raise KeyError(run_id)
        while run_id not in self._settled:
            self.pump(_WAIT)
        return self._settled[run_id]

    def pump(self, timeout: float) -> None:
        """Top the window up, then take what finished within ``timeout`` seconds."""
        self._top_up()
        if not self._running:
            return
        for task in self.engine.wait(tuple(self._running), timeout):
            job = self._running.pop(task)
            self._take(job, task)
        self._top_up()

    def _top_up(self) -> None:
        while self._queue and len(self._running) < self.window:
            job = self._queue.popleft()
            job.attempts += 1
            if job.started is None:
                job.started = time.time()
            job.ticket = f"{job.run_id}-{job.attempts}"
            key = f"ooda-{self.session}-{job.ticket}"
            task = self.engine.submit(
                key, self.function, job.ticket, job.payload, self.shared, self._ledger
            )
            self._running[task] = job
            self.submitted += 1

    def _take(self, job: _Job, task: Any) -> None:
        try:
            answer = self.engine.result(task)
        except WorkerLost as lost:
            self._lost(job, str(lost))
            return
        except TaskFailed as failed:
            self._settle(
                Settled(job.run_id, lost=tuple(job.lost), failed=str(failed), started=job.started)
            )
            return
        if isinstance(answer, Ran):
            self._settle(
                Settled(
                    job.run_id,
                    answer.value,
                    answer.where,
                    lost=tuple(job.lost),
                    started=job.started,
                )
            )
        elif isinstance(answer, Raised):
            self._settle(
                Settled(job.run_id, where=answer.where, error=answer.error, started=job.started)
            )
        elif isinstance(answer, NotRun) and answer.cancelled:
            self._settle(Settled(job.run_id, lost=tuple(job.lost), cancelled=True))
        elif isinstance(answer, NotRun):
            self._lost(job, answer.reason)
        else:
            self._settle(Settled(job.run_id, failed=f"the worker answered {type(answer).__name__}"))

    def _lost(self, job: _Job, reason: str) -> None:
        self.engine.forget(job.ticket)
        job.lost.append(reason)
        if job.attempts <= job.retries:
            # First in line again: it was next before.
            self._queue.appendleft(job)
        else:
            self._settle(Settled(job.run_id, lost=tuple(job.lost), started=job.started))

    def _settle(self, settled: Settled) -> None:
        if settled.run_id in self._settled:
            return
        self._settled[settled.run_id] = settled
        if self.on_settled is not None:
            self.on_settled(settled)

    # ------------------------------------------------------------------ cancelling

    def cancel(self, run_id: str) -> bool:
        """Make sure run ``run_id`` never begins: ``True`` when it had not (it settles as
        cancelled), ``False`` when it has begun or settled already."""
        job = self._jobs.get(run_id)
        if job is None or run_id in self._settled:
            return False
        if any(queued is job for queued in self._queue):
            self._queue.remove(job)
        else:
            task = next((task for task, held in self._running.items() if held is job), None)
            if task is None or not self.engine.withdraw(job.ticket):
                return False
            del self._running[task]
            self.engine.cancel(task)
        self._settle(Settled(run_id, lost=tuple(job.lost), cancelled=True))
        return True

    def pending(self) -> list[str]:
        """The runs not settled yet, in the order they were added."""
        return [run_id for run_id in self._jobs if run_id not in self._settled]

    def close(self) -> None:
        """Stop: nothing more is submitted, what is on the cluster is withdrawn and
        dropped (a run under way is abandoned, unrecorded: ``--ooda-resume`` makes it
        later), and the engine disconnects."""
        self._queue.clear()
        try:
            for task, job in list(self._running.items()):
                self.engine.withdraw(job.ticket)
                self.engine.cancel(task)
            self._running.clear()
        finally:
            self.engine.close()
