"""The process limit of a ``bwrap`` run (Docker sets its own with ``--pids-limit``).

Where the host lets this process make a cgroup with the ``pids`` controller (cgroup v1
as root, or a delegated cgroup v2 subtree), each run gets its own, ``pids.max`` set, and
every process of the run is started inside it: a fork bomb stops at the limit, however
many processes the user runs elsewhere. Otherwise, for a user other than root, the
resource limit ``RLIMIT_NPROC`` (``prlimit``) caps the processes of the run's user
namespace. Otherwise (root with no writable cgroup: the kernel does not hold root to
``RLIMIT_NPROC``) there is no limit, and :attr:`ProcessLimit.how` says so.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import select
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessLimit", "pids_cgroup_parent", "process_limit"]

_PREFIX = "ooda-run-"
_names = itertools.count(1)


def _mounts() -> list[tuple[str, str, str, str]]:
    """``(root, mount point, fstype, super options)`` of every cgroup mount."""
    found: list[tuple[str, str, str, str]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            found.append((fields[3], fields[4], rest[0], rest[2]))
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per hierarchy: ``{"pids": path}`` (v1) / ``{"": path}`` (v2)."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def _under(mount_root: str, mount_point: str, path: str) -> Path | None:
    if mount_root != "/" and not (path == mount_root or path.startswith(mount_root + "/")):
        return None
    relative = path[len(mount_root) :] if mount_root != "/" else path
    return Path(mount_point + relative)


def pids_cgroup_parent() -> Path | None:
    """A cgroup directory holding this process's ``pids`` accounting, in which it may
    make children with their own ``pids.max``; ``None`` where there is none."""
    own = _own_cgroups()
    for root, point, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" in options.split(",") and "pids" in own:
            parent = _under(root, point, own["pids"])
        elif fstype == "cgroup2" and "" in own:
            parent = _under(root, point, own[""])
            controllers = parent / "cgroup.subtree_control" if parent is not None else None
            try:
                if controllers is None or "pids" not in controllers.read_text().split():
                    continue
            except OSError:
                continue
        else:
            continue
        if parent is not None and parent.is_dir() and os.access(parent, os.W_OK):
            return parent
    return None


@dataclass
class ProcessLimit:
    """One run's process limit: ``procs`` is the file a process writes its pid into to
    join the run's cgroup (``None`` without one), ``argv`` what prefixes the command
    (``prlimit``), ``how`` says which, for the docs and the dry run."""

    limit: int
    how: str
    procs: Path | None = None
    argv: tuple[str, ...] = ()

    def stop(self) -> None:
        """Kill what is left in the run's cgroup and remove it. A cgroup with processes
        cannot be removed, and the end of the run's PID namespace takes a moment to
        reach them: the clean-up waits for the cgroup's own word that it is empty
        (:func:`_wait_empty`), at most ``STOP_WAIT`` seconds."""
        if self.procs is None:
            return
        directory = self.procs.parent
        if not directory.exists():
            return
        deadline = time.monotonic() + STOP_WAIT
        kill = directory / "cgroup.kill"
        if kill.exists():
            # cgroup v2: every process of the cgroup, and any it forks meanwhile.
            with contextlib.suppress(OSError):
                kill.write_text("1")
            _wait_empty(directory, deadline)
        else:
            # cgroup v1: the listed processes, again until none is listed.
            while (pids := _pids(self.procs)) and time.monotonic() < deadline:
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                _wait_exited(pids, deadline)
        with contextlib.suppress(OSError):
            directory.rmdir()


#: How long a run's clean-up waits for its cgroup to empty, in seconds.
STOP_WAIT = 5.0


def _pids(procs: Path) -> list[int]:
    try:
        return [int(pid) for pid in procs.read_text().split()]
    except (OSError, ValueError):
        return []


def _wait_empty(directory: Path, deadline: float) -> None:
    """Until cgroup v2's ``cgroup.events`` says ``populated 0`` (or ``deadline``): the
    kernel wakes a ``poll`` of that file when it changes, so nothing sleeps."""
    with contextlib.suppress(OSError), open(directory / "cgroup.events", "rb", 0) as events:
        watch = select.poll()
        watch.register(events, select.POLLPRI | select.POLLERR)
        while True:
            events.seek(0)
            if b"populated 0" in events.read():
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            watch.poll(left * 1000)


def _wait_exited(pids: list[int], deadline: float) -> None:
    """Until each of ``pids`` has exited (or ``deadline``): a process's pidfd becomes
    readable when it ends (cgroup v1 has no event for an empty cgroup)."""
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except OSError:
            continue  # gone already
        try:
            watch = select.poll()
            watch.register(handle, select.POLLIN)
            watch.poll(max(0.0, deadline - time.monotonic()) * 1000)
        finally:
            os.close(handle)


def _leftovers(parent: Path) -> None:
    """Remove the empty cgroups of runs whose session is gone (killed before it could)."""
    for child in parent.glob(_PREFIX + "*"):
        pid = child.name[len(_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                child.rmdir()


def _child(parent: Path, limit: int) -> Path | None:
    """A new cgroup under ``parent`` holding at most ``limit`` processes, or ``None``."""
    child = parent / f"{_PREFIX}{os.getpid()}-{next(_names)}-{secrets.token_hex(3)}"
    try:
        child.mkdir()
    except OSError:
        return None
    try:
        (child / "pids.max").write_text(str(limit))
    except OSError:
        with contextlib.suppress(OSError):
            child.rmdir()
        return None
    return child


def process_limit(limit: int) -> ProcessLimit:
    """The limit of at most ``limit`` processes for one run, enforced the best way this
    host allows (see the module docstring)."""
    parent = pids_cgroup_parent()
    if parent is not None:
        _leftovers(parent)
        child = _child(parent, limit)
        if child is not None:
            return ProcessLimit(limit, "cgroup", procs=child / "cgroup.procs")
    prlimit = shutil.which("prlimit")
    if os.geteuid() != 0 and prlimit is not None:
        return ProcessLimit(limit, "rlimit", argv=(prlimit, f"--nproc={limit}:{limit}", "--"))
    reason = "as root with no writable pids cgroup" if os.geteuid() == 0 else "no prlimit"
    return ProcessLimit(limit, f"none ({reason})")
