"""Live runs on a Dask cluster (``--ooda-executor=dask:ADDRESS``; ``pytest-ooda[dask]``).

The address is whatever ``distributed.Client`` accepts (``tcp://scheduler:8786``, a
``tls://`` address). A task is one attempt of one run; the cluster's slots are its
workers' threads. The session's ledger is a scheduler plugin (:mod:`.dask_ledger`), and
``--ooda-max-concurrent`` a ``distributed.Semaphore`` per agent, whose leases expire
with a worker that dies holding one. The workspace source is put on every worker once
(``scatter(broadcast=True)``), so losing a worker loses no copy the others need.

Dask moves a task whose worker died to another worker by itself; the ledger turns that
second start into a lost attempt (:meth:`DaskLedger.begin`), so the run's own ``retry:``
setting, not Dask's, decides whether it runs again.

A client that loses its scheduler cancels every future it holds and tries to reconnect:
from then on each call raises :class:`~pytest_ooda.executors.EngineLost`, so the
session ends saying so and records the runs it had under way.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import ExecutorError
from pytest_ooda.executors.base import Engine, EngineLost, TaskFailed, WorkerLost

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator

__all__ = ["DaskEngine", "DaskLedger"]

#: How long to try to reach the scheduler, and to wait for a first worker.
CONNECT_TIMEOUT = 10.0


class DaskLedger:
    """The worker's handle on the session's ledger (it pickles into every task)."""

    def __init__(self, plugin: str) -> None:
        self.plugin = plugin

    def begin(self, ticket: str, where: str) -> str | None:
        from distributed import get_client

        from pytest_ooda.executors import dask_ledger

        answer: str | None = get_client().run_on_scheduler(
            dask_ledger.begin, ticket, where, self.plugin
        )
        return answer

    @contextlib.contextmanager
    def hold(self, agent: str, limit: int, ticket: str) -> Iterator[float]:
        from distributed import Semaphore

        # One semaphore per agent and session, the same name on every worker.
        key = hashlib.sha256(agent.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        semaphore = Semaphore(max_leases=limit, name=f"{self.plugin}-slots-{key}")
        started = time.monotonic()
        semaphore.acquire()
        try:
            yield time.monotonic() - started
        finally:
            semaphore.release()

    def where(self) -> str:
        from distributed import get_worker

        return f"dask:{get_worker().address}"


class DaskEngine(Engine):
    name = "dask"
    extra = "dask"

    def __init__(self, address: str) -> None:
        import distributed  # noqa: F401 - ImportError here names the missing extra

        super().__init__(address)
        self._client: Any = None
        self._plugin = ""

    def connect(self, session: str) -> None:
        import cloudpickle
        from distributed import Client

        from pytest_ooda.executors import dask_ledger

        try:
            client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:
            raise ExecutorError(
                f"--ooda-executor={self.label}: cannot reach the Dask scheduler at "
                f"{self.address}: {exc}",
                hint="start one (`dask scheduler`, then `dask worker ADDRESS`) or give its "
                "address; see `ooda help scale-out`",
            ) from None
        self._client = client
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            self.close()
            raise ExecutorError(
                f"--ooda-executor={self.label}: the Dask scheduler at {self.address} has "
                f"no worker (none joined within {CONNECT_TIMEOUT:.0f} s)",
                hint="start workers: dask worker " + self.address,
            ) from None
        # The ledger runs in the scheduler, which need not have pytest-ooda installed.
        cloudpickle.register_pickle_by_value(dask_ledger)
        self._plugin = f"pytest-ooda-{session}"
        client.register_plugin(dask_ledger.Claims(self._plugin), name=self._plugin)

    @contextlib.contextmanager
    def _scheduler(self) -> Iterator[None]:
        """Calls on the scheduler: :class:`EngineLost` once the client has lost it
        (whatever the failed call raised then), before and after the call."""
        if not self._connected():
            raise EngineLost(self._lost())
        try:
            yield
        except Exception as exc:
            if self._connected():
                raise
            raise EngineLost(self._lost(exc)) from None
        if not self._connected():
            raise EngineLost(self._lost())

    def _connected(self) -> bool:
        return self._client is not None and self._client.status == "running"

    def _lost(self, exc: Exception | None = None) -> str:
        state = self._client.status if self._client is not None else "closed"
        text = f"the Dask scheduler at {self.address} was lost (the client is {state})"
        if exc is not None:
            said = " ".join(line.strip() for line in str(exc).strip().splitlines()[:2])
            text += f": {type(exc).__name__}" + (f": {said}" if said else "")
        return text

    def slots(self) -> int:
        with self._scheduler():
            return int(sum(self._client.nthreads().values()))

    def share(self, data: bytes) -> Any:
        with self._scheduler():
            return self._client.scatter(data, broadcast=True, hash=False)

    def submit(self, key: str, function: Callable[..., Any], *args: Any) -> Any:
        with self._scheduler():
            return self._client.submit(function, *args, key=key, pure=False, retries=0)

    def collect(self, tasks: Collection[Any], timeout: float) -> list[tuple[Any, Any]]:
        from distributed import wait

        with self._scheduler():
            with contextlib.suppress(TimeoutError), self._client.as_current():
                wait(list(tasks), timeout=timeout, return_when="FIRST_COMPLETED")
            done = [task for task in tasks if task.done()]
            finished = [task for task in done if task.status == "finished"]
            # One round trip for every finished result, not one each.
            values = self._client.gather(finished) if finished else []
            answers = dict(zip(finished, values, strict=True))
            return [(task, answers[task] if task in answers else _failure(task)) for task in done]

    def cancel(self, task: Any) -> None:
        with self._scheduler():
            task.cancel()

    def withdraw(self, ticket: str) -> bool:
        from pytest_ooda.executors import dask_ledger

        with self._scheduler():
            return bool(self._client.run_on_scheduler(dask_ledger.cancel, ticket, self._plugin))

    def ledger(self) -> DaskLedger:
        return DaskLedger(self._plugin)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        with contextlib.suppress(Exception):  # a scheduler already gone has nothing to undo
            if self._plugin:
                client.unregister_scheduler_plugin(self._plugin)
        client.close()


def _failure(task: Any) -> Exception:
    """What a task that did not finish stands for: its worker lost (Dask gave up after
    its workers kept dying), or its function's exception with the worker's traceback."""
    from distributed import KilledWorker

    exc = task.exception()
    if isinstance(exc, KilledWorker):
        return WorkerLost(str(exc))
    return TaskFailed(_described(exc, task))


def _described(exc: BaseException, task: Any) -> str:
    """The exception a task raised, with the worker's traceback when Dask kept it."""
    import traceback

    text = f"{type(exc).__name__}: {exc}"
    with contextlib.suppress(Exception):
        trace = task.traceback()
        if trace is not None:
            text = "".join(traceback.format_tb(trace)) + text
    return text
