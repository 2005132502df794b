"""Parsing agent CLIs' machine-readable output: Claude Code's json and stream-json (the
samples the real CLI 2.1.197 printed against the agent mock, in ../shared) and Codex's
exec --json, plus every way such output can be broken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ooda.agents import ToolCall, output_formats, summarize
from pytest_ooda.agents.claude_code import ClaudeStream, parse_claude_json
from pytest_ooda.agents.codex_cli import parse_codex_json
from pytest_ooda.backends.agent_output import parse
from pytest_ooda.loop import find_signal

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "tools" / "agent-mock" / "samples"


def _sample(name: str) -> str:
    path = SAMPLES / name
    if not path.is_file():  # the shared folder sits beside the checkout, in CI too
        pytest.fail(f"missing sample {path}: the tests expect ../shared beside the checkout")
    return path.read_text(encoding="utf-8")


def test_claude_json_from_the_real_cli() -> None:
    report = parse_claude_json(_sample("output-format-json.json"))
    assert report.error is None
    assert report.text == "Wrote and ran hello.py.\n<promise>SUCCESS</promise>"
    assert find_signal(report.text) == "SUCCESS"
    assert (report.input_tokens, report.output_tokens) == (10031, 121)
    assert report.cache_read_tokens == 0
    assert report.cost_usd == pytest.approx(0.05318)
    assert report.turns == 3
    assert report.duration_ms == 632
    assert report.model == "claude-opus-4-8[1m]"
    assert report.permission_denials == ()


def test_claude_stream_json_from_the_real_cli_renders_and_reports() -> None:
    stream = ClaudeStream()
    shown = [line for raw in _sample("output-format-stream-json.jsonl").splitlines()
             if (line := stream.feed(raw)) is not None]  # fmt: skip
    assert shown[0] == "Writing the script."
    assert any(line.startswith("→ Write: ") and line.endswith("hello.py") for line in shown)
    assert any(line.startswith("→ Bash: ") for line in shown)
    report = stream.report()
    assert report.error is None
    assert report.text.endswith("<promise>SUCCESS</promise>")
    assert (report.input_tokens, report.output_tokens, report.turns) == (10036, 122, 3)
    assert report.cost_usd == pytest.approx(0.05323)
    assert [call.name for call in report.tool_calls] == ["Write", "Bash"]
    assert all(call.ok for call in report.tool_calls)
    assert report.model is not None


def test_permission_denials_are_reported() -> None:
    event = json.loads(_sample("output-format-json.json"))
    event["permission_denials"] = [
        {"tool_name": "Write", "tool_use_id": "t1", "tool_input": {"file_path": "/w/a.py"}},
        {"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "pytest -q"}},
    ]
    report = parse_claude_json(json.dumps(event))
    assert report.permission_denials == (
        ToolCall("Write", "/w/a.py", ok=False, error="permission denied"),
        ToolCall("Bash", "pytest -q", ok=False, error="permission denied"),
    )


def test_a_failed_tool_result_marks_the_call() -> None:
    stream = ClaudeStream()
    stream.feed(
        json.dumps(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "x",
                            "name": "Edit",
                            "input": {"file_path": "a.py"},
                        }
                    ]
                },
            }
        )
    )
    shown = stream.feed(json.dumps({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "x", "is_error": True,
         "content": "File has not been read yet. Read it first."}]}}))  # fmt: skip
    assert shown == "✗ Edit: File has not been read yet. Read it first."
    (call,) = stream.report().tool_calls
    assert call.ok is False
    assert call.error is not None
    assert call.error.startswith("File has not been read")


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("", "not JSON"),
        ("Error: boom", "not JSON"),
        ('{"type": "system"}', "no result object"),
    ],
)
def test_broken_claude_json_is_a_reason_not_an_exception(output: str, reason: str) -> None:
    report = parse_claude_json(output)
    assert report.error is not None
    assert reason in report.error
    assert report.text == output


def test_a_stream_cut_off_mid_run_says_so_and_keeps_what_it_had() -> None:
    lines = _sample("output-format-stream-json.jsonl").splitlines()
    cut = "\n".join(lines[:-1]) + "\n" + lines[-1][:40]  # the result line is torn
    report = parse(cut, "claude-stream-json")
    assert report.error is not None
    assert "line" in report.error or "without a result" in report.error
    assert report.tool_calls  # the calls seen before the crash are kept
    assert report.text.startswith("Writing the script.")


def test_a_stream_without_result_is_reported() -> None:
    report = parse('{"type": "system", "model": "m"}\n', "claude-stream-json")
    assert report.error == (
        "claude-stream-json: the stream ended without a result event (the CLI stopped mid-run)"
    )


CODEX = "\n".join(
    json.dumps(event)
    for event in [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "hm"}},
        {"type": "item.completed", "item": {"id": "i1", "type": "command_execution",
         "command": "bash -lc 'pytest -q'", "exit_code": 1, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "i2", "type": "file_change",
         "changes": [{"path": "src/app.py", "kind": "update"}], "status": "completed"}},
        {"type": "item.completed", "item": {"id": "i3", "type": "agent_message",
         "text": "Fixed it.\n<promise>SUCCESS</promise>"}},
        {"type": "turn.completed",
         "usage": {"input_tokens": 900, "cached_input_tokens": 100, "output_tokens": 42}},
    ]
)  # fmt: skip


def test_codex_exec_json() -> None:
    report = parse_codex_json(CODEX)
    assert report.error is None
    assert find_signal(report.text) == "SUCCESS"
    assert (report.input_tokens, report.output_tokens, report.cache_read_tokens) == (900, 42, 100)
    assert report.turns == 1
    assert [(c.name, c.ok) for c in report.tool_calls] == [("shell", False), ("file_change", True)]
    assert report.tool_calls[0].summary == "bash -lc 'pytest -q'"
    assert report.tool_calls[0].error == "exit 1"


def test_codex_failures_are_reasons() -> None:
    failed = parse_codex_json('{"type":"turn.failed","error":{"message":"rate limited"}}')
    assert failed.error == "codex-json: rate limited"
    cut = parse_codex_json(CODEX.rsplit("\n", 1)[0])
    assert cut.error == "codex-json: no turn.completed event (the CLI stopped mid-run)"
    # stderr shares the pipe: the CLI's own words are not broken JSON, a torn event is.
    assert parse_codex_json("warning: config file ignored\n" + CODEX).error is None
    assert parse_codex_json('{"type": "thread.sta\n' + CODEX).error == (
        "codex-json: line 1 is not JSON (Unterminated string starting at)"
    )


def test_text_is_passed_through_and_the_vocabulary_is_complete() -> None:
    assert parse("plain <promise>SUCCESS</promise>", "text").text.endswith("</promise>")
    assert output_formats() == (
        "text",
        "claude-json",
        "claude-stream-json",
        "codex-json",
        "gemini-stream-json",
        "gemini-json",
        "qwen-stream-json",
    )


def test_summaries_are_short_single_lines() -> None:
    assert summarize("Bash", {"command": "echo a\n  echo b"}) == "echo a echo b"
    assert len(summarize("Write", {"file_path": "x" * 500})) == 120
    assert summarize("Task", {"description": "look", "n": 3}) == "look"
