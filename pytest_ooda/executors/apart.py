"""An engine whose cluster client lives in a child process of its own.

Ray's client is native code that ends its process when the raylet of its machine dies
(the connection to the plasma store breaks: "Terminate the process"): a pytest session
that held it would vanish with no summary, no message and its runs under way unsaid.
:class:`ApartEngine` keeps the session out of reach of that: it starts a child process
(``spawn``: nothing of the session's threads is copied) that holds the real engine and
answers the session's calls over a pipe, one at a time. Tasks, the shared source and
the ledger stay in the child; the session holds numbers and :class:`Handle` names for
them. When the child ends, or stops answering, every call raises
:class:`~pytest_ooda.executors.EngineLost` naming the cause — the child's exit status
and, where the engine wrote one, the last warning of its own log — and the
:class:`~pytest_ooda.executors.Dispatcher` ends the session saying so.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from pytest_ooda.errors import ExecutorError
from pytest_ooda.executors.base import Engine, EngineLost

if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

__all__ = ["ApartEngine", "Handle"]

#: How long a call other than ``collect`` may take before the child is taken for lost
#: (submitting to a cluster that is alive takes milliseconds; connecting, seconds).
ANSWER_TIMEOUT = 180.0
#: How long ``collect`` may overrun the wait it was given.
COLLECT_GRACE = 60.0


@dataclass(frozen=True)
class Handle:
    """What the session holds for an object that lives in the child (``shared``: the
    packed source; ``ledger``: the session's ledger): the child puts the object in its
    place when a task is submitted with it."""

    name: str


class ApartEngine(Engine):
    """The session's side: every :class:`Engine` call is answered by ``inner`` (an
    engine class, ``"module:Class"``) in a child process (see the module docstring)."""

    #: The engine the child runs, ``"module:Class"``.
    inner: ClassVar[str] = ""

    def __init__(self, address: str) -> None:
        super().__init__(address)
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._logs: str | None = None
        self._lost: str | None = None

    # ------------------------------------------------------------------ the child

    def connect(self, session: str) -> None:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        self._process = context.Process(
            target=serve, args=(theirs, self.inner, self.address), daemon=True
        )
        self._process.start()
        theirs.close()
        self._conn = ours
        try:
            self._logs = self._call("connect", session)
        except EngineLost as lost:
            raise ExecutorError(
                f"--ooda-executor={self.label}: the {self.name} client did not start: {lost}"
            ) from None

    def _call(self, operation: str, *args: Any, wait: float = ANSWER_TIMEOUT) -> Any:
        """``operation`` answered by the child; :class:`EngineLost` when it cannot be."""
        if self._lost is not None:
            raise EngineLost(self._lost)
        if self._conn is None:
            raise EngineLost(f"the {self.name} client is not connected")
        try:
            self._conn.send((operation, args))
            if not self._conn.poll(wait):
                self._lose(f"its {self.name} client answered nothing for {wait:.0f} s")
            status, value = self._conn.recv()
        except (EOFError, OSError):
            self._lose(self._ended())
        if status == "error":
            raise value
        return value

    def _lose(self, cause: str) -> NoReturn:
        """Take the connection for lost: the child is stopped, every call from now on
        raises :class:`EngineLost` with ``cause``."""
        self._lost = cause
        self._stop()
        raise EngineLost(cause)

    def _ended(self) -> str:
        """Why the child is gone: its exit status and the last warning of its log."""
        process = self._process
        if process is not None:
            process.join(5)
        code = process.exitcode if process is not None else None
        said = _last_warning(self._logs, process.pid if process is not None else None)
        if code is None:
            how = "its connection to it broke"
        else:
            how = f"exit code {code}" if code >= 0 else f"killed by signal {-code}"
        return f"its {self.name} client ended ({how})" + (f": {said}" if said else "")

    def _stop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        process = self._process
        if process is not None and process.is_alive():
            process.terminate()
            process.join(10)
            if process.is_alive():
                process.kill()
                process.join(5)

    # ------------------------------------------------------------------ the calls

    def slots(self) -> int:
        slots: int = self._call("slots")
        return slots

    def share(self, data: bytes) -> Any:
        return self._call("share", data)

    def submit(self, key: str, function: Callable[..., Any], *args: Any) -> Any:
        return self._call("submit", key, function, *args)

    def collect(self, tasks: Collection[Any], timeout: float) -> list[tuple[Any, Any]]:
        answers: list[tuple[Any, Any]] = self._call(
            "collect", list(tasks), timeout, wait=timeout + COLLECT_GRACE
        )
        return answers

    def cancel(self, task: Any) -> None:
        self._call("cancel", task)

    def withdraw(self, ticket: str) -> bool:
        return bool(self._call("withdraw", ticket))

    def forget(self, ticket: str) -> None:
        self._call("forget", ticket)

    def ledger(self) -> Any:
        return Handle("ledger")

    def close(self) -> None:
        with contextlib.suppress(EngineLost, ExecutorError):
            if self._lost is None and self._conn is not None:
                self._call("close", wait=30.0)
        self._stop()


def _last_warning(logs: str | None, pid: int | None) -> str | None:
    """The last warning or error line the engine's client wrote to its own log (Ray:
    ``logs/python-core-driver-*_PID.log``), without its timestamp and source."""
    if not logs or pid is None:
        return None
    found = sorted(Path(logs).glob(f"python-core-driver-*_{pid}.log"))
    if not found:
        return None
    try:
        lines = found[-1].read_text(encoding="utf-8", errors="replace").splitlines()[-200:]
    except OSError:
        return None
    for line in reversed(lines):
        # [2026-12-07 04:47:31,794 W 30359 30359] connection.cc:216: The connection ...
        head, bracket, rest = line.partition("] ")
        if bracket and head.startswith("[") and head.split()[2:3] in (["W"], ["E"], ["C"]):
            return rest.partition(": ")[2].strip() or rest.strip()
    return None


# --------------------------------------------------------------------------- the child


def serve(conn: Connection, inner: str, address: str) -> None:
    """The child's loop: the real engine, answering one call at a time until the
    session closes it or goes away."""
    module, _, name = inner.partition(":")
    engine: Engine = getattr(importlib.import_module(module), name)(address)
    held: dict[str, Any] = {"next": 0}
    tasks: dict[int, Any] = {}
    while True:
        try:
            operation, args = conn.recv()
        except (EOFError, OSError):
            break  # the session is gone
        try:
            value = _answer(engine, operation, args, held, tasks)
        except Exception as exc:  # the session raises it as if it had called the engine
            _send(conn, ("error", exc))
        else:
            _send(conn, ("ok", value))
        if operation == "close":
            break
    with contextlib.suppress(Exception):
        engine.close()


def _answer(
    engine: Engine,
    operation: str,
    args: tuple[Any, ...],
    held: dict[str, Any],
    tasks: dict[int, Any],
) -> Any:
    if operation == "connect":
        engine.connect(*args)
        logs = getattr(engine, "logs_dir", None)
        return logs() if callable(logs) else None
    if operation == "share":
        held["shared"] = engine.share(*args)
        return Handle("shared")
    if operation == "submit":
        key, function, *rest = args
        placed = [_placed(engine, value, held) for value in rest]
        held["next"] += 1
        number = held["next"]
        tasks[number] = engine.submit(key, function, *placed)
        return number
    if operation == "collect":
        numbers, timeout = args
        by_task = {tasks[number]: number for number in numbers if number in tasks}
        done = engine.collect(list(by_task), timeout)
        for task, _ in done:
            tasks.pop(by_task[task], None)
        return [(by_task[task], answer) for task, answer in done]
    if operation == "cancel":
        task = tasks.pop(args[0], None)
        if task is not None:
            engine.cancel(task)
        return None
    if operation == "close":
        engine.close()
        return None
    if operation in ("slots", "withdraw", "forget"):
        return getattr(engine, operation)(*args)
    raise ValueError(f"no such engine call: {operation}")


def _placed(engine: Engine, value: Any, held: dict[str, Any]) -> Any:
    """``value``, or the object a :class:`Handle` stands for."""
    if not isinstance(value, Handle):
        return value
    if value.name == "ledger" and "ledger" not in held:
        held["ledger"] = engine.ledger()
    return held[value.name]


def _send(conn: Connection, message: tuple[str, Any]) -> None:
    """Answer the session; an answer that does not pickle is said as an error."""
    try:
        conn.send(message)
    except (OSError, EOFError):
        pass
    except Exception as exc:
        with contextlib.suppress(OSError, EOFError):
            conn.send(("error", ExecutorError(f"the engine's answer did not pickle: {exc!r}")))
