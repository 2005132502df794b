"""A bwrap run's cgroup is removed once its processes are gone, waiting on the kernel's
own word (a pidfd on cgroup v1, ``cgroup.events`` on v2), never on a sleep."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from pytest_ooda.sandbox import limits


def _cgroup2_root() -> Path | None:
    """A cgroup v2 mount this process may make a child cgroup in (as root)."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        head, _, tail = line.partition(" - ")
        if tail.split()[:1] == ["cgroup2"]:
            point = Path(head.split()[4])
            if os.access(point, os.W_OK):
                return point
    return None


def _no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(seconds: float) -> None:
        raise AssertionError(f"the clean-up slept {seconds} s")

    monkeypatch.setattr(limits.time, "sleep", refuse)


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def test_a_run_cgroup_is_emptied_and_removed_without_sleeping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limit = limits.process_limit(16)
    if limit.procs is None:
        pytest.skip(f"no pids cgroup on this host ({limit.how})")
    sleepers = [_sleeper() for _ in range(3)]
    for sleeper in sleepers:
        limit.procs.write_text(str(sleeper.pid))
    assert sorted(int(pid) for pid in limit.procs.read_text().split()) == sorted(
        sleeper.pid for sleeper in sleepers
    )
    _no_sleep(monkeypatch)
    limit.stop()
    assert not limit.procs.parent.exists()
    assert [sleeper.wait(timeout=10) for sleeper in sleepers] == [-9, -9, -9]


def test_stopping_an_empty_or_removed_cgroup_is_quiet() -> None:
    limit = limits.process_limit(16)
    if limit.procs is None:
        pytest.skip(f"no pids cgroup on this host ({limit.how})")
    limit.stop()
    assert not limit.procs.parent.exists()
    limit.stop()  # already gone


def test_the_wait_for_processes_ends_when_they_do() -> None:
    sleeper = _sleeper()
    sleeper.kill()
    limits._wait_exited([sleeper.pid], time.monotonic() + 30)
    # Exited (a zombie until reaped): its pidfd said so, well before the deadline.
    assert sleeper.poll() == -9
    limits._wait_exited([sleeper.pid, 2**22 + 7], time.monotonic() + 30)  # gone: no wait


def test_cgroup_v2_populated_0_ends_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    root = _cgroup2_root()
    if root is None:
        pytest.skip("no writable cgroup v2 mount on this host")
    group = root / f"ooda-test-{os.getpid()}"
    group.mkdir()
    sleeper = _sleeper()
    try:
        (group / "cgroup.procs").write_text(str(sleeper.pid))
        assert b"populated 1" in (group / "cgroup.events").read_bytes()
        sleeper.kill()
        _no_sleep(monkeypatch)
        limits._wait_empty(group, time.monotonic() + 30)
        assert b"populated 0" in (group / "cgroup.events").read_bytes()
    finally:
        sleeper.kill()
        sleeper.wait()
        group.rmdir()
