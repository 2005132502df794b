"""Live runs on a Ray cluster (``--ooda-executor=ray:ADDRESS``; ``pytest-ooda[ray]``).

The address is whatever ``ray.init(address=…)`` accepts: ``auto`` (the cluster this
machine belongs to), ``HOST:PORT`` (its head's GCS) or ``ray://HOST:10001`` (Ray
Client). A task is one attempt of one run, taking one CPU, so the cluster's slots are
its CPUs; Ray does not retry it (``max_retries=0``): a lost worker or node is the
run's infrastructure fault, retried under its own ``retry:`` setting. The session's
ledger, ``--ooda-max-concurrent``'s semaphore included, is one actor on the head node
(:class:`LedgerActor`), so it outlives the workers.

The Ray client (:class:`RayClient`) runs in a child process of the session
(:class:`RayEngine`, an :class:`~pytest_ooda.executors.ApartEngine`): Ray ends the
process of a driver whose local raylet dies, and the session must outlive that to say
so and record the runs it had under way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import ExecutorError
from pytest_ooda.executors.apart import ApartEngine
from pytest_ooda.executors.base import Engine, TaskFailed, WorkerLost

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator

__all__ = ["LedgerActor", "RayClient", "RayEngine", "RayLedger"]

#: How long to try to reach the head before ``ray.init``, which itself waits minutes.
CONNECT_TIMEOUT = 10.0


class LedgerActor:
    """One session's ledger, as a Ray actor: the attempts begun and cancelled, and the
    slots each agent holds. Its methods run one at a time on the actor's event loop."""

    def __init__(self) -> None:
        self.begun: dict[str, str] = {}
        self.cancelled: set[str] = set()
        self.held: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        # Made on the actor's own event loop, where every method runs.
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def begin(self, ticket: str, where: str) -> str | None:
        if ticket in self.cancelled:
            return "cancelled"
        earlier = self.begun.get(ticket)
        if earlier is not None:
            return f"the worker running it ({earlier}) was lost"
        self.begun[ticket] = where
        return None

    async def cancel(self, ticket: str) -> bool:
        if ticket in self.begun:
            return False
        self.cancelled.add(ticket)
        return True

    async def acquire(self, agent: str, limit: int, ticket: str) -> None:
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self.counts.get(agent, 0) < limit)
            self.counts[agent] = self.counts.get(agent, 0) + 1
            self.held[ticket] = agent

    async def release(self, ticket: str) -> None:
        changed = self._condition()
        async with changed:
            agent = self.held.pop(ticket, None)
            if agent is not None:
                self.counts[agent] -= 1
                changed.notify_all()


class RayLedger:
    """The worker's handle on the session's ledger actor (it pickles into every task)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def begin(self, ticket: str, where: str) -> str | None:
        import ray

        answer: str | None = ray.get(self.actor.begin.remote(ticket, where))
        return answer

    @contextlib.contextmanager
    def hold(self, agent: str, limit: int, ticket: str) -> Iterator[float]:
        import ray

        started = time.monotonic()
        ray.get(self.actor.acquire.remote(agent, limit, ticket))
        try:
            yield time.monotonic() - started
        finally:
            ray.get(self.actor.release.remote(ticket))

    def where(self) -> str:
        import ray

        return f"ray:node-{ray.get_runtime_context().get_node_id()[:12]}"


class RayEngine(ApartEngine):
    """The session's side: the Ray client runs apart (see the module docstring)."""

    name = "ray"
    extra = "ray"
    inner = "pytest_ooda.executors.ray_engine:RayClient"

    def __init__(self, address: str) -> None:
        import ray  # noqa: F401 - ImportError here names the missing extra

        super().__init__(address)


