"""Agent output read as it arrives: the line reader's bounds, foreign text, rendering,
and the command backend running tiny fake agents that print Claude Code's stream-json
(the real CLI's own runs are in test_real_claude.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.agents import AgentReport
from pytest_ooda.agents.claude_code import ClaudeStream
from pytest_ooda.agents.codex_cli import CodexStream
from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.backends.agent_output import backend_result, open_stream, parse
from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.errors import ConfigError
from pytest_ooda.loop import find_signal

AGENT = Path(__file__).resolve().parents[1] / "fake_ai" / "agent.py"


def _assistant(*blocks: dict[str, Any]) -> str:
    return json.dumps({"type": "assistant", "message": {"content": list(blocks)}})


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def _tool_result(call_id: str, content: Any, *, error: bool = False) -> str:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": error}
    return json.dumps({"type": "user", "message": {"content": [block]}})


def _result(text: str, *, is_error: bool = False, cost: float = 0.01, **extra: Any) -> str:
    event = {
        "type": "result",
        "subtype": "success",
        "is_error": is_error,
        "result": text,
        "num_turns": 2,
        "total_cost_usd": cost,
        "usage": {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 1,
        },
        "modelUsage": {"m-1": {}},
        "permission_denials": [],
        **extra,
    }
    return json.dumps(event)


STREAM = "\n".join(
    [
        json.dumps({"type": "system", "subtype": "init", "model": "m-1"}),
        _assistant(_text("Looking."), _tool("a", "Bash", command="pytest -q")),
        _tool_result("a", [{"type": "text", "text": "1 failed"}], error=True),
        _assistant(_tool("b", "Edit", file_path="/w/app.py")),
        _tool_result("b", "ok"),
        _assistant(_text("Fixed.\n<promise>SUCCESS</promise>")),
        _result("Fixed.\n<promise>SUCCESS</promise>"),
    ]
)


def test_chunks_split_anywhere_read_like_whole_lines() -> None:
    whole = ClaudeStream()
    for line in STREAM.splitlines():
        whole.feed(line)
    pieces = ClaudeStream()
    data = (STREAM + "\n").encode()
    shown = "".join(pieces.feed_bytes(data[i : i + 7]) for i in range(0, len(data), 7))
    shown += pieces.close()
    assert pieces.report() == whole.report()
    assert shown.splitlines() == [
        "Looking.",
        "→ Bash: pytest -q",
        "✗ Bash: 1 failed",
        "→ Edit: /w/app.py",
        "Fixed.",
        "<promise>SUCCESS</promise>",
        "✓ done: 2 turns · 126 tokens · $0.0100",
    ]
    report = pieces.report()
    assert [(c.name, c.ok, c.error) for c in report.tool_calls] == [
        ("Bash", False, "1 failed"),
        ("Edit", True, None),
    ]
    assert report.usage == Usage(100, 20, 0.01, 5, 1)
    assert report.model == "m-1"


def test_a_last_line_without_newline_is_read_at_close() -> None:
    stream = ClaudeStream()
    stream.feed_bytes(_result("done").encode())
    assert stream.report().error is not None  # not yet: the line may continue
    assert stream.close() == "✓ done: 2 turns · 126 tokens · $0.0100\n"
    assert stream.report().error is None
    assert stream.report().text == "done"


def test_an_overlong_line_is_skipped_in_bounded_memory_and_named() -> None:
    stream = ClaudeStream(max_line=1000)
    stream.feed_bytes(_assistant(_text("x" * 5000)).encode())
    assert len(stream._partial) == 0  # nothing of it is buffered
    stream.feed_bytes(b"\n" + json.dumps({"type": "system", "model": "m"}).encode() + b"\n")
    report = stream.report()
    assert report.error is not None
    assert "line 1 was longer than max_output_buffer (1000 bytes) and was skipped" in report.error
    # A skipped line that was not the result costs nothing.
    fine = ClaudeStream(max_line=1000)
    fine.feed_bytes(_assistant(_text("x" * 5000)).encode() + b"\n" + _result("ok").encode() + b"\n")
    assert fine.report().error is None


def test_foreign_lines_are_shown_and_named_only_when_the_stream_fails() -> None:
    ok = ClaudeStream()
    shown = ok.feed_bytes(b"warning: slow disk\n" + (STREAM + "\n").encode())
    assert shown.startswith("warning: slow disk\n")
    assert ok.report().error is None
    failed = ClaudeStream()
    failed.feed_bytes(
        b"Error: When using --print, --output-format=stream-json requires --verbose\n"
    )
    assert failed.report().error == (
        "claude-stream-json: the output has no JSON events; does the command have "
        "--output-format stream-json --verbose?; it printed: Error: When using --print, "
        "--output-format=stream-json requires --verbose"
    )


def test_claude_json_mode_shows_the_final_text_and_an_error_once() -> None:
    stream = open_stream("claude-json")
    assert stream.feed(_result("All good")) == "All good\n✓ done: 2 turns · 126 tokens · $0.0100"
    assert stream.report().tool_calls == ()
    missing = open_stream("claude-json")
    missing.feed("{}")
    assert missing.report().error == "claude-json: no result event (the CLI stopped mid-run)"
    error = ClaudeStream()
    error.feed(_assistant(_text("API Error: 529 overloaded")))
    assert error.feed(_result("API Error: 529 overloaded", is_error=True)) == (
        "✗ the agent CLI reported that error"
    )


def test_codex_stream_renders_items() -> None:
    stream = CodexStream()
    lines = [
        {"type": "item.completed", "item": {"type": "command_execution", "command": "ls",
                                            "exit_code": 2, "status": "completed"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
        {"type": "turn.failed", "error": {"message": "quota"}},
    ]  # fmt: skip
    shown = stream.feed_bytes("".join(json.dumps(e) + "\n" for e in lines).encode())
    assert shown == "✗ shell: ls\ndone\n✗ error: quota\n"
    assert stream.report().error == "codex-json: quota"
    with pytest.raises(ValueError, match="no structured reader"):
        open_stream("text")
    with pytest.raises(ValueError, match="max_line"):
        ClaudeStream(max_line=0)


def test_backend_result_keeps_the_texts_tail_and_turns_agent_errors_into_failures() -> None:
    report = parse(STREAM, "claude-stream-json")
    result = backend_result(report, "claude-stream-json", exit_code=0, max_output=12)
    assert result.output == "ise>SUCCESS</promise>"[-12:]
    assert (result.truncated, result.total_bytes) == (True, len(report.text.encode()))
    assert result.tools_reported
    assert result.error is None
    assert result.turns == 2
    errored = backend_result(
        AgentReport(text="API Error: 529", is_error=True), "claude-json", exit_code=1, max_output=99
    )
    assert errored.error == "the agent CLI reported an error: API Error: 529"
    assert not errored.tools_reported
    assert errored.usage is None


def _fake(lines: list[str], **step: Any) -> list[str]:
    return [sys.executable, str(AGENT), json.dumps({"print": "\n".join(lines) + "\n", **step})]


def test_the_command_backend_reads_stream_json_and_renders_it_live(tmp_path: Path) -> None:
    backend = CommandBackend(_fake(STREAM.splitlines()), ai_output="claude-stream-json")
    assert "ai_output='claude-stream-json'" in repr(backend)
    shown: list[bytes] = []
    result = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=30, max_output=1 << 20, stream=shown.append
    )
    assert result.exit_code == 0
    assert result.output == "Fixed.\n<promise>SUCCESS</promise>"
    assert find_signal(result.output) == "SUCCESS"
    assert result.usage == Usage(100, 20, 0.01, 5, 1)
    assert [c.name for c in result.tool_calls] == ["Bash", "Edit"]
    assert b"\xe2\x86\x92 Bash: pytest -q\n" in b"".join(shown)  # "→ Bash: …", never raw JSON
    assert b'"type"' not in b"".join(shown)


@pytest.mark.parametrize(
    ("step", "reason"),
    [
        ({"exit": 0}, "line 3 is not JSON"),  # torn mid-line
        ({"kill": "SIGKILL"}, "line 3 is not JSON"),
    ],
)
def test_broken_stream_json_is_a_failed_iteration_with_a_reason(
    tmp_path: Path, step: dict[str, Any], reason: str
) -> None:
    from pytest_ooda.backends.replay import ReplayStep
    from pytest_ooda.loop.signals import decide_outcome

    torn = [*STREAM.splitlines()[:2], STREAM.splitlines()[2][:30]]
    backend = CommandBackend(_fake(torn, **step), ai_output="claude-stream-json")
    result = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=30, max_output=1 << 20, stream=None
    )
    assert result.error is not None
    assert reason in result.error
    assert result.tool_calls == (ToolCall("Bash", "pytest -q", id="a"),)
    outcome = decide_outcome(result.exit_code, find_signal(result.output), error=result.error)
    assert outcome.kind == "failure"
    assert reason in outcome.reason
    assert ReplayStep().error is None


def test_a_stream_cut_off_cleanly_before_its_result_is_a_failure(tmp_path: Path) -> None:
    backend = CommandBackend(_fake(STREAM.splitlines()[:3]), ai_output="claude-stream-json")
    result = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=30, max_output=1 << 20, stream=None
    )
    assert result.exit_code == 0
    assert result.error == (
        "claude-stream-json: the stream ended without a result event (the CLI stopped mid-run)"
    )
    assert result.output == "Looking."


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ConfigError, match="ai_output: expected one of"):
        CommandBackend(["x"], ai_output="yaml")


def test_a_tool_calls_texts_are_redacted_line_by_line_before_they_are_joined() -> None:
    from pytest_ooda.backends import redacted_call
    from pytest_ooda.redact import Redactor

    token, password, netrc = "tq8Rr2Zb5WcYp3Lk9Xv1", "hZ2kP8sQ4vX7nM1c", "pL5tR8wQ2zK7mN4b"
    stream = ClaudeStream()
    command = f"cd app &&\nexport SERVICE_API_TOKEN={token}\nmake deploy"
    content = f"DB_PASSWORD={password}\nmachine api.example.com\n  password {netrc}\n"
    for line in (
        _assistant(_tool("t1", "Bash", command=command, description="deploy")),
        _assistant(_tool("t2", "Write", file_path="/w/.env", content=content)),
        _tool_result("t1", [_text("deployed"), _text(f"SERVICE_API_TOKEN={token}")], error=True),
        _tool_result("t2", "written"),
        _result("done"),
    ):
        stream.feed(line)
    bash, write = stream.report().tool_calls
    # Joined into one summary line, the assignment is no longer a line of its own:
    # redacting the summary afterwards would miss it.
    assert bash.summary == f"cd app && export SERVICE_API_TOKEN={token} make deploy"
    assert token in Redactor({})(bash.summary)
    clean = [redacted_call(call, Redactor({})) for call in (bash, write)]
    written = json.dumps(
        [call.as_dict() | {"in": call.input, "out": call.result} for call in clean]
    )
    for secret in (token, password, netrc):
        assert secret not in written
    assert clean[0].summary == "cd app && export SERVICE_API_TOKEN=<redacted> make deploy"
    assert clean[0].error == "deployed SERVICE_API_TOKEN=<redacted>"
    assert "DB_PASSWORD=<redacted>" in (clean[1].input or "")
    assert clean[1].summary == "/w/.env"
