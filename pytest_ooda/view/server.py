"""``ooda view``'s server: a read-only web server over results directories, on the
standard library's ``http.server``, answering each request with a page of
:mod:`.routes` (rendered from the same templates as ``ooda report --html``).

Nothing is served from the directories themselves: every URL names a session, a run or
a page, looked up in the :class:`~pytest_ooda.view.index.ResultsIndex`, whose files
lie inside the directories (symlinks out of them are not followed). A path with a
``..`` segment (``%2e%2e`` too, once decoded), a backslash or a NUL byte is refused.
"""

from __future__ import annotations

import contextlib
import io
import math
import selectors
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from pytest_ooda.errors import OodaError
from pytest_ooda.view.access import Access
from pytest_ooda.view.routes import ROUTES, Response, not_found

if TYPE_CHECKING:
    from pytest_ooda.view.index import ResultsIndex

__all__ = ["Viewer", "make_server"]

#: Threads answering requests: pages render in parallel, never more than this many.
WORKERS = 8
#: Requests in hand (answered or waiting for a thread) before a new one is told 503.
MAX_QUEUED = 256
#: Connections accepted and waiting for their request, and how long one may wait.
MAX_WAITING = 1024
IDLE_S = 10.0
#: Each read and write of a request being answered.
IO_TIMEOUT_S = 10.0
#: A request's line and headers, however slowly they come: a client that sends a byte
#: now and then (each read in time) holds a thread no longer than this.
REQUEST_S = 10.0
BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    b"Retry-After: 1\r\nContent-Length: 5\r\n\r\nbusy\n"
)


class Viewer:
    """Answers a request path with a page (:data:`~pytest_ooda.view.routes.ROUTES`),
    reading the index as it grows."""

    def __init__(self, index: ResultsIndex, *, k: int, title: str = "ooda view") -> None:
        self.index = index
        self.k = k
        self.title = title

    def respond(self, target: str) -> Response:
        parts = urlsplit(target)
        path = unquote(parts.path)
        if "\x00" in path or "\\" in path or ".." in path.split("/"):
            return not_found("refused: the path leaves the results directories")
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        for route in ROUTES:
            key = route.match(path)
            if key is not None:
                break
        else:
            return not_found(f"no page {path}")
        if not route.reads_index:
            return route.view(self, key, query)
        # The index is brought up to date under its lock; the page is rendered outside
        # it, so pages render in parallel (a refresh only adds to what they read).
        self.index.refresh()
        try:
            return route.view(self, key, query)
        except OodaError as error:
            from html import escape

            return Response(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                "text/html; charset=utf-8",
                f"<p>{escape(str(error))}</p>".encode(),
            )


