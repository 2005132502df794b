"""An agent CLI's output that Python's JSON parser cannot read — a tool call's input
the model nested thousands of levels deep, echoed by the CLI — is the run's located
problem, never a RecursionError out of the stream's reader (found in issue 39's audit)."""

from __future__ import annotations

import json

from pytest_ooda.agents.claude_code.agent import ClaudeStream, parse_claude_json
from pytest_ooda.agents.gemini_cli.stream import GeminiJsonStream, GeminiStream

DEPTH = 100_000
NESTED = '{"a":' * DEPTH + "1" + "}" * DEPTH


def _tool_use(value: str) -> str:
    block = '{"type":"tool_use","id":"t1","name":"Bash","input":' + value + "}"
    return '{"type":"assistant","message":{"content":[' + block + "]}}"


def test_claude_code_stream_json() -> None:
    stream = ClaudeStream()
    shown = stream.feed(_tool_use(NESTED) + "\n")
    assert shown is not None
    assert len(shown) <= 300
    result = {"type": "result", "subtype": "success", "result": "done", "is_error": False}
    stream.feed(json.dumps(result) + "\n")
    assert stream.report().error == "claude-stream-json: line 1 nests too deep to be read"


def test_claude_code_json() -> None:
    report = parse_claude_json(NESTED)
    assert report.error == "claude-json: the output nests too deep to be read"


def test_gemini_stream_json_and_json() -> None:
    stream = GeminiStream()
    stream.feed(NESTED + "\n")
    assert "nests too deep to be read" in str(stream.report().error)
    whole = GeminiJsonStream(max_line=len(NESTED) * 2)
    for line in ("{", '"response": ' + NESTED, "}"):
        whole.feed(line + "\n")
    assert "nests too deep to be read" in str(whole.report().error)
