"""What this folder's stand-ins of model APIs (``chat_standin.py``, ``gemini_standin.py``,
``responses_standin.py``) share: the HTTP handler's plumbing — ``GET /_standin/log``,
answers with a length or as server-sent events, no access log — and ``serve``, which
listens on 127.0.0.1 (port 0) and writes the chosen port to a file. Each stand-in says
how its API answers a ``POST``. Standard library only: the stand-ins run as scripts.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


class ScriptState:
    """What every stand-in's script keeps: which invocation is served, the failures
    already answered per (invocation, step), and the log of requests."""

    def __init__(self, path: Path) -> None:
        script = json.loads(path.read_text())
        self.sessions: list[list[dict[str, Any]]] = script["sessions"]
        self.watch: str | None = script.get("watch")
        self.session = 0
        self.failed: dict[tuple[int, int], int] = {}
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def steps(self, number: int) -> list[dict[str, Any]]:
        return self.sessions[number] if number < len(self.sessions) else []

    def failure(self, number: int, index: int, step: dict[str, Any]) -> dict[str, Any] | None:
        """The step's ``fail`` while it has answers of it left (counted here)."""
        fail = step.get("fail")
        used = self.failed.get((number, index), 0)
        if not fail or used >= int(fail.get("times", 1)):
            return None
        self.failed[(number, index)] = used + 1
        return dict(fail)


class StandinHandler(BaseHTTPRequestHandler):
    """A stand-in's handler: its subclass answers ``do_POST`` (and shapes errors as its
    API does)."""

    script: ScriptState

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def error_body(self, status: int, message: str) -> bytes:
        """An error body: ``{"error": {"code", "message"}}``; a stand-in whose API
        words its errors otherwise answers in that API's shape."""
        return json.dumps({"error": {"code": status, "message": message}}).encode()

    def do_GET(self) -> None:
        if self.path == "/_standin/log":
            with self.script.lock:
                body = "".join(json.dumps(entry) + "\n" for entry in self.script.log).encode()
            self.send(200, "application/x-ndjson", body)
        else:
            self.send(404, "application/json", self.error_body(404, "no such route"))

    def refuse(self, entry: dict[str, Any], fail: dict[str, Any]) -> None:
        """Log and answer a scripted failure (``fail``: its status and message)."""
        status = int(fail["status"])
        self.script.log.append({**entry, "served": f"error:{status}"})
        message = fail.get("message", f"stand-in error {status}")
        self.send(status, "application/json", self.error_body(status, message))

    def read_body(self) -> tuple[bytes, dict[str, Any]]:
        """The request's bytes and its JSON (``{}`` when it is none)."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        return raw, body if isinstance(body, dict) else {}

    def send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_events(self, events: Iterable[bytes]) -> None:
        """A 200 of server-sent events, each already framed; the connection closes."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in events:
            self.wfile.write(event)
        self.wfile.flush()
        self.close_connection = True


def serve(handler: type[StandinHandler], script: ScriptState, port_file: Path) -> None:
    """Serve ``script`` on 127.0.0.1 (port 0), the port written to ``port_file``."""
    handler.script = script
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    port_file.write_text(str(server.server_address[1]))
    server.serve_forever()