class _Server(HTTPServer):
    """An ``http.server`` that answers on a bounded pool of threads.

    A connection is accepted at once and waits, costing no thread, until its request
    arrives (:meth:`_watch`); one that sends nothing for :data:`IDLE_S` is closed, and past
    :data:`MAX_WAITING` waiting connections the oldest is. A request that arrived is
    answered by one of :data:`WORKERS` threads, each read and write bounded by
    :data:`IO_TIMEOUT_S`; past :data:`MAX_QUEUED` requests in hand a new one is told
    ``503`` at once. So half-open connections cannot take the threads, and a flood of
    requests waits its turn instead of starting a thread each."""

    #: Connections the kernel holds before they are accepted (the default, 5, drops a burst).
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        # Ready before binding: a port in use calls server_close() from the constructor.
        self.pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="ooda-view")
        self.waiting = selectors.DefaultSelector()
        self.since: dict[socket.socket, tuple[float, Any]] = {}
        self.queued = 0
        self.guard = threading.Lock()
        self.closed = threading.Event()
        self.watcher = threading.Thread(target=self._watch, name="ooda-view-accept", daemon=True)
        super().__init__(address, handler)
        self.watcher.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.guard:
            self.since[request] = (time.monotonic(), client_address)
            self.waiting.register(request, selectors.EVENT_READ)

    def _watch(self) -> None:
        while not self.closed.is_set():
            ready = self.waiting.select(timeout=0.2)
            now = time.monotonic()
            with self.guard:
                for key, _ in ready:
                    conn = key.fileobj
                    assert isinstance(conn, socket.socket)
                    _, client = self.since.pop(conn)
                    self.waiting.unregister(conn)
                    self._hand_over(conn, client)
                oldest = sorted(self.since, key=lambda conn: self.since[conn][0])
                excess = len(oldest) - MAX_WAITING
                for number, conn in enumerate(oldest):
                    if number >= excess and now - self.since[conn][0] < IDLE_S:
                        break
                    del self.since[conn]
                    self.waiting.unregister(conn)
                    self.shutdown_request(conn)

    def _hand_over(self, conn: socket.socket, client: Any) -> None:
        if self.queued >= MAX_QUEUED:
            with contextlib.suppress(OSError):
                conn.settimeout(1)
                conn.sendall(BUSY)
            self.shutdown_request(conn)
            return
        self.queued += 1
        self.pool.submit(self._answer, conn, client)

    def _answer(self, conn: socket.socket, client: Any) -> None:
        try:
            self.finish_request(conn, client)
        except Exception:
            self.handle_error(conn, client)
        finally:
            self.shutdown_request(conn)
            with self.guard:
                self.queued -= 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (or stalled past the timeout) is no news; anything
        else is one line, never a traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        sys.stderr.write(f"ooda view: a request failed: {type(error).__name__}: {error}\n")

    def server_close(self) -> None:
        self.closed.set()
        if self.watcher.ident is not None:
            self.watcher.join()
        with self.guard:
            for conn in list(self.since):
                self.waiting.unregister(conn)
                self.shutdown_request(conn)
            self.since.clear()
        self.waiting.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
        super().server_close()


class _Arriving(io.RawIOBase):
    """A connection's reading side held to a deadline for the whole of a request's head
    (:data:`REQUEST_S`), not only for each read: a client dripping one byte at a time
    would otherwise hold one of the :data:`WORKERS` threads for as long as it likes."""

    def __init__(self, conn: socket.socket) -> None:
        super().__init__()
        self.conn = conn
        self.until = math.inf

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.until - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.conn.settimeout(min(left, IO_TIMEOUT_S))
        return self.conn.recv_into(buffer)


def make_server(
    viewer: Viewer, host: str, port: int, *, token: bool = False
) -> tuple[HTTPServer, Access]:
    """An HTTP server answering GET (and HEAD) with ``viewer``'s pages, to requests that
    :class:`~pytest_ooda.view.access.Access` lets in (``token``: ask for one on loopback
    too); anything else is refused (the viewer never changes a file). With it, the rules
    it checks (its token, if any)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "ooda-view"
        timeout = IO_TIMEOUT_S
        arriving: _Arriving

        def log_message(self, format: str, *args: Any) -> None:
            return

        def setup(self) -> None:
            super().setup()
            self.rfile.close()
            self.arriving = _Arriving(self.connection)
            self.rfile = io.BufferedReader(self.arriving)

        def handle_one_request(self) -> None:
            self.arriving.until = time.monotonic() + REQUEST_S
            super().handle_one_request()

        def parse_request(self) -> bool:
            parsed = super().parse_request()
            # The head is in: the answer's writes get the ordinary bound again.
            self.arriving.until = math.inf
            self.connection.settimeout(IO_TIMEOUT_S)
            return parsed

        def _send(
            self, response: Response, *, body: bool, headers: tuple[tuple[str, str], ...] = ()
        ) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(response.body)

        def _answer(self, *, body: bool) -> None:
            refused = access.check(self.path, self.headers.get("Host"), self.headers.get("Cookie"))
            if refused is None:
                self._send(viewer.respond(self.path), body=body)
                return
            text = Response(refused.status, "text/plain; charset=utf-8", refused.text.encode())
            self._send(text, body=body, headers=refused.headers)

        def do_GET(self) -> None:
            self._answer(body=True)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def _refuse(self) -> None:
            self._send(
                Response(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain", b"read-only\n"), body=True
            )

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    server = _Server((host, port), Handler)
    access = Access.for_address(host, int(server.server_address[1]), token=token)
    return server, access
