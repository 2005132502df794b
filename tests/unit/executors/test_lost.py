"""A connection to the cluster that is lost (issue 39, item 5): the dispatcher settles
every run under way as lost for that cause and says so to whoever waits, closing never
raises; and an engine whose client runs apart (:class:`ApartEngine`, as Ray's does) is
outlived by the session when its child dies, the cause named from the child's exit."""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_ooda.executors import ApartEngine, Dispatcher, Engine, EngineLost, Ran


class Toy(Engine):
    """An engine on no cluster: a task's answer is its function's value, unless the
    engine was told to lose its cluster after ``lose_after`` collects."""

    name = "toy"

    def __init__(self, address: str, lose_after: int | None = None) -> None:
        super().__init__(address)
        self.lose_after = lose_after
        self.collects = 0
        self.tasks: dict[int, Any] = {}
        self.closed = False

    def connect(self, session: str) -> None:
        pass

    def slots(self) -> int:
        return 2

    def share(self, data: bytes) -> Any:
        return data

    def submit(self, key: str, function: Any, *args: Any) -> Any:
        number = len(self.tasks) + 1
        self.tasks[number] = (function, args)
        return number

    def collect(self, tasks: Any, timeout: float) -> list[tuple[Any, Any]]:
        self.collects += 1
        if self.lose_after is not None and self.collects > self.lose_after:
            raise EngineLost("the toy scheduler died")
        first = sorted(tasks)[0]
        function, args = self.tasks[first]
        return [(first, function(*args))]

    def cancel(self, task: Any) -> None:
        pass

    def withdraw(self, ticket: str) -> bool:
        raise BrokenPipeError(32, "Broken pipe")

    def ledger(self) -> Any:
        return None

    def close(self) -> None:
        self.closed = True


def made(ticket: str, payload: Any, shared: Any, ledger: Any) -> Ran:
    return Ran(payload, "toy-worker")


def test_runs_under_way_settle_as_lost_and_the_rest_raise() -> None:
    settled: list[Any] = []
    engine = Toy("here", lose_after=1)
    dispatcher = Dispatcher(engine, made, session="s", window=2, on_settled=settled.append)
    for key in "abcd":
        dispatcher.add(key, lambda key=key: (key, 5))
    assert dispatcher.settle("a").value == "a"  # and "c" took its place on the cluster
    with pytest.raises(EngineLost, match="the toy scheduler died"):
        dispatcher.settle("d")
    assert dispatcher.lost == "the toy scheduler died"
    # "b" and "c" were on the cluster: each settled once, as lost for that cause, and
    # not tried again; "d" waited here and was never made.
    cause = "the connection to the cluster was lost: the toy scheduler died"
    assert [(s.key, s.lost) for s in settled[1:]] == [("b", (cause,)), ("c", (cause,))]
    assert dispatcher.settle("b").lost == (cause,)
    assert dispatcher.pending() == ["d"]
    with pytest.raises(EngineLost):
        dispatcher.settle("d")
    dispatcher.close()  # withdrawing would break a pipe: it is not even tried
    assert engine.closed


def test_closing_on_a_broken_pipe_never_raises() -> None:
    engine = Toy("here")
    dispatcher = Dispatcher(engine, made, session="s", window=1)
    dispatcher.add("a", lambda: ("a", 0))
    dispatcher.add("b", lambda: ("b", 0))
    dispatcher.pump(0)  # "a" made, "b" submitted in its place
    assert dispatcher.pending() == ["b"]
    dispatcher.close()  # withdraw raises BrokenPipeError (the CI flake): swallowed
    assert engine.closed
    assert dispatcher.lost is not None


class Dying(Toy):
    """The child's engine: its process ends (as Ray ends a driver whose raylet died)
    when asked to collect."""

    def collect(self, tasks: Any, timeout: float) -> list[tuple[Any, Any]]:
        os._exit(3)


class Apart(ApartEngine):
    name = "toy"
    inner = "tests.unit.executors.test_lost:Dying"


def test_an_engine_apart_outlives_its_client_and_names_the_cause() -> None:
    engine = Apart("here")
    engine.connect("s")
    try:
        assert engine.slots() == 2
        task = engine.submit("k", made, "t", "value", engine.share(b"x"), engine.ledger())
        with pytest.raises(EngineLost, match=r"its toy client ended \(exit code 3\)"):
            engine.collect([task], 1.0)
        # Every call from now on says the same, and closing does not raise.
        with pytest.raises(EngineLost, match="exit code 3"):
            engine.withdraw("t")
    finally:
        engine.close()


def test_an_engine_apart_answers_as_the_engine_would() -> None:
    class Alive(ApartEngine):
        name = "toy"
        inner = "tests.unit.executors.test_lost:Toy"

    engine = Alive("here")
    engine.connect("s")
    try:
        shared, ledger = engine.share(b"source"), engine.ledger()
        tasks = [engine.submit(f"k{i}", made, f"t{i}", i, shared, ledger) for i in range(3)]
        assert engine.collect(tasks, 1.0) == [(tasks[0], Ran(0, "toy-worker"))]
        with pytest.raises(BrokenPipeError):  # the engine's own error, raised here
            engine.withdraw("t1")
    finally:
        engine.close()
