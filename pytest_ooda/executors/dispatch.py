"""The controller's side of a distributed session: :class:`Dispatcher` hands runs to an
:class:`~pytest_ooda.executors.Engine`, a window of them at a time, and settles each
once.

Every run is added up front (:meth:`Dispatcher.add`), in the order the session will ask
for them, as a key and a function that makes its payload: a run is planned only when the
window takes it, so a session of 10,000 runs holds a window's worth of plans, not
10,000. At most ``window`` attempts are on the cluster at once (by default twice its
slots, so no worker waits for the controller); the rest wait here, where cancelling
them costs nothing. Each submission is one attempt, its ticket the run's key and
attempt number. Whoever waits (:meth:`Dispatcher.settle`) pumps: tops the window up,
takes finished attempts, and settles their runs. An attempt whose worker was lost goes
back to the front of the queue while the run has retries left, else the run settles as
lost; a run settles exactly once, so no run is lost or counted twice. ``on_settled``
hears of each run as it settles, in whatever order they finish: a session writes its
record then, not when its test item comes up.

Cancelling (early stopping) takes a run out of the queue, or withdraws a submitted
attempt that has not begun (the engine's ledger decides atomically); a run that has
begun finishes and settles as usual.

When the connection to the cluster itself is lost (:class:`EngineLost`: its scheduler
or head died, the client with it), every run on the cluster settles at once as lost,
for that cause (no retry can reach a cluster that is gone), :attr:`Dispatcher.lost`
says why, and waiting for a run not settled by then raises :class:`EngineLost`: the
session ends saying so. The runs still queued were never made.
"""

from __future__ import annotations

import collections
import contextlib
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pytest_ooda.executors.base import EngineLost, NotRun, Raised, Ran, TaskFailed, WorkerLost

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ooda.executors.base import Engine

__all__ = ["Dispatcher", "Settled"]

#: How long one wait for finished attempts lasts before the window is looked at again.
_WAIT = 1.0

#: What a run's maker returns: the payload the worker function runs and how many more
#: attempts a lost worker allows; ``None``: the run is not to be made after all.
Made = tuple[Any, int] | None


@dataclass(eq=False)
class _Job:
    key: str
    make: Callable[[], Made] | None
    payload: Any = None
    retries: int = 0
    attempts: int = 0
    lost: list[str] = field(default_factory=list)
    ticket: str = ""
    #: When its first attempt was submitted.
    started: float | None = None
    #: Waiting here (in the queue), not on the cluster.
    queued: bool = True


