"""The library's dispatcher on a real Dask cluster (a scheduler and two ``dask worker``
processes on 127.0.0.1), with small functions in place of live runs: every run settles
once, on both workers; a worker killed mid-run loses nothing and duplicates nothing;
cancelling stops exactly the runs that had not begun; the cluster-wide cap holds; the
source is unpacked once per machine, not per run."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.executors import Dispatcher, Settled, open_engine, pack_source, parse_executor

from . import toys
from .helpers import peak

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from .clusters import DaskCluster


@pytest.fixture
def dispatch(
    dask_cluster: DaskCluster, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Dispatcher]]:
    made: list[Dispatcher] = []
    project = tmp_path / "project"
    project.mkdir()
    (project / "file.txt").write_text(request.node.name)

    def make(function: Callable[..., Any], **kwargs: Any) -> Dispatcher:
        session = f"t{len(made)}-{time.time_ns()}"
        engine = open_engine(parse_executor(f"dask:{dask_cluster.address}"), session)
        dispatcher = Dispatcher(engine, function, session=session, **kwargs)
        dispatcher.ship(pack_source(project))
        made.append(dispatcher)
        return dispatcher

    yield make
    for dispatcher in made:
        dispatcher.close()


def _made(seconds: float, retries: int = 0) -> Callable[[], tuple[float, int]]:
    return lambda: (seconds, retries)


def test_every_run_settles_once_on_both_workers(
    dispatch: Callable[..., Dispatcher], dask_cluster: DaskCluster
) -> None:
    heard: list[Settled] = []
    dispatcher = dispatch(toys.sleep, on_settled=heard.append)
    # Long enough that one worker cannot make all eight before the other takes some,
    # however loaded the machine is: four slots for two seconds of runs.
    for index in range(8):
        dispatcher.add(f"run{index}", _made(1.0))
    dispatcher.add("run0", _made(1.0))  # the same key again: one run
    settled = [dispatcher.settle(f"run{index}") for index in range(8)]
    assert sorted(item.key for item in heard) == sorted(f"run{i}" for i in range(8))
    assert all(item.ran and not item.lost for item in settled)
    assert {item.where for item in settled} == {
        f"dask:{address}" for address in dask_cluster.worker_addresses()
    }
    # Two workers of two threads: runs overlapped.
    assert peak([(item.value[1], item.value[2]) for item in settled]) >= 3
    # Unpacked once on this machine, into the directory named by the digest.
    assert len({item.value[3] for item in settled}) == 1
    assert len(list((dask_cluster.cache / "pytest-ooda/sources").iterdir())) >= 1


def test_a_killed_worker_loses_nothing_and_duplicates_nothing(
    dispatch: Callable[..., Dispatcher], dask_cluster: DaskCluster
) -> None:
    spare = dask_cluster.add_worker("spare")
    dask_cluster.wait_for(3)
    dispatcher = dispatch(toys.sleep)
    for index in range(10):
        dispatcher.add(f"run{index}", _made(1.5, 1))
    dispatcher.pump(0.5)
    time.sleep(0.5)  # every worker is running some
    dask_cluster.kill_worker(spare)
    settled = [dispatcher.settle(f"run{index}") for index in range(10)]
    assert all(item.ran for item in settled)
    lost = [item for item in settled if item.lost]
    assert lost, "the killed worker was running runs"
    assert all("was lost" in item.lost[0] for item in lost)
    assert all(item.where != f"dask:{spare}" for item in lost)
    assert dispatcher.submitted == 10 + len(lost)


def test_without_retries_a_lost_run_settles_as_lost(
    dispatch: Callable[..., Dispatcher], dask_cluster: DaskCluster
) -> None:
    spare = dask_cluster.add_worker("spare2")
    dask_cluster.wait_for(3)
    dispatcher = dispatch(toys.sleep, window=6)
    for index in range(6):
        dispatcher.add(f"run{index}", _made(2.0, 0))
    dispatcher.pump(0.5)
    time.sleep(0.5)
    dask_cluster.kill_worker(spare)
    settled = [dispatcher.settle(f"run{index}") for index in range(6)]
    never = [item for item in settled if not item.ran]
    assert never
    assert all(item.lost and item.value is None and not item.cancelled for item in never)


def test_cancelling_stops_only_runs_that_have_not_begun(
    dispatch: Callable[..., Dispatcher],
) -> None:
    # A window of 6 on 4 slots: 4 begin, 2 wait on the cluster, 2 wait here.
    dispatcher = dispatch(toys.sleep, window=6)
    for index in range(8):
        dispatcher.add(f"run{index}", _made(2.0))
    dispatcher.pump(0.1)
    time.sleep(1.0)
    cancelled = {f"run{index}" for index in range(8) if dispatcher.cancel(f"run{index}")}
    dispatcher.add("late", _made(0.1))
    assert dispatcher.settle("late").ran  # the window passes over the cancelled ones
    settled = {f"run{index}": dispatcher.settle(f"run{index}") for index in range(8)}
    assert dispatcher.submitted == 6 + 1
    began = {run_id for run_id, item in settled.items() if item.ran}
    assert len(began) == 4
    assert cancelled == set(settled) - began
    assert all(settled[run_id].cancelled for run_id in cancelled)


def test_the_cap_holds_across_the_cluster(dispatch: Callable[..., Dispatcher]) -> None:
    dispatcher = dispatch(toys.capped)
    for index in range(6):
        dispatcher.add(f"run{index}", _made(0.5))
    settled = [dispatcher.settle(f"run{index}") for index in range(6)]
    spans = [(item.value[1], item.value[2]) for item in settled]
    assert peak(spans) == 2
    assert max(item.value[3] for item in settled) > 0.3  # some waited for a slot


def test_a_function_that_raises_settles_as_failed_with_its_traceback(
    dispatch: Callable[..., Dispatcher],
) -> None:
    dispatcher = dispatch(toys.fails)
    dispatcher.add("run", _made(0.0, 3))
    settled = dispatcher.settle("run")
    assert settled.failed is not None
    assert "a bug on the worker" in settled.failed
    assert "toys.py" in settled.failed
    assert dispatcher.submitted == 1  # a bug is not retried


def test_a_run_is_made_when_the_window_takes_it(dispatch: Callable[..., Dispatcher]) -> None:
    made: list[str] = []

    def maker(key: str) -> Callable[[], tuple[float, int] | None]:
        def make() -> tuple[float, int] | None:
            made.append(key)
            return None if key == "skip" else (0.2, 0)

        return make

    dispatcher = dispatch(toys.sleep, window=2)
    for key in ("a", "skip", "b", "c", "d"):
        dispatcher.add(key, maker(key))
    assert made == []
    assert dispatcher.settle("a").ran
    assert dispatcher.settle("skip").dropped
    assert "d" not in made or made.index("d") > made.index("b")
    assert all(dispatcher.settle(key).ran for key in ("b", "c", "d"))
    assert made == ["a", "skip", "b", "c", "d"]
