"""Live runs on a distributed engine (``--ooda-executor=ENGINE:ADDRESS``), without pytest:
the :class:`Engine` interface and the ledger its tasks share (``base``), the engines
that can be named, built in (``dask_engine``, ``ray_engine``) or from the
``pytest_ooda.executors`` entry-point group (``registry``), the project source shipped
to the workers once per session (``source``), the controller's window of submitted runs
(``dispatch``) and the function a worker runs (``worker``). See docs/scale-out.md."""

from __future__ import annotations

from pytest_ooda.executors.apart import ApartEngine
from pytest_ooda.executors.base import (
    Engine,
    EngineLost,
    Ledger,
    NotRun,
    Raised,
    Ran,
    TaskFailed,
    WorkerLost,
)
from pytest_ooda.executors.dispatch import Dispatcher, Settled
from pytest_ooda.executors.registry import (
    ENTRY_POINT_GROUP,
    LOCAL,
    ExecutorSpec,
    engines,
    make_engine,
    open_engine,
    parse_executor,
)
from pytest_ooda.executors.source import (
    MAX_SOURCE_BYTES,
    Source,
    cache_dir,
    pack_source,
    rebase,
    unpack_source,
)
from pytest_ooda.executors.worker import Job, job_for, run_attempt

__all__ = [
    "ENTRY_POINT_GROUP",
    "LOCAL",
    "MAX_SOURCE_BYTES",
    "ApartEngine",
    "Dispatcher",
    "Engine",
    "EngineLost",
    "ExecutorSpec",
    "Job",
    "Ledger",
    "NotRun",
    "Raised",
    "Ran",
    "Settled",
    "Source",
    "TaskFailed",
    "WorkerLost",
    "cache_dir",
    "engines",
    "job_for",
    "make_engine",
    "open_engine",
    "pack_source",
    "parse_executor",
    "rebase",
    "run_attempt",
    "unpack_source",
]
