"""Functions the engine tests run on real workers in place of a live run (imported by
the workers from this checkout): each claims its attempt in the ledger as the real one
does, and says where and when it ran."""

from __future__ import annotations

import os
import time
from typing import Any

from pytest_ooda.executors import NotRun, Ran, unpack_source


def sleep(ticket: str, seconds: float, source: Any, ledger: Any) -> Ran | NotRun:
    """Claim the attempt, unpack the source, sleep; (pid, start, end, digest dir)."""
    where = ledger.where()
    why = ledger.begin(ticket, where)
    if why is not None:
        return NotRun(why, cancelled=why == "cancelled")
    unpacked = unpack_source(source.digest, source.data)
    started = time.time()
    time.sleep(seconds)
    return Ran((os.getpid(), started, time.time(), str(unpacked)), where)


def capped(ticket: str, seconds: float, source: Any, ledger: Any) -> Ran | NotRun:
    """As :func:`sleep`, holding one of the cluster's slots of agent ``toy`` (2)."""
    where = ledger.where()
    with ledger.hold("toy", 2, ticket) as waited:
        why = ledger.begin(ticket, where)
        if why is not None:
            return NotRun(why, cancelled=why == "cancelled")
        started = time.time()
        time.sleep(seconds)
        ended = time.time()  # stamped before the slot is given back
    return Ran((os.getpid(), started, ended, waited), where)


def fails(ticket: str, seconds: float, source: Any, ledger: Any) -> Ran:
    raise RuntimeError("a bug on the worker")