class RayClient(Engine):
    """The Ray driver, in the session's child process."""

    name = "ray"
    extra = "ray"

    def __init__(self, address: str) -> None:
        super().__init__(address)
        self._actor: Any = None
        self._remote: dict[Any, Any] = {}

    def logs_dir(self) -> str | None:
        """Where Ray's own log of this driver goes (read when the driver ends), if it
        has one here (not under Ray Client)."""
        with contextlib.suppress(Exception):
            from ray._private import worker

            node = worker._global_node
            if node is not None:
                return str(node.get_logs_dir_path())
        return None

    def connect(self, session: str) -> None:
        import ray

        self._probe()
        try:
            ray.init(
                address=self.address,
                namespace="pytest-ooda",
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
            raise ExecutorError(
                f"--ooda-executor={self.label}: cannot connect to the Ray cluster at "
                f"{self.address}: {exc}",
                hint="start one (`ray start --head`, then `ray start --address=HEAD:6379` "
                "on each worker) or give its address; see `ooda help scale-out`",
            ) from None
        if self.slots() < 1:
            self.close()
            raise ExecutorError(
                f"--ooda-executor={self.label}: the Ray cluster at {self.address} has no CPU "
                "to run on",
                hint="start a node with CPUs: ray start --address=HEAD:6379",
            )
        ledger = ray.remote(LedgerActor).options(
            name=f"pytest-ooda-{session}",
            num_cpus=0,
            # The head node outlives the workers that runs are made on.
            resources={"node:__internal_head__": 0.001},
        )
        self._actor = ledger.remote()

    def _probe(self) -> None:
        """``HOST:PORT`` or ``ray://HOST:PORT``: reachable within the timeout, before
        ``ray.init`` (which waits minutes for a head that is not there)."""
        target = self.address.removeprefix("ray://")
        host, colon, port = target.rpartition(":")
        if not colon or not port.isdigit():
            return  # `auto`, `local`: ray.init finds (or fails to find) the cluster itself
        try:
            with socket.create_connection((host.strip("[]"), int(port)), CONNECT_TIMEOUT):
                pass
        except OSError as exc:
            raise ExecutorError(
                f"--ooda-executor={self.label}: cannot reach the Ray cluster at "
                f"{self.address}: {exc.strerror or exc}",
                hint="start its head (`ray start --head --port=6379`) or give its address; "
                "see `ooda help scale-out`",
            ) from None

    def slots(self) -> int:
        import ray

        return int(ray.cluster_resources().get("CPU", 0))

    def share(self, data: bytes) -> Any:
        import ray

        return ray.put(data)

    def submit(self, key: str, function: Callable[..., Any], *args: Any) -> Any:
        import ray

        remote = self._remote.get(function)
        if remote is None:
            # Ray exports a function to the cluster when it is made remote: once.
            remote = self._remote[function] = ray.remote(
                num_cpus=1, max_retries=0, retry_exceptions=False
            )(function)
        return remote.options(name=key).remote(*args)

    def collect(self, tasks: Collection[Any], timeout: float) -> list[tuple[Any, Any]]:
        import ray

        pending = list(tasks)
        ready, _ = ray.wait(pending, num_returns=1, timeout=timeout, fetch_local=False)
        if not ready:
            return []
        ready, _ = ray.wait(pending, num_returns=len(pending), timeout=0, fetch_local=False)
        try:
            # One fetch for every ready result, not one each.
            return list(zip(ready, ray.get(ready), strict=True))
        except Exception:  # one of them failed: told apart one by one
            return [(task, _answer(task)) for task in ready]

    def cancel(self, task: Any) -> None:
        import ray

        with contextlib.suppress(Exception):
            ray.cancel(task, force=False)

    def withdraw(self, ticket: str) -> bool:
        import ray

        return bool(ray.get(self._actor.cancel.remote(ticket)))

    def forget(self, ticket: str) -> None:
        # A worker lost while holding a slot never releases it: the controller does.
        self._actor.release.remote(ticket)

    def ledger(self) -> RayLedger:
        return RayLedger(self._actor)

    def close(self) -> None:
        import ray

        if self._actor is not None:
            with contextlib.suppress(Exception):
                ray.kill(self._actor)
            self._actor = None
        ray.shutdown()


def _answer(task: Any) -> Any:
    """One task's value, or the exception that stands for it."""
    import ray
    from ray import exceptions

    try:
        return ray.get(task)
    except exceptions.RayTaskError as exc:
        return TaskFailed(str(exc))
    except exceptions.RayError as exc:
        # The worker process or its node died, or the result went with it.
        return WorkerLost(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
