"""A listening socket on the loopback of another process's network namespace.

A container started with ``--network none`` has a loopback of its own and nothing else,
and its image need not hold any program of ours. The proxy reaches into it instead: a
short-lived thread enters the container's network namespace (``setns`` on
``/proc/PID/ns/net``), opens a listening socket on its ``127.0.0.1``, and ends. The
socket stays in that namespace; the proxy's threads serve it from the host's, so the
agent in the container reaches the proxy at ``127.0.0.1:PORT`` and nothing else.

Entering another network namespace needs ``CAP_SYS_ADMIN`` over it: root with a local
Docker daemon. Anything else is an ``OSError`` the caller turns into advice.
"""

from __future__ import annotations

import os
import socket
import threading

__all__ = ["listen_in_netns"]

CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    setns = getattr(os, "setns", None)  # Python 3.12+
    if setns is not None:
        setns(fd, CLONE_NEWNET)
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def listen_in_netns(pid: int, *, host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port) of the network namespace
    of process ``pid``; ``OSError`` when it cannot be entered."""
    made: list[socket.socket] = []
    failed: list[OSError] = []

    def enter_and_listen() -> None:
        # Only this thread changes namespace, and it ends right after.
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
            try:
                _setns(fd)
            finally:
                os.close(fd)
            made.append(socket.create_server((host, port)))
        except OSError as exc:
            failed.append(exc)

    thread = threading.Thread(target=enter_and_listen, name="ooda-netns")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return made[0]
