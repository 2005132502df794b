"""The loopback proxy between an agent CLI and its model API.

An agent is pointed at it by its base-URL variable (:meth:`ApiProxy.env`: for each
model API an agent declares, :class:`pytest_ooda.agents.ModelApi`, its variable set to
``http://127.0.0.1:PORT/<api>`` and the path the CLI expects after it); the first path
segment names the API, the rest goes to that API's upstream. In ``record`` mode every
request is forwarded to the upstream (the user's own base URL, or the provider's
default) and its response streams back unchanged while both are kept for the cassette;
in ``replay`` mode the cassette answers and the upstream is never contacted; in ``new``
mode the cassette answers what it can and the rest is forwarded and kept.

A request the cassette cannot answer in ``replay`` mode gets an HTTP 400 the agent gives
up on, and is kept as a :class:`~pytest_ooda.apireplay.divergence.Divergence`: the run
reports it, not the agent's reaction to the error. Auth headers are forwarded, never
kept. ``HEAD`` requests (the CLI's connection warm-up) and paths outside the providers
get an empty 200 locally.

The proxy is a standard-library threading HTTP server on a loopback port; it can also
listen on a Unix socket (a sandbox's relay connects there) or on a socket made
elsewhere (one bound inside a container's network namespace).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_ooda.agents import model_apis
from pytest_ooda.apireplay.canonical import (
    PART_FIELDS,
    PART_LISTS,
    Normaliser,
    canonical_request,
    digest,
    redact_value,
    renormalised,
)
from pytest_ooda.apireplay.cassette import TRANSIENT, Cassette, Exchange, Matcher
from pytest_ooda.apireplay.divergence import Divergence
from pytest_ooda.apireplay.sse import EventReader, coalesce, final_message, frame
from pytest_ooda.redact import redact_value as secrets_redacted

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from pytest_ooda._types import ApiMode
    from pytest_ooda.apireplay.canonical import Canonical
    from pytest_ooda.apireplay.sse import Event

__all__ = ["ApiProxy", "upstreams_from_env"]

#: Response headers a cassette keeps (none identifies an account).
KEPT_HEADERS = ("content-type", "request-id", "x-request-id")
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
        # Written by the proxy's own response line.
        "server",
        "date",
    }
)
UPSTREAM_TIMEOUT = 600.0


def upstreams_from_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each model API's upstream: the user's base URL from ``env`` (default: this
    process's), else the provider's own."""
    source = os.environ if env is None else env
    out: dict[str, str] = {}
    for name, api in model_apis().items():
        value = source.get(api.base_url_env, "").strip()
        out[name] = value.rstrip("/") if value else api.upstream
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _TcpServer | _UnixServer
    #: Whether the current request's answer has begun (then an error cannot replace it).
    answered = False

    def _any(self) -> None:
        self.server.proxy.handle(self)

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _any

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the agent's own output is what a run shows."""


class _TcpHandler(_Handler):
    # Headers and body are two writes: without TCP_NODELAY the second waits for the
    # client's delayed ACK of the first (40 ms on Linux).
    disable_nagle_algorithm = True


class _TcpServer(ThreadingHTTPServer):
    daemon_threads = True
    proxy: ApiProxy


class _UnixServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    proxy: ApiProxy


class _Lone:
    """What a handler serving one handed-out connection sees as its server."""

    def __init__(self, proxy: ApiProxy) -> None:
        self.proxy = proxy


#: The largest request body the proxy takes (the Messages API's own limit is 32 MB): a
#: longer one is refused before it is read, never buffered.
MAX_REQUEST_BYTES = 32 * 1024 * 1024


class _Refused(Exception):
    """A request the proxy will not read: its status and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _read_body(handler: _Handler) -> bytes:
    """The request's body, at most :data:`MAX_REQUEST_BYTES`; :class:`_Refused` for one
    longer or malformed."""
    too_large = _Refused(413, f"the request body is over {MAX_REQUEST_BYTES} bytes")
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        held = 0
        while True:
            try:
                size = int(handler.rfile.readline(64).split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise _Refused(400, "a chunk size that is no number") from None
            if size == 0:
                while handler.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            held += size
            if size < 0 or held > MAX_REQUEST_BYTES:
                raise too_large
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline(8192)
    try:
        length = int(handler.headers.get("Content-Length") or 0)
    except ValueError:
        raise _Refused(400, "a Content-Length that is no number") from None
    if length > MAX_REQUEST_BYTES:
        raise too_large
    return handler.rfile.read(length) if length > 0 else b""


def _error_body(provider: str, message: str) -> bytes:
    """An error in the API's own shape, so the agent shows ``message``."""
    return model_apis()[provider].error_body(message)


