"""What a distributed engine gives pytest-ooda: :class:`Engine`, a connection to a
cluster that runs functions on its workers, and :class:`Ledger`, the cluster-side
bookkeeping those functions share (whether a run may begin, and the cluster-wide
``--ooda-max-concurrent`` semaphore).

An engine knows nothing of runs: :mod:`.dispatch` decides what to submit and when, and
:mod:`.worker` is the function the workers run. An out-of-tree engine subclasses
:class:`Engine` and registers a factory under the ``pytest_ooda.executors`` entry-point
group (:mod:`.registry`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from contextlib import AbstractContextManager

__all__ = [
    "Engine",
    "EngineLost",
    "Ledger",
    "NotRun",
    "Raised",
    "Ran",
    "TaskFailed",
    "WorkerLost",
]


@dataclass(frozen=True)
class Ran:
    """A task's answer: it ran, on worker ``where``, and this is what it made."""

    value: Any
    where: str


@dataclass(frozen=True)
class NotRun:
    """A task's answer: it did not run (``reason``): the controller cancelled it, or it
    began before on a worker since lost."""

    reason: str
    cancelled: bool = False


@dataclass(frozen=True)
class Raised:
    """A task's answer: what it ran refused, with the error the controller raises as if
    it had run the function itself (a located ``OodaError``)."""

    error: Exception
    where: str


class WorkerLost(Exception):
    """The worker running a task went away (killed, its node died, the connection to it
    dropped): the task's run is an infrastructure fault, not the procedure's."""


class EngineLost(Exception):
    """The connection to the cluster itself is gone — its scheduler or head died, the
    raylet of this machine died and took the client with it, the network dropped — so
    nothing more can be submitted or collected. Any :class:`Engine` method may raise it;
    the message names the cause. The session ends saying so: its runs under way are
    recorded as lost, its finished ones are already in the log."""


class TaskFailed(Exception):
    """The function a task ran raised: a fault of pytest-ooda or of the worker's
    installation, reported with the worker's own traceback text."""


class Ledger(Protocol):
    """The cluster-side record of one session's runs as a task sees it (it pickles: a
    task receives it as an argument). Its operations are atomic on the cluster; the
    controller's side of it is :meth:`Engine.withdraw`."""

    def begin(self, ticket: str, where: str) -> str | None:
        """Claim attempt ``ticket`` for the task about to run it on ``where``: ``None``
        when it may run; else why not (the controller cancelled it, or it began before
        on a worker since lost and the engine is running it again)."""
        ...

    def hold(self, agent: str, limit: int, ticket: str) -> AbstractContextManager[float]:
        """Hold one of ``limit`` slots of ``agent`` across the cluster while the block
        runs; the block receives how long the slot took to get, in seconds."""
        ...

    def where(self) -> str:
        """The name of the worker this is called on (``dask:tcp://…``, ``ray:node…``)."""
        ...


class Engine(abc.ABC):
    """A connection to one cluster: submit a function with its arguments as a task,
    collect finished tasks with their results, cancel the queued ones."""

    #: The name ``--ooda-executor`` gives the engine (``dask``, ``ray``).
    name: str = ""
    #: The package extra that installs it (``pytest-ooda[dask]``).
    extra: str | None = None

    def __init__(self, address: str) -> None:
        self.address = address

    @property
    def label(self) -> str:
        """``engine:address``, as messages name the cluster."""
        return f"{self.name}:{self.address}"

    @abc.abstractmethod
    def connect(self, session: str) -> None:
        """Reach the cluster and set up session ``session``'s ledger; ``ExecutorError``
        naming the address when it cannot be reached or has no worker."""

    @abc.abstractmethod
    def slots(self) -> int:
        """How many tasks the cluster runs at once (its workers' threads or CPUs)."""

    @abc.abstractmethod
    def share(self, data: bytes) -> Any:
        """Put ``data`` on the cluster once; what :meth:`submit` passes to tasks in its
        place (each worker fetches it once, however many tasks use it)."""

    @abc.abstractmethod
    def submit(self, key: str, function: Callable[..., Any], *args: Any) -> Any:
        """Run ``function(*args)`` on a worker as task ``key``; a handle to wait on. The
        engine does not retry a task itself when its worker is lost."""

    @abc.abstractmethod
    def collect(self, tasks: Collection[Any], timeout: float) -> list[tuple[Any, Any]]:
        """The tasks among ``tasks`` that are finished, waiting up to ``timeout`` seconds
        for at least one, each with its answer: its function's value, or the exception
        that stands for it (``WorkerLost`` when its worker went away, ``TaskFailed``
        when its function raised). Their results are fetched together."""

    @abc.abstractmethod
    def cancel(self, task: Any) -> None:
        """Drop a task that will not run (its ledger attempt was cancelled) or whose
        result nobody will take."""

    @abc.abstractmethod
    def withdraw(self, ticket: str) -> bool:
        """Make sure attempt ``ticket`` never begins (the ledger's claim, taken by the
        controller): ``True`` when it had not, ``False`` when it has begun and will
        finish."""

    @abc.abstractmethod
    def ledger(self) -> Ledger:
        """The session's ledger (after :meth:`connect`)."""

    def forget(self, ticket: str) -> None:  # noqa: B027 - most engines free slots themselves
        """Attempt ``ticket``'s worker was lost: release what it held in the ledger.
        Engines whose slots are leases that expire with their holder do nothing."""

    @abc.abstractmethod
    def close(self) -> None:
        """Cancel what is still queued or running and disconnect."""
