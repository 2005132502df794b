"""``ooda view``'s server: a read-only web server over results directories, on the
standard library's ``http.server``, answering each request with a page of
:mod:`.routes` (rendered from the same templates as ``ooda report --html``).

Nothing is served from the directories themselves: every URL names a session, a run or
a page, looked up in the :class:`~pytest_ooda.view.index.ResultsIndex`, whose files
lie inside the directories (symlinks out of them are not followed). A path with a
``..`` segment (``%2e%2e`` too, once decoded), a backslash or a NUL byte is refused.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from pytest_ooda.errors import OodaError
from pytest_ooda.view.routes import ROUTES, Response, not_found

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

    from pytest_ooda.view.index import ResultsIndex

__all__ = ["Viewer", "make_server"]


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
        self.index.refresh()
        with self.index.lock:
            try:
                return route.view(self, key, query)
            except OodaError as error:
                from html import escape

                return Response(
                    HTTPStatus.INTERNAL_SERVER_ERROR,
                    "text/html; charset=utf-8",
                    f"<p>{escape(str(error))}</p>".encode(),
                )


def make_server(viewer: Viewer, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server answering GET (and HEAD) with ``viewer``'s pages; anything else is
    refused (the viewer never changes a file)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        server_version = "ooda-view"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, response: Response, *, body: bool) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if body:
                self.wfile.write(response.body)

        def do_GET(self) -> None:
            self._send(viewer.respond(self.path), body=True)

        def do_HEAD(self) -> None:
            self._send(viewer.respond(self.path), body=False)

        def _refuse(self) -> None:
            self._send(
                Response(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain", b"read-only\n"), body=True
            )

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