class ApiProxy:
    """One run's proxy; see the module docstring.

    ``cassette`` is what ``replay`` and ``new`` answer from (``None``: an empty one);
    ``normaliser`` holds the run's paths; ``redact`` is the recordings' redaction,
    applied to everything kept; ``upstreams`` maps providers to base URLs (default:
    :func:`upstreams_from_env`).
    """

    def __init__(
        self,
        mode: ApiMode,
        *,
        cassette: Cassette | None = None,
        normaliser: Normaliser | None = None,
        redact: Callable[[str], str] | None = None,
        upstreams: Mapping[str, str] | None = None,
    ) -> None:
        self.mode = mode
        self.cassette = cassette if cassette is not None else Cassette()
        self.normaliser = normaliser if normaliser is not None else Normaliser()
        self.redact = redact
        self.upstreams = dict(upstreams) if upstreams is not None else upstreams_from_env()
        # Recorded requests are held to today's rules too (a rule written after the
        # recording absorbs what it would have absorbed then).
        for exchange in self.cassette.exchanges:
            exchange.request = renormalised(
                exchange.request, self.cassette.parts, self.normaliser.rules
            )
        self.matcher = Matcher(self.cassette)
        #: Whether a request may have been recorded redacted (then a request that does
        #: not match as it is is redacted and tried again).
        self._redactions = redact is not None and self.cassette.has_redactions
        #: Requests the cassette had no answer for, in the order they came.
        self.divergences: list[Divergence] = []
        #: What went wrong talking to the upstream (an unreachable host, a cut stream).
        self.problems: list[str] = []
        #: How many requests were forwarded to an upstream.
        self.forwarded = 0
        #: How many of them the upstream failed, as the proxy saw it itself (a 429, 529 or
        #: 5xx answer, or no connection): the harness's evidence when the agent says the
        #: API failed (docs/evaluating.md).
        self.upstream_failures = 0
        self._lock = threading.Lock()
        #: Requests being answered; close() and recording() wait for them (an answer is
        #: kept after the agent has it, so the agent may be done before the proxy is).
        self._busy = 0
        self._idle = threading.Condition(self._lock)
        self._arrivals = 0
        self._recorded: list[tuple[int, Exchange]] = []
        #: Parts kept (digest as stored -> value), each once; which of them the
        #: redaction changed; and each request digest's stored digest.
        self._parts: dict[str, Any] = {}
        self._redacted_parts: set[str] = set()
        self._stored_as: dict[str, str] = {}
        self._servers: list[socketserver.BaseServer] = []
        self._threads: list[threading.Thread] = []
        self._unix_paths: list[Path] = []
        self._brokered: list[socket.socket] = []
        self.port: int | None = None

    # ------------------------------------------------------------------ listening

    def _serve(self, server: _TcpServer | _UnixServer) -> None:
        server.proxy = self
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        thread.start()
        self._servers.append(server)
        self._threads.append(thread)

    def start(self, *, host: str = "127.0.0.1", port: int = 0) -> ApiProxy:
        """Listen on ``host:port`` (0: a free port)."""
        server = _TcpServer((host, port), _TcpHandler)
        self.port = server.server_address[1]
        self._serve(server)
        return self

    def listen_unix(self, path: Path) -> None:
        """Also listen on the Unix socket ``path`` (created; removed on close)."""
        server = _UnixServer(str(path), _Handler)
        self._unix_paths.append(path)
        self._serve(server)

    def listen_on(self, listener: socket.socket) -> int:
        """Also serve ``listener``, a listening TCP socket made elsewhere; its port."""
        server = _TcpServer(("127.0.0.1", 0), _TcpHandler, bind_and_activate=False)
        server.socket.close()
        server.socket = listener
        self._serve(server)
        port: int = listener.getsockname()[1]
        return port

    def broker(self) -> socket.socket:
        """One end of a socket pair for a relay that may not open sockets of its own
        (a seccomp filter refuses Unix sockets): the relay is handed this end as an open
        file descriptor, writes a byte on it for each connection, and gets back the end
        of a new connected pair whose other end this proxy serves. Closed on close."""
        ours, theirs = socket.socketpair()
        # Both ends live as long as the proxy: the relays of every iteration inherit
        # ``theirs`` by its number.
        self._brokered += [ours, theirs]
        thread = threading.Thread(target=self._hand_out, args=(ours,), daemon=True)
        thread.start()
        self._threads.append(thread)
        return theirs

    def _hand_out(self, ours: socket.socket) -> None:
        while True:
            try:
                asked = ours.recv(1)
            except OSError:
                return
            if not asked:
                return
            served, handed = socket.socketpair()
            threading.Thread(target=self._serve_socket, args=(served,), daemon=True).start()
            try:
                socket.send_fds(ours, [b"k"], [handed.fileno()])
            except OSError:
                return
            finally:
                handed.close()

    def _serve_socket(self, connection: socket.socket) -> None:
        """Answer the requests on one connected socket, then close it."""
        try:
            _Handler(connection, "relay", _Lone(self))  # type: ignore[arg-type]
        except OSError:
            pass
        finally:
            connection.close()

    def url(self, provider: str, *, port: int | None = None) -> str:
        """The base URL an agent of ``provider`` is given."""
        chosen = self.port if port is None else port
        return f"http://127.0.0.1:{chosen}/{provider}{model_apis()[provider].url_suffix}"

    def env(self, *, port: int | None = None) -> dict[str, str]:
        """The base-URL variables pointing every agent's CLI at this proxy."""
        return {api.base_url_env: self.url(name, port=port) for name, api in model_apis().items()}

    def _wait_idle(self, timeout: float = 60.0) -> None:
        with self._idle:
            self._idle.wait_for(lambda: self._busy == 0, timeout=timeout)

    def close(self) -> None:
        """Stop listening, once every request under way is answered and kept; safe to
        call twice."""
        self._wait_idle()
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers.clear()
        self._threads.clear()
        for path in self._unix_paths:
            with contextlib.suppress(OSError):
                path.unlink()
        self._unix_paths.clear()
        for end in self._brokered:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()
        self._brokered.clear()

    def __enter__(self) -> ApiProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ requests

    def handle(self, handler: _Handler) -> None:
        """Answer one request (called on the server's thread for it)."""
        handler.answered = False
        with self._lock:
            self._arrivals += 1
            self._busy += 1
            arrival = self._arrivals
        try:
            self._answer(handler, arrival)
        except OSError:
            # The agent hung up (it was stopped, or timed out): nothing to answer.
            handler.close_connection = True
        except Exception as exc:  # a bug of ours must not look like the agent's failure
            with self._lock:
                self.problems.append(
                    f"the proxy failed on {handler.command} {handler.path}: {exc!r}"
                )
            handler.close_connection = True
            if not handler.answered:
                with contextlib.suppress(OSError):
                    handler.send_error(500, "pytest-ooda proxy error")
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def _answer(self, handler: _Handler, arrival: int) -> None:
        provider, _, rest = handler.path.lstrip("/").partition("/")
        try:
            body = _read_body(handler)
        except _Refused as refused:
            with self._lock:
                self.problems.append(f"a request was refused: {refused.message}")
            # What was not read cannot be skipped: the connection ends with the answer.
            handler.close_connection = True
            error = _error_body(provider, f"pytest-ooda proxy: {refused.message}")
            self._send(handler, refused.status, {"content-type": "application/json"}, error)
            return
        if handler.command == "HEAD" or provider not in model_apis():
            self._send(handler, 200, {}, b"")
            return
        path = "/" + rest
        request = canonical_request(provider, handler.command, path, body, self.normaliser)
        if self.mode != "record":
            exchange = self.matcher.take([request.key()])
            if exchange is None and self._redactions:
                exchange = self.matcher.take([self._redacted_key(request)])
            exchange = self._served(handler, request, exchange)
            if exchange is not None:
                self._replay(handler, exchange)
                return
            if self.mode == "replay":
                self._diverged(handler, request)
                return
        self._forward(handler, provider, path, body, request, arrival)

    def _served(
        self, handler: _Handler, request: Canonical, exchange: Exchange | None
    ) -> Exchange | None:
        """The exchange that answers ``request`` (``exchange``: the cassette's match, if
        any); an upgrade canary (:mod:`.canary`) answers a miss with the nearest one."""
        return exchange

    def _redacted_key(self, request: Canonical) -> str:
        """The key ``request`` has if the redaction changed it when it was recorded: its
        parts and top-level fields as the redaction would have stored them."""
        redact = self.redact
        if redact is None:
            return request.key()
        renamed: dict[str, str] = {}
        for name, value in request.parts.items():
            if name not in self.cassette.parts:
                stored = digest(secrets_redacted(value, redact))
                if stored in self.cassette.redacted_parts:
                    renamed[name] = stored
        skeleton = _rename(request.skeleton, renamed)
        return request.key(secrets_redacted(skeleton, redact))

    def _send(
        self, handler: _Handler, status: int, headers: Mapping[str, str], body: bytes
    ) -> None:
        handler.answered = True
        handler.send_response(status)
        for name, value in headers.items():
            # A line break in a value would be header lines of its own (a cassette's
            # are checked when it is read; this holds for every answer).
            if not any(mark in name + value for mark in "\r\n\x00"):
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD" and body:
            handler.wfile.write(body)
        handler.wfile.flush()

    def _replay(self, handler: _Handler, exchange: Exchange) -> None:
        if exchange.events is not None:
            text = frame(exchange.events)
        elif exchange.body is not None:
            text = exchange.body
        else:
            text = json.dumps(exchange.message, ensure_ascii=False)
        data = self.normaliser.expand(text, json_text=exchange.body is None).encode()
        self._send(handler, exchange.status, dict(exchange.headers), data)

    def _diverged(self, handler: _Handler, request: Canonical) -> None:
        key = request.key()
        divergence = Divergence.find(
            request,
            self.cassette,
            served=self.matcher.served(key),
            recorded=self.matcher.recorded(key),
        )
        with self._lock:
            self.divergences.append(divergence)
        message = "pytest-ooda " + divergence.headline()
        body = _error_body(request.provider, message)
        self._send(handler, 400, {"Content-Type": "application/json"}, body)

    # ------------------------------------------------------------------ upstream

    def _connection(self, provider: str, path: str) -> tuple[http.client.HTTPConnection, str]:
        base = urlsplit(self.upstreams[provider])
        prefix = base.path.rstrip("/")
        suffix = model_apis()[provider].url_suffix
        if suffix and path.startswith(suffix):
            # The agent's URL ends in the suffix as the provider's does; the upstream's
            # has its own.
            path = path[len(suffix) :] or "/"
        port = base.port
        host = base.hostname or "localhost"
        connection: http.client.HTTPConnection
        if base.scheme == "https":
            connection = http.client.HTTPSConnection(host, port, timeout=UPSTREAM_TIMEOUT)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT)
        return connection, prefix + path

    def _forward(
        self,
        handler: _Handler,
        provider: str,
        path: str,
        body: bytes,
        request: Canonical,
        arrival: int,
    ) -> None:
        connection, target = self._connection(provider, path)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP}
        headers["Accept-Encoding"] = "identity"
        with self._lock:
            self.forwarded += 1
        try:
            connection.request(handler.command, target, body=body or None, headers=headers)
            response = connection.getresponse()
        except OSError as exc:
            problem = f"the {provider} upstream {self.upstreams[provider]} is unreachable: {exc}"
            with self._lock:
                self.problems.append(problem)
                self.upstream_failures += 1
            self._send(
                handler, 502, {"Content-Type": "application/json"}, _error_body(provider, problem)
            )
            connection.close()
            return
        if response.status in TRANSIENT:
            with self._lock:
                self.upstream_failures += 1
        try:
            passed = {k: v for k, v in response.getheaders() if k.lower() not in _HOP}
            if response.getheader("Content-Type", "").startswith("text/event-stream"):
                raw = self._stream(handler, response, passed)
                if raw is None:
                    return
                self._keep(request, arrival, response, raw, streamed=True)
            else:
                data = response.read()
                self._send(handler, response.status, passed, data)
                self._keep(request, arrival, response, data, streamed=False)
        finally:
            connection.close()

    def _stream(
        self,
        handler: _Handler,
        response: http.client.HTTPResponse,
        headers: Mapping[str, str],
    ) -> bytes | None:
        """Pass a streamed response on chunk by chunk, as it comes; its bytes, or
        ``None`` when either side broke off."""
        handler.answered = True
        handler.send_response(response.status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunks: list[bytes] = []
        try:
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError as exc:
            with self._lock:
                self.problems.append(f"a streamed response broke off: {exc}")
            handler.close_connection = True
            return None
        return b"".join(chunks)

    # ------------------------------------------------------------------ recording

    def _redacted(self, value: Any) -> Any:
        return secrets_redacted(value, self.redact) if self.redact is not None else value

    def _clean(self, value: Any) -> Any:
        """A response's value as a cassette keeps it: the run's paths replaced, redacted."""
        return self._redacted(redact_value(value, self.normaliser.response))

    def _keep(
        self,
        request: Canonical,
        arrival: int,
        response: http.client.HTTPResponse,
        data: bytes,
        *,
        streamed: bool,
    ) -> None:
        """Keep one exchange for the cassette: normalised, redacted."""
        # Deltas are joined first: a path or a secret may be split over two of them.
        text = data.decode("utf-8", errors="replace")
        clean = self._clean
        events: list[Event] | None = None
        message: Any = None
        body: str | None = None
        if streamed:
            reader = EventReader()
            events = coalesce([*reader.feed(data), *reader.close()])
            events = [(name, clean(value)) for name, value in events]
            message = final_message(events)
        else:
            try:
                message = clean(json.loads(text)) if text.strip() else None
            except ValueError:
                body = clean(text)
        kept = {k.lower(): clean(v) for k, v in response.getheaders() if k.lower() in KEPT_HEADERS}
        renamed = self._stored_parts(request)
        skeleton = _rename(request.skeleton, renamed)
        stored = self._redacted(skeleton)
        exchange = Exchange(
            number=0,
            endpoint=request.endpoint,
            request=stored,
            status=response.status,
            headers=kept,
            events=events,
            message=message,
            body=body,
            replay=response.status not in TRANSIENT,
            redacted=stored != skeleton,
        )
        with self._lock:
            self._recorded.append((arrival, exchange))

    def _stored_parts(self, request: Canonical) -> dict[str, str]:
        """Keep the request's parts as stored (redacted); the digests the redaction
        changed, old -> new."""
        renamed: dict[str, str] = {}
        for name, value in request.parts.items():
            with self._lock:
                known = self._stored_as.get(name)
            if known is None:
                stored = self._redacted(value)
                known = digest(stored) if stored != value else name
                with self._lock:
                    self._stored_as[name] = known
                    self._parts[known] = stored
                    if known != name:
                        self._redacted_parts.add(known)
            if known != name:
                renamed[name] = known
        return renamed

    def recording(self) -> Cassette:
        """The cassette to write: in ``new`` mode the one read plus what was forwarded;
        else what was forwarded, in the order the requests came."""
        self._wait_idle()
        cassette = Cassette()
        if self.mode == "new":
            cassette.parts.update(self.cassette.parts)
            cassette.redacted_parts.update(self.cassette.redacted_parts)
            for old in self.cassette.exchanges:
                cassette.add(old)
        with self._lock:
            kept = sorted(self._recorded, key=lambda item: item[0])
            cassette.parts.update(self._parts)
            cassette.redacted_parts.update(self._redacted_parts)
        for _, exchange in kept:
            cassette.add(exchange)
        return cassette

    @property
    def recorded_count(self) -> int:
        """How many exchanges this proxy forwarded and kept."""
        with self._lock:
            return len(self._recorded)


def _rename(skeleton: Any, renamed: Mapping[str, str]) -> Any:
    """``skeleton`` with the part digests in ``renamed`` replaced."""
    if not renamed or not isinstance(skeleton, dict):
        return skeleton
    out = dict(skeleton)
    for name, value in skeleton.items():
        if name in PART_FIELDS and isinstance(value, str):
            out[name] = renamed.get(value, value)
        elif name in PART_LISTS and isinstance(value, list):
            out[name] = [renamed.get(item, item) for item in value]
    return out
