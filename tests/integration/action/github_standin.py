"""A local stand-in of the few GitHub REST API calls the action makes (listing,
creating and editing an issue's comments), on 127.0.0.1, keeping what it was asked."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "test-token"


@dataclass
class GitHubStandIn:
    """Comments by id, per ``owner/repo#number``; every request as (method, path)."""

    repository: str = "octo/prompts"
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    next_id: int = 1000
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, number: int, body: str, user: str = "someone") -> dict[str, Any]:
        with self.lock:
            self.next_id += 1
            comment = {
                "id": self.next_id,
                "number": number,
                "body": body,
                "user": {"login": user},
                "html_url": f"https://github.example/{self.repository}/pull/{number}#issuecomment-{self.next_id}",
            }
            self.comments[self.next_id] = comment
            return comment

    def on(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["number"] == number]


def serve(state: GitHubStandIn) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``state`` on 127.0.0.1; returns the server and its base URL."""
    prefix = f"/repos/{state.repository}"
    listed = re.compile(re.escape(prefix) + r"/issues/(\d+)/comments\Z")
    edited = re.compile(re.escape(prefix) + r"/issues/comments/(\d+)\Z")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            del format, args

        def _answer(self, status: int, data: Any) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            return dict(json.loads(self.rfile.read(length) or b"{}"))

        def _handle(self, method: str) -> None:
            url = urlsplit(self.path)
            state.requests.append((method, self.path))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._answer(401, {"message": "Bad credentials"})
                return
            found = listed.match(url.path)
            if found and method == "GET":
                query = parse_qs(url.query)
                size = int(query.get("per_page", ["30"])[0])
                page = int(query.get("page", ["1"])[0])
                comments = sorted(state.on(int(found.group(1))), key=lambda c: c["id"])
                self._answer(200, comments[(page - 1) * size : page * size])
            elif found and method == "POST":
                self._answer(201, state.add(int(found.group(1)), self._body()["body"], "bot"))
            elif (match := edited.match(url.path)) and method == "PATCH":
                comment = state.comments.get(int(match.group(1)))
                if comment is None:
                    self._answer(404, {"message": "Not Found"})
                    return
                comment["body"] = self._body()["body"]
                self._answer(200, comment)
            else:
                self._answer(404, {"message": "Not Found"})

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PATCH(self) -> None:
            self._handle("PATCH")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