@dataclass(frozen=True)
class Settled:
    """How a run ended: ``value`` is what the worker function made (on worker
    ``where``); ``error`` what it raised, to raise again here; ``lost`` why each lost
    attempt was lost (every attempt, when the run never ran); ``cancelled``: it was
    cancelled before it began; ``failed``: the task broke (the worker's traceback);
    ``dropped``: its maker said not to make it."""

    key: str
    value: Any = None
    where: str | None = None
    error: Exception | None = None
    lost: tuple[str, ...] = ()
    cancelled: bool = False
    failed: str | None = None
    dropped: bool = False
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
        #: Why the connection to the cluster was lost (``None``: it was not).
        self.lost: str | None = None

    # ------------------------------------------------------------------ adding

    def ship(self, data: Any) -> None:
        """Put what every task receives (the packed source) on the cluster, once."""
        self.shared = self.engine.share(data)

    def add(self, key: str, make: Callable[[], Made]) -> None:
        """Queue run ``key``; ``make`` is called when the window takes it. A key added
        twice is one run."""
        if key in self._jobs:
            return
        job = _Job(key, make)
        self._jobs[key] = job
        self._queue.append(job)

    def __contains__(self, key: str) -> bool:
        return key in self._jobs

    # ------------------------------------------------------------------ waiting

    def settle(self, key: str) -> Settled:
        """Wait for run ``key`` to settle (pumping: others settle meanwhile). Its value
        is handed over once: the dispatcher keeps only how it ended."""
        if key not in self._jobs:
            raise KeyError(key)
        while key not in self._settled:
            self.pump(_WAIT)
        settled = self._settled[key]
        if settled.value is not None:
            self._settled[key] = replace(settled, value=None)
        return settled

    def is_settled(self, key: str) -> bool:
        return key in self._settled

    def pump(self, timeout: float) -> None:
        """Top the window up, then take what finished within ``timeout`` seconds;
        :class:`EngineLost` once the cluster is gone (see the module docstring)."""
        if self.lost is not None:
            raise EngineLost(self.lost)
        try:
            self._top_up()
            if not self._running:
                return
            for task, answer in self.engine.collect(tuple(self._running), timeout):
                job = self._running.pop(task)
                self._take(job, answer)
            self._top_up()
        except EngineLost as lost:
            self._lose_all(str(lost))
            raise

    def _lose_all(self, cause: str) -> None:
        """The cluster is gone: every run on it settles as lost, for ``cause``."""
        self.lost = cause
        self._queue.clear()
        running, self._running = list(self._running.values()), {}
        for job in running:
            job.lost.append(f"the connection to the cluster was lost: {cause}")
            self._settle(job, self._ended(job))

    def _top_up(self) -> None:
        while self._queue and len(self._running) < self.window:
            job = self._queue.popleft()
            if job.key in self._settled:
                continue  # cancelled while it waited here
            job.queued = False
            if job.make is not None:
                made, job.make = job.make(), None
                if made is None:
                    self._settle(job, Settled(job.key, dropped=True))
                    continue
                job.payload, job.retries = made
            job.attempts += 1
            if job.started is None:
                job.started = time.time()
            job.ticket = f"{job.key}-{job.attempts}"
            key = f"ooda-{self.session}-{job.ticket}"
            task = self.engine.submit(
                key, self.function, job.ticket, job.payload, self.shared, self._ledger
            )
            self._running[task] = job
            self.submitted += 1

    def _take(self, job: _Job, answer: Any) -> None:
        if isinstance(answer, WorkerLost):
            self._lost(job, str(answer))
        elif isinstance(answer, TaskFailed):
            self._settle(job, self._ended(job, failed=str(answer)))
        elif isinstance(answer, Ran):
            self._settle(job, self._ended(job, value=answer.value, where=answer.where))
        elif isinstance(answer, Raised):
            self._settle(job, self._ended(job, where=answer.where, error=answer.error))
        elif isinstance(answer, NotRun) and answer.cancelled:
            self._settle(job, self._ended(job, cancelled=True))
        elif isinstance(answer, NotRun):
            self._lost(job, answer.reason)
        else:
            answered = f"the worker answered {type(answer).__name__}"
            self._settle(job, self._ended(job, failed=answered))

    @staticmethod
    def _ended(job: _Job, **how: Any) -> Settled:
        return Settled(job.key, lost=tuple(job.lost), started=job.started, **how)

    def _lost(self, job: _Job, reason: str) -> None:
        self.engine.forget(job.ticket)
        job.lost.append(reason)
        if job.attempts <= job.retries:
            # First in line again: it was next before.
            job.queued = True
            self._queue.appendleft(job)
        else:
            self._settle(job, self._ended(job))

    def _settle(self, job: _Job, settled: Settled) -> None:
        if settled.key in self._settled:
            return
        job.payload = None  # not needed again: a settled run is not retried
        self._settled[settled.key] = settled
        if self.on_settled is not None:
            self.on_settled(settled)

    # ------------------------------------------------------------------ cancelling

    def cancel(self, key: str) -> bool:
        """Make sure run ``key`` never begins: ``True`` when it had not (it settles as
        cancelled), ``False`` when it has begun or settled already."""
        job = self._jobs.get(key)
        if job is None or key in self._settled:
            return False
        if not job.queued:
            task = next((task for task, held in self._running.items() if held is job), None)
            try:
                if task is None or not self.engine.withdraw(job.ticket):
                    return False
                del self._running[task]
                self.engine.cancel(task)
            except EngineLost as lost:
                self._lose_all(str(lost))
                return False
        # A queued one is passed over when the window reaches it.
        self._settle(job, self._ended(job, cancelled=True))
        return True

    def pending(self) -> list[str]:
        """The runs not settled yet, in the order they were added."""
        return [key for key in self._jobs if key not in self._settled]

    def close(self) -> None:
        """Stop: nothing more is submitted, what is on the cluster is withdrawn and
        dropped (a run under way is abandoned, unrecorded: ``--ooda-resume`` makes it
        later), and the engine disconnects."""
        self._queue.clear()
        try:
            if self.lost is None:
                for task, job in list(self._running.items()):
                    self.engine.withdraw(job.ticket)
                    self.engine.cancel(task)
        except (EngineLost, OSError) as lost:
            # Gone already (a broken pipe to a client that died): nothing to withdraw.
            self.lost = self.lost or str(lost)
        finally:
            self._running.clear()
            with contextlib.suppress(EngineLost, OSError):
                self.engine.close()
