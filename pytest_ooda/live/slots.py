"""A cap on live runs at once, shared by every process of a session: a counting
semaphore made of lock files.

``--ooda-max-concurrent N`` gives each agent command (or API) N slot files in a
directory every pytest-xdist worker sees (the session directory the controller hands
out). A run holds an exclusive ``flock`` on one slot for as long as it runs; the kernel
drops the lock when the holder exits, even when it is killed, so a crashed worker never
keeps a slot. Waiting is polling with a short sleep: runs last seconds to minutes, so
the latency of a slot's release does not matter.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

__all__ = ["Slot", "acquire", "slot_key"]

_POLL = 0.05
_MAX_POLL = 0.5


class Slot:
    """A held slot: ``waited`` is how long it took to get (seconds)."""

    def __init__(self, fd: int, index: int, waited: float) -> None:
        self.fd = fd
        self.index = index
        self.waited = waited

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1


def slot_key(identity: str) -> str:
    """A file-name-safe key for an agent command line or ``provider:model``."""
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _try(directory: Path, key: str, limit: int) -> tuple[int, int] | None:
    for index in range(limit):
        path = directory / f"{key}-{index}.slot"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        return fd, index
    return None


@contextlib.contextmanager
def acquire(
    directory: Path,
    identity: str,
    limit: int,
    *,
    on_wait: Callable[[float], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Slot]:
    """Hold one of ``limit`` slots for ``identity`` while the block runs. ``on_wait``
    hears, about once a second while waiting, how long it has waited so far."""
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    directory.mkdir(parents=True, exist_ok=True)
    key = slot_key(identity)
    started = clock()
    pause = _POLL
    told = started
    while True:
        got = _try(directory, key, limit)
        if got is not None:
            break
        now = clock()
        if on_wait is not None and now - told >= 1.0:
            told = now
            on_wait(now - started)
        time.sleep(pause)
        pause = min(_MAX_POLL, pause * 1.5)
    slot = Slot(got[0], got[1], clock() - started)
    try:
        yield slot
    finally:
        slot.release()
