"""A stand-in of the Gemini API for the real Gemini CLI, offline: it answers
``POST /v1beta/models/MODEL:streamGenerateContent`` (server-sent events) from a script
of steps per CLI invocation, so the real ``gemini`` runs the tool calls itself — writes
files and runs commands in its working directory — and then prints the final text; and
``POST /v1beta/models/MODEL:generateContent`` (one JSON answer), which the CLI uses for
its side calls: the router that picks a model for each prompt, answered with a low
complexity score. Standard library only; it listens on 127.0.0.1 (port 0) and writes
the chosen port to a file.

A script is JSON: ``{"sessions": [[step, …], …]}``; session *n* is the *n*-th CLI
invocation. The Gemini API has no session header, so an invocation ends when its final
text is served: the next request starts the next session. A step is one answer:

- ``{"write": {"file_path": "…", "content": "…"}}``: a call of the ``write_file`` tool;
- ``{"shell": "CMD"}``: a call of the ``run_shell_command`` tool running ``CMD``;
- ``{"text": "…"}``: the final answer (the invocation ends);
- any step may carry ``"fail": {"status": 429, "times": 1, "message": "…"}`` (answer its
  first request(s) with that HTTP error, in the API's error shape) and ``"usage":
  {"prompt": …, "output": …}`` (the answer's token counts).

Which step a request gets is the number of function responses its ``contents`` hold (a
retried request gets the same step). A session that runs out of steps answers
``Done.``. ``GET /_standin/log`` returns one line per request (session, step, what was
served, the model asked, and — when the script names a ``"watch"`` string — whether the
request held it).

Run: ``python gemini_standin.py SCRIPT.json PORT_FILE``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from standin_http import ScriptState, StandinHandler, serve

DEFAULT_USAGE = {"prompt": 1000, "output": 50}
ROUTER_USAGE = {"prompt": 200, "output": 10}
#: The API's status names, as its error bodies spell them.
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


class Script(ScriptState):
    """The steps of each invocation, and which invocation a request belongs to."""

    def step(self, body: dict[str, Any]) -> tuple[int, int, dict[str, Any]]:
        done = sum(
            1
            for content in body.get("contents") or ()
            if isinstance(content, dict)
            for part in content.get("parts") or ()
            if isinstance(part, dict) and "functionResponse" in part
        )
        number = self.session
        steps = self.steps(number)
        return number, done, steps[done] if done < len(steps) else {"text": "Done."}


def _usage(numbers: dict[str, int]) -> dict[str, int]:
    return {
        "promptTokenCount": numbers["prompt"],
        "candidatesTokenCount": numbers["output"],
        "totalTokenCount": numbers["prompt"] + numbers["output"],
    }


def _part(step: dict[str, Any]) -> dict[str, Any]:
    if "write" in step:
        return {"functionCall": {"name": "write_file", "args": step["write"]}}
    if "shell" in step:
        args = {"command": step["shell"], "description": "Run the command."}
        return {"functionCall": {"name": "run_shell_command", "args": args}}
    return {"text": step["text"]}


def _chunks(step: dict[str, Any], model: str) -> list[dict[str, Any]]:
    """The streamed answer: text in two chunks (as the API streams it), a function call
    in one; the last chunk carries the finish reason and the usage."""
    usage = _usage({**DEFAULT_USAGE, **step.get("usage", {})})
    part = _part(step)
    pieces = [part]
    if "text" in part and len(part["text"]) > 1:
        half = len(part["text"]) // 2
        pieces = [{"text": part["text"][:half]}, {"text": part["text"][half:]}]
    chunks: list[dict[str, Any]] = []
    for index, piece in enumerate(pieces):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [piece]}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
        if index == len(pieces) - 1:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = usage
        chunks.append(chunk)
    return chunks


def _router_answer(model: str) -> dict[str, Any]:
    """The router's question (how complex is the prompt?) answered: simple."""
    verdict = {"complexity_reasoning": "A short, explicit task.", "complexity_score": 10}
    content = {"role": "model", "parts": [{"text": json.dumps(verdict)}]}
    return {
        "candidates": [{"content": content, "finishReason": "STOP", "index": 0}],
        "usageMetadata": _usage(ROUTER_USAGE),
        "modelVersion": model,
    }


def error_body(status: int, message: str) -> bytes:
    """An error in the Gemini API's shape (``{"error": {code, message, status}}``)."""
    detail = {"code": status, "message": message, "status": STATUS_NAMES.get(status, "UNKNOWN")}
    return json.dumps({"error": detail}).encode()


class Handler(StandinHandler):
    script: Script

    def error_body(self, status: int, message: str) -> bytes:
        return error_body(status, message)

    def do_POST(self) -> None:
        raw, body = self.read_body()
        route = self.path.split("?", 1)[0]
        model, _, method = route.rpartition("/")[2].partition(":")
        if method == "generateContent":
            with self.script.lock:
                self.script.log.append({"served": "router", "model": model})
            self.send(200, "application/json", json.dumps(_router_answer(model)).encode())
            return
        if method != "streamGenerateContent":
            self.send(404, "application/json", error_body(404, f"no route {route}"))
            return
        with self.script.lock:
            number, index, step = self.script.step(body)
            entry: dict[str, Any] = {"session": number, "step": index, "model": model}
            if self.script.watch:
                entry["watched"] = self.script.watch in raw.decode("utf-8", "replace")
            responses = [
                part["functionResponse"]
                for content in body.get("contents") or ()
                for part in content.get("parts") or ()
                if isinstance(part, dict) and "functionResponse" in part
            ]
            if responses:
                entry["last_output"] = json.dumps(responses[-1].get("response"))[:400]
            fail = self.script.failure(number, index, step)
            if fail is not None:
                self.refuse(entry, fail)
                return
            served = (
                "text" if "text" in step else ("tool:write" if "write" in step else "tool:shell")
            )
            self.script.log.append({**entry, "served": served})
            if served == "text":
                self.script.session += 1
        self.send_events(
            f"data: {json.dumps(chunk)}\r\n\r\n".encode() for chunk in _chunks(step, model)
        )


if __name__ == "__main__":
    serve(Handler, Script(Path(sys.argv[1])), Path(sys.argv[2]))
