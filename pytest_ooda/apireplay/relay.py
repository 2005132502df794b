"""The loopback relay a sandbox without a network runs its agent under.

Inside a sandbox with ``network: none`` (bubblewrap's own network namespace, only ``lo``)
the agent cannot reach the proxy's loopback port on the host. The proxy listens on a Unix
socket bound into the sandbox too, and the agent's command is started as::

    python3 -I -S relay.py SOCKET NAME=SUFFIX ... -- COMMAND ...

The relay listens on a free port of the sandbox's own loopback, sets each ``NAME`` to
``http://127.0.0.1:PORT`` + ``SUFFIX`` (``ANTHROPIC_BASE_URL=/anthropic``), starts the
command with that environment, copies every connection to the proxy and back, and exits
with the command's status. The agent so reaches the proxy and nothing else.

``SOCKET`` is the path of the proxy's Unix socket, or ``fd:N``: an inherited socket to
the proxy's broker (:meth:`~pytest_ooda.apireplay.proxy.ApiProxy.broker`), for a sandbox
whose seccomp filter refuses to open Unix sockets. For each connection the relay writes a
byte on it and receives, as an open file descriptor, a socket the proxy serves.

This file is run by path, inside the sandbox, by whatever Python the host has: it uses
the standard library only and imports nothing of pytest-ooda.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading

__all__ = ["main"]

USAGE = "usage: relay.py SOCKET NAME=SUFFIX ... -- COMMAND ..."


def _copy(source: socket.socket, target: socket.socket) -> None:
    """Copy ``source`` to ``target`` until ``source`` ends, then end ``target``'s side."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


_asking = threading.Lock()


def _open(path: str) -> socket.socket:
    """A new connection to the proxy."""
    if path.startswith("fd:"):
        broker = socket.socket(fileno=int(path[3:]))
        try:
            with _asking:  # one question, one answer at a time
                broker.sendall(b"c")
                _, fds, _, _ = socket.recv_fds(broker, 1, 1)
        finally:
            broker.detach()  # the descriptor stays open for the next connection
        if not fds:
            raise OSError("the proxy's broker is gone")
        return socket.socket(fileno=fds[0])
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        upstream.close()
        raise
    return upstream


def _connection(client: socket.socket, path: str) -> None:
    try:
        upstream = _open(path)
    except OSError:
        client.close()
        return
    back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
    back.start()
    _copy(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _accept(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        # Each piece is passed on as it comes: no waiting for the peer's delayed ACK.
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_connection, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    """Run the relay; the command's exit status (128 + N for a signal N)."""
    if "--" not in argv or argv.index("--") < 1 or argv.index("--") == len(argv) - 1:
        print(USAGE, file=sys.stderr)
        return 2
    cut = argv.index("--")
    path, names, command = argv[0], argv[1:cut], argv[cut + 1 :]
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    env = dict(os.environ)
    for item in names:
        name, _, suffix = item.partition("=")
        env[name] = f"http://127.0.0.1:{port}{suffix}"
    threading.Thread(target=_accept, args=(listener, path), daemon=True).start()
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"relay: cannot start {command[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    previous = {
        number: signal.signal(number, lambda sig, _frame: child.send_signal(sig))
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    }
    try:
        status = child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
