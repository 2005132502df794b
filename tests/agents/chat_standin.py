"""A stand-in of the OpenAI chat-completions API for the real Qwen Code CLI, offline: it
answers ``POST /v1/chat/completions`` (server-sent events when the request streams, one
JSON answer otherwise) from a script of steps per CLI invocation, so the real ``qwen``
runs the tool calls itself — writes files and runs commands in its working directory —
and then prints the final text. Standard library only; it listens on 127.0.0.1 (port 0)
and writes the chosen port to a file.

A script is JSON: ``{"sessions": [[step, …], …]}``; session *n* is the *n*-th CLI
invocation. The API has no session header, so an invocation ends when its final text is
served: the next request starts the next session. A step is one answer:

- ``{"write": {"file_path": "…", "content": "…"}}``: a call of the ``write_file`` tool
  (a relative path is made absolute in the directory the CLI says it works in: its
  ``write_file`` takes absolute paths only);
- ``{"shell": "CMD"}``: a call of the ``run_shell_command`` tool running ``CMD``;
- ``{"text": "…"}``: the final answer (the invocation ends);
- any step may carry ``"fail": {"status": 429, "times": 1, "message": "…"}`` (answer its
  first request(s) with that HTTP error, in the API's error shape) and ``"usage":
  {"prompt": …, "output": …}`` (the answer's token counts).

Which step a request gets is the number of ``tool`` messages it holds (a retried request
gets the same step). A session that runs out of steps answers ``Done.``. A request whose
system prompt is not the agent's own (a side call: a memory or title helper of the CLI)
is answered ``Nothing to add.`` outside the script. ``GET /_standin/log`` returns one
line per request (session, step, what was served, the model asked, the key it sent, and
— when the script names a ``"watch"`` string — whether the request held it).

Run: ``python chat_standin.py SCRIPT.json PORT_FILE``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from standin_http import ScriptState, StandinHandler, serve

DEFAULT_USAGE = {"prompt": 1000, "output": 50}
#: How the agent's own system prompt begins (anything else is a side call).
AGENT_PROMPT = "You are Qwen Code"
#: Where the CLI tells the model it works (in its first user message; read from the
#: raw JSON, so the path ends at an escape or a quote).
WORKING_IN = re.compile(r"currently working in the directory: (/[^\\\"\s]*)")
#: The API's error types, as its error bodies spell them.
ERROR_TYPES = {
    401: "invalid_request_error",
    403: "permission_denied",
    404: "not_found_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


class Script(ScriptState):
    """The steps of each invocation, and which invocation a request belongs to."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.calls = 0

    def step(self, body: dict[str, Any]) -> tuple[int, int, dict[str, Any]]:
        done = sum(
            1
            for message in body.get("messages") or ()
            if isinstance(message, dict) and message.get("role") == "tool"
        )
        number = self.session
        steps = self.steps(number)
        return number, done, steps[done] if done < len(steps) else {"text": "Done."}


def _system_prompt(body: dict[str, Any]) -> str:
    for message in body.get("messages") or ():
        if isinstance(message, dict) and message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            return str(content or "")
    return ""


def _usage(numbers: dict[str, int]) -> dict[str, int]:
    return {
        "prompt_tokens": numbers["prompt"],
        "completion_tokens": numbers["output"],
        "total_tokens": numbers["prompt"] + numbers["output"],
    }


def _message(step: dict[str, Any], call_id: str, raw: bytes) -> dict[str, Any]:
    """The assistant's message for ``step``: a tool call or the final text."""
    if "write" in step:
        name, arguments = "write_file", dict(step["write"])
        found = WORKING_IN.search(raw.decode("utf-8", errors="replace"))
        if found and not arguments["file_path"].startswith("/"):
            arguments["file_path"] = f"{found.group(1)}/{arguments['file_path']}"
    elif "shell" in step:
        name = "run_shell_command"
        arguments = {"command": step["shell"], "description": "Run the command."}
    else:
        return {"role": "assistant", "content": step["text"]}
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _chunks(message: dict[str, Any], model: str, usage: dict[str, int]) -> list[dict[str, Any]]:
    """The streamed answer: text in two deltas (as the API streams it), a tool call's
    arguments in two, cut between two members (a path cut in two would not be the run's
    path to agent replay: docs/agents.md); the last chunk carries the finish reason, then
    one with the usage."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "chatcmpl-standin",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    calls = message.get("tool_calls")
    if calls:
        call = calls[0]
        arguments = call["function"]["arguments"]
        member = arguments.find('", "')
        half = member + 2 if member >= 0 else len(arguments) // 2
        head = {
            "index": 0,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": arguments[:half]},
        }
        tail = {"index": 0, "function": {"arguments": arguments[half:]}}
        chunks += [chunk({"tool_calls": [head]}), chunk({"tool_calls": [tail]})]
        chunks.append(chunk({}, "tool_calls"))
    else:
        text = message["content"]
        half = len(text) // 2
        chunks += [chunk({"content": text[:half]}), chunk({"content": text[half:]})]
        chunks.append(chunk({}, "stop"))
    last = {
        "id": "chatcmpl-standin",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [],
        "usage": usage,
    }
    return [*chunks, last]


def error_body(status: int, message: str) -> bytes:
    """An error in the API's shape (``{"error": {message, type, code}}``)."""
    detail = {"message": message, "type": ERROR_TYPES.get(status, "api_error"), "code": status}
    return json.dumps({"error": detail}).encode()


class Handler(StandinHandler):
    script: Script

    def error_body(self, status: int, message: str) -> bytes:
        return error_body(status, message)

    def do_POST(self) -> None:
        raw, body = self.read_body()
        route = self.path.split("?", 1)[0]
        if not route.endswith("/chat/completions"):
            self.send(404, "application/json", error_body(404, f"no route {route}"))
            return
        model = str(body.get("model") or "")
        key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        with self.script.lock:
            if not _system_prompt(body).startswith(AGENT_PROMPT):
                self.script.log.append({"served": "side", "model": model})
                step: dict[str, Any] = {"text": "Nothing to add."}
            else:
                number, index, step = self.script.step(body)
                entry: dict[str, Any] = {
                    "session": number,
                    "step": index,
                    "model": model,
                    "key": key,
                }
                if self.script.watch:
                    entry["watched"] = self.script.watch in raw.decode("utf-8", "replace")
                tools = [m for m in body.get("messages") or () if m.get("role") == "tool"]
                if tools:
                    entry["last_output"] = str(tools[-1].get("content"))[:400]
                fail = self.script.failure(number, index, step)
                if fail is not None:
                    self.refuse(entry, fail)
                    return
                served = (
                    "text"
                    if "text" in step
                    else ("tool:write" if "write" in step else "tool:shell")
                )
                self.script.log.append({**entry, "served": served})
                if served == "text":
                    self.script.session += 1
            self.script.calls += 1
            call_id = f"call_{self.script.calls}"
        usage = _usage({**DEFAULT_USAGE, **step.get("usage", {})})
        message = _message(step, call_id, raw)
        if not body.get("stream"):
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            answer = {
                "id": "chatcmpl-standin",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "usage": usage,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
            self.send(200, "application/json", json.dumps(answer).encode())
            return
        events = [
            f"data: {json.dumps(chunk)}\n\n".encode() for chunk in _chunks(message, model, usage)
        ]
        self.send_events([*events, b"data: [DONE]\n\n"])


if __name__ == "__main__":
    serve(Handler, Script(Path(sys.argv[1])), Path(sys.argv[2]))
