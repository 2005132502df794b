"""A scripted model-API upstream for the proxy's tests: a real HTTP server on a loopback
port answering Anthropic's Messages (streamed or not, ``count_tokens``), OpenAI's
Responses and Chat Completions (streamed or not) with numbered answers derived from the
request, so a replay can be told from a second upstream call. It counts every connection
and can fail the first requests with a status."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WORKSPACE_MARK = "WORKSPACE"


def anthropic_events(text: str, *, tool_path: str | None = None) -> list[tuple[str, Any]]:
    blocks: list[tuple[str, Any]] = []
    content = [{"type": "text", "text": ""}]
    blocks.append(
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": content[0]},
        )
    )
    for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
        blocks.append(
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        )
    blocks.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    if tool_path is not None:
        blocks.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Write",
                        "input": {},
                    },
                },
            )
        )
        arguments = json.dumps({"file_path": tool_path, "content": "x"})
        for piece in (arguments[:10], arguments[10:]):
            blocks.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 1,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
            )
        blocks.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    return [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [], "stop_reason": None, "usage": {"input_tokens": 3}}}),
        ("ping", {"type": "ping"}),
        *blocks,
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "tool_use" if tool_path else "end_turn"},
                           "usage": {"output_tokens": 7}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip


def responses_events(text: str) -> list[tuple[str, Any]]:
    done = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        ],
    }
    return [
        ("response.created", {"type": "response.created", "response": {"id": "resp_1"}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "delta": text}),
        ("response.completed", {"type": "response.completed", "response": done}),
    ]  # fmt: skip


def chat_chunks(text: str) -> list[tuple[None, Any]]:
    base = {"id": "chat_1", "object": "chat.completion.chunk", "model": "m"}
    return [
        (None, {**base, "choices": [{"index": 0,
                                     "delta": {"role": "assistant", "content": text[:3]}}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {"content": text[3:]}}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "run", "arguments": "{\"a\":"}}]}}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": "1}"}}]}, "finish_reason": "tool_calls"}]}),
        (None, "[DONE]"),
    ]  # fmt: skip


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        if name is not None:
            out.append(f"event: {name}\n")
        out.append(f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n")
    return "".join(out).encode()


class Upstream:
    """The scripted upstream; ``answer(body)`` is the text each answer carries."""

    def __init__(self, *, fail: int = 0, fail_status: int = 529) -> None:
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.answered = 0
        self.connections = 0
        self.fail = fail
        self.fail_status = fail_status
        self.workspace: str | None = None
        self.lock = threading.Lock()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                with upstream.lock:
                    upstream.connections += 1
                super().setup()

            def do_POST(self) -> None:
                upstream.serve(self)

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        with self.lock:
            self.requests.append(
                (
                    handler.command,
                    handler.path,
                    {k.lower(): v for k, v in handler.headers.items()},
                    body,
                )
            )
            failing = self.fail > 0
            if failing:
                self.fail -= 1
        if failing:
            payload = json.dumps({"type": "error", "error": {"type": "overloaded_error"}})
            self._send(handler, self.fail_status, "application/json", payload.encode())
            return
        with self.lock:
            self.answered += 1
            text = f"answer {self.answered} to {_last_text(body)}"
        stream = isinstance(body, dict) and body.get("stream") is True
        path = handler.path.split("?")[0]
        tool = f"{self.workspace}/made.txt" if self.workspace else None
        if path.endswith("/count_tokens"):
            self._send(handler, 200, "application/json", b'{"input_tokens": 42}')
        elif path.endswith("/messages") and stream:
            self._send(
                handler, 200, "text/event-stream", sse(anthropic_events(text, tool_path=tool))
            )
        elif path.endswith("/messages"):
            message = {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
            }
            self._send(handler, 200, "application/json", json.dumps(message).encode())
        elif path.endswith("/responses"):
            self._send(handler, 200, "text/event-stream", sse(responses_events(text)))
        elif path.endswith("/chat/completions") and stream:
            self._send(handler, 200, "text/event-stream", sse(chat_chunks(text)))
        elif path.endswith("/chat/completions"):
            answer = {"object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}}]}  # fmt: skip
            self._send(handler, 200, "application/json", json.dumps(answer).encode())
        else:
            self._send(handler, 404, "application/json", b'{"error": "no such path"}')

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, data: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Request-Id", "req_1")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


def _last_text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    items = body.get("messages") or body.get("input") or []
    if isinstance(items, str):
        return items
    for item in reversed(items):
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    return str(block["text"])
    return ""


class Gone:
    """A port where the upstream was: it accepts and counts connections, and answers
    nothing (a replay that contacts it would hang, then fail)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            client.close()

    def close(self) -> None:
        # shutdown() wakes the accepting thread (close() alone would leave it blocked in
        # accept(), the port still listening).
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(timeout=5)


def post(url: str, body: Any, *, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """POST JSON ``body``; the status, content type and raw body of the answer."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()
