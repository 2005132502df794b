"""A real local HTTP server speaking the Anthropic Messages API, for the judge's tests:
each POST is answered from a script (a verdict, a malformed text, an HTTP error), and
every request is counted, so a test can prove what was asked and what was cached."""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def verdict(word: str, reason: str = "looks right", score: float | None = None) -> str:
    """A well-formed judge answer."""
    body: dict[str, Any] = {"verdict": word, "reason": reason}
    if score is not None:
        body["score"] = score
    return json.dumps(body)


class JudgeServer:
    """``with JudgeServer() as server:`` listens on 127.0.0.1 (a free port);
    ``server.answer(text)`` queues a reply, ``server.fail(529)`` an HTTP error;
    ``server.default`` answers when the queue is empty (``None``: a 500 saying so).
    ``server.requests`` holds each request's JSON body."""

    def __init__(self, default: str | None = None) -> None:
        self.queue: deque[tuple[int, str]] = deque()
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, text = owner._next(body)
                if status == 200:
                    payload = json.dumps(
                        {
                            "content": [{"type": "text", "text": text}],
                            "usage": {"input_tokens": 100, "output_tokens": 10},
                        }
                    ).encode()
                else:
                    payload = json.dumps(
                        {"error": {"type": "overloaded", "message": text}}
                    ).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def _next(self, body: dict[str, Any]) -> tuple[int, str]:
        with self.lock:
            self.requests.append(body)
            if self.queue:
                return self.queue.popleft()
            if self.default is not None:
                return 200, self.default
            return 500, "nothing scripted for this request"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, *texts: str) -> JudgeServer:
        for text in texts:
            self.queue.append((200, text))
        return self

    def fail(self, status: int, message: str = "Overloaded") -> JudgeServer:
        self.queue.append((status, message))
        return self

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def judge_block(self, *, votes: int = 1, extra: str = "", inputs: str = "[output]") -> str:
        """An ``expect.judge`` YAML block pointed at this server (prices: $1 and $2
        per million input and output tokens, so one answer costs $0.00012)."""
        return (
            "  judge:\n"
            "    rubric: The greeting names everyone present.\n"
            f"    inputs: {inputs}\n"
            "    judge:\n"
            "      ai_api:\n"
            "        provider: anthropic\n"
            "        model: judge-model\n"
            f"        base_url: {self.url}\n"
            "        api_key_env: OODA_TEST_JUDGE_KEY\n"
            "        price_input_per_mtok: 1\n"
            "        price_output_per_mtok: 2\n"
            f"    votes: {votes}\n" + extra
        )
