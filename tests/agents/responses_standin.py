"""A stand-in of the OpenAI Responses API for the real Codex CLI, offline: it answers
``POST /v1/responses`` (streamed, server-sent events) from a script of steps per CLI
invocation, so the real ``codex exec`` runs the tool calls itself — writes files and
runs commands in its working directory — and then prints the final text. Standard
library only; it listens on 127.0.0.1 (port 0) and writes the chosen port to a file.

A script is JSON: ``{"sessions": [[step, …], …]}``; session *n* is the *n*-th CLI
invocation (told apart by the ``session-id`` header the CLI sends with every request of
one invocation). A step is one answer:

- ``{"shell": "CMD"}``: a call of Codex's ``exec`` tool whose JavaScript runs ``CMD``
  through its nested ``exec_command`` tool;
- ``{"js": "SOURCE"}``: a call of the ``exec`` tool with that JavaScript;
- ``{"text": "…"}``: the final answer (the invocation ends);
- any step may carry ``"fail": {"status": 429, "times": 1}`` (answer its first request(s)
  with that HTTP error) and ``"usage": {"input_tokens": …, "output_tokens": …}``.

Which step a request gets is the number of tool outputs its ``input`` holds (a retried
request gets the same step). A session that runs out of steps answers ``Done.``.
``GET /_standin/log`` returns one line per request (session, step, what was served).

Run: ``python responses_standin.py SCRIPT.json PORT_FILE``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from standin_http import ScriptState, StandinHandler, serve

DEFAULT_USAGE = {"input_tokens": 1200, "output_tokens": 80}
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


class Script(ScriptState):
    """The steps of each invocation, and which invocation each session is."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.seen: dict[str, int] = {}

    def step(self, session: str, body: dict[str, Any]) -> tuple[int, int, dict[str, Any]]:
        done = sum(
            1
            for item in body.get("input") or ()
            if isinstance(item, dict) and item.get("type") in _OUTPUTS
        )
        with self.lock:
            number = self.seen.setdefault(session, len(self.seen))
        steps = self.steps(number)
        return number, done, steps[done] if done < len(steps) else {"text": "Done."}


def _shell_js(command: str) -> str:
    quoted = json.dumps(command)
    return (
        f"const r = await tools.exec_command({{cmd: {quoted}}});\n"
        "text(typeof r === 'string' ? r : JSON.stringify(r));\n"
    )


def _item(step: dict[str, Any], index: int) -> dict[str, Any]:
    if "text" in step:
        return {
            "id": f"msg_{index}",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": step["text"], "annotations": []}],
        }
    source = step["js"] if "js" in step else _shell_js(step["shell"])
    return {
        "id": f"ctc_{index}",
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": f"call_{index}",
        "name": "exec",
        "namespace": "functions",
        "input": source,
    }


def _events(step: dict[str, Any], index: int, model: str) -> list[tuple[str, dict[str, Any]]]:
    item = _item(step, index)
    usage = {**DEFAULT_USAGE, **step.get("usage", {})}
    usage.setdefault("input_tokens_details", {"cached_tokens": 0})
    usage.setdefault("output_tokens_details", {"reasoning_tokens": 0})
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    response = {"id": f"resp_{index}", "object": "response", "model": model}
    started = {**item, "status": "in_progress"}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**response, "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"output_index": 0, "item": started}),
    ]
    if item["type"] == "message":
        events.append(
            (
                "response.output_text.delta",
                {
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": step["text"],
                },
            )
        )
    events.append(("response.output_item.done", {"output_index": 0, "item": item}))
    completed = {**response, "status": "completed", "output": [item], "usage": usage}
    events.append(("response.completed", {"response": completed}))
    return [
        (name, {"type": name, "sequence_number": number, **data})
        for number, (name, data) in enumerate(events)
    ]


def error_body(status: int, message: str) -> bytes:
    """An error in the Responses API's shape (``{"error": {message, type}}``)."""
    return json.dumps({"error": {"message": message, "type": "standin_error"}}).encode()


class Handler(StandinHandler):
    script: Script

    def error_body(self, status: int, message: str) -> bytes:
        return error_body(status, message)

    def do_POST(self) -> None:
        _, body = self.read_body()
        if not self.path.rstrip("/").endswith("/responses"):
            self.send(404, "application/json", error_body(404, "no such route"))
            return
        session = self.headers.get("session-id") or "-"
        number, index, step = self.script.step(session, body)
        entry: dict[str, Any] = {"session": number, "step": index}
        outputs = [
            item
            for item in body.get("input") or ()
            if isinstance(item, dict) and item.get("type") in _OUTPUTS
        ]
        if outputs:
            entry["last_output"] = str(outputs[-1].get("output"))[:400]
        with self.script.lock:
            fail = self.script.failure(number, index, step)
            if fail is not None:
                self.refuse(entry, fail)
                return
            served = "text" if "text" in step else "tool:exec"
            self.script.log.append({**entry, "served": served})
        model = str(body.get("model", "standin"))
        self.send_events(
            f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            for name, data in _events(step, index, model)
        )


if __name__ == "__main__":
    serve(Handler, Script(Path(sys.argv[1])), Path(sys.argv[2]))
