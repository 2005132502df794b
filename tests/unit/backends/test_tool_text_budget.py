"""The run-wide budget for the tool-call text a run holds: within it a call keeps its
input and result; past it, its name, summary, outcome and the lines its summary and
error are made from, which are still redacted line by line."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.agents import ToolTextBudget, head_lines, one_line
from pytest_ooda.agents.claude_code import ClaudeStream
from pytest_ooda.agents.codex_cli import CodexStream
from pytest_ooda.backends import CommandBackend, redacted_call
from pytest_ooda.redact import Redactor

if TYPE_CHECKING:
    from pathlib import Path


def _use(call_id: str, name: str, **arguments: Any) -> str:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    return json.dumps({"type": "assistant", "message": {"content": [block]}})


def _result(call_id: str, content: str, *, error: bool = False) -> str:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": error}
    return json.dumps({"type": "user", "message": {"content": [block]}})


_DONE = json.dumps({"type": "result", "is_error": False, "result": "done", "num_turns": 1})


def test_calls_past_the_budget_keep_their_summary_and_outcome_not_their_texts() -> None:
    stream = ClaudeStream(budget=ToolTextBudget(limit=3000))
    body = "line of output\n" * 100  # 1,500 characters a result
    for index in range(6):
        stream.feed(_use(f"t{index}", "Read", file_path=f"/w/file{index}.py"))
        stream.feed(_result(f"t{index}", body, error=index == 5))
    stream.feed(_DONE)
    calls = stream.report().tool_calls
    assert [call.summary for call in calls] == [f"/w/file{i}.py" for i in range(6)]
    assert [call.ok for call in calls] == [True] * 5 + [False]
    kept = [call for call in calls if call.texts_kept]
    assert 1 <= len(kept) < 6
    assert all(call.result == body for call in kept)
    dropped = calls[len(kept) :]
    assert all(not call.texts_kept for call in dropped)
    assert all(call.input is None for call in dropped[1:])
    # A failed call past the budget keeps its error, and the lines it is made from.
    assert calls[5].error == one_line(body, 200)
    assert calls[5].result is not None
    assert len(calls[5].result) < len(body)
    assert one_line(calls[5].result, 200) == calls[5].error
    assert [call.as_dict() for call in calls] == [call.as_dict() for call in _unbudgeted(6, body)]


def _unbudgeted(count: int, body: str) -> tuple[Any, ...]:
    stream = ClaudeStream()
    for index in range(count):
        stream.feed(_use(f"t{index}", "Read", file_path=f"/w/file{index}.py"))
        stream.feed(_result(f"t{index}", body, error=index == count - 1))
    stream.feed(_DONE)
    return stream.report().tool_calls


def test_a_call_past_the_budget_is_still_redacted_line_by_line() -> None:
    token = "tq8Rr2Zb5WcYp3Lk9Xv1"
    budget = ToolTextBudget(limit=10)
    budget.held = 10  # spent
    stream = ClaudeStream(budget=budget)
    command = f"cd app &&\nexport SERVICE_API_TOKEN={token}\nmake deploy\n" + "echo x\n" * 50
    stream.feed(_use("t1", "Bash", command=command, description="deploy"))
    stream.feed(_result("t1", f"deployed\nSERVICE_API_TOKEN={token}\n" + "ok\n" * 99, error=True))
    stream.feed(_DONE)
    (call,) = stream.report().tool_calls
    assert not call.texts_kept
    assert call.input is None
    # What is kept of the command is the lines the summary shows, not the command.
    assert call.arguments == {"command": head_lines(command, 120)}
    assert len(call.arguments["command"]) < len(command)
    clean = redacted_call(call, Redactor({}))
    assert token in call.summary
    assert token in (call.error or "")
    assert token not in clean.summary
    assert token not in (clean.error or "")
    assert clean.summary.startswith("cd app && export SERVICE_API_TOKEN=<redacted> make deploy")
    assert clean.error is not None
    assert clean.error.startswith("deployed SERVICE_API_TOKEN=<redacted>")


@pytest.mark.parametrize(
    "text",
    [
        "short",
        "word " * 100,
        "a\n" * 300,
        "x" * 500,
        "  lead\n\n\n" + "spaced   out   words\n" * 20,
        "one line " * 13 + "\nsecond\n",
        "\n" * 50 + "late " * 40,
    ],
)
def test_head_lines_make_the_same_summary_as_the_whole_text(text: str) -> None:
    head = head_lines(text, 120)
    assert text.startswith(head)
    assert head == text or head.endswith("\n")
    assert one_line(head, 120) == one_line(text, 120)


def test_codex_calls_past_the_budget_keep_their_summary() -> None:
    budget = ToolTextBudget(limit=100)
    stream = CodexStream(budget=budget)
    for index in range(3):
        item = {
            "type": "command_execution",
            "command": f"pytest -q tests/{index}",
            "aggregated_output": "." * 200,
            "exit_code": 0,
        }
        stream.feed(json.dumps({"type": "item.completed", "item": item}))
    stream.feed(json.dumps({"type": "turn.completed", "usage": {}}))
    calls = stream.report().tool_calls
    assert [call.summary for call in calls] == [f"pytest -q tests/{i}" for i in range(3)]
    assert calls[0].texts_kept
    assert calls[0].result == "." * 200
    assert [call.texts_kept for call in calls[1:]] == [False, False]
    assert all(call.result is None and call.input is None for call in calls[1:])


AGENT = """\
import json, sys
sys.stdin.read()
body = "r" * 4000
for i in range(5):
    use = {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"/f{i}"}}
    print(json.dumps({"type": "assistant", "message": {"content": [use]}}))
    done = {"type": "tool_result", "tool_use_id": f"t{i}", "content": body}
    print(json.dumps({"type": "user", "message": {"content": [done]}}))
print(json.dumps({"type": "result", "is_error": False, "result": "ok", "num_turns": 1}))
"""


def test_the_command_backend_keeps_one_budget_across_its_iterations(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    backend = CommandBackend([sys.executable, str(agent)], ai_output="claude-stream-json")
    backend.tool_texts = ToolTextBudget(limit=30_000)  # room for about seven calls
    shown: list[bytes] = []
    first = backend.run(
        "go", iteration=1, workdir=tmp_path, timeout=60, max_output=1 << 20, stream=shown.append
    )
    second = backend.run(
        "go", iteration=2, workdir=tmp_path, timeout=60, max_output=1 << 20, stream=None
    )
    assert [call.texts_kept for call in first.tool_calls] == [True] * 5
    kept = [call.texts_kept for call in second.tool_calls]
    assert kept[0]
    assert not kept[-1]
    assert [call.summary for call in second.tool_calls] == [f"/f{i}" for i in range(5)]
    # Watched, each call is shown as it happens; not watched, the same calls come back.
    assert b"\xe2\x86\x92 Read: /f4" in b"".join(shown)
    assert [c.as_dict() for c in first.tool_calls] == [c.as_dict() for c in second.tool_calls]


def test_the_transcript_says_which_calls_texts_were_not_kept(tmp_path: Path) -> None:
    from pytest_ooda.config import load_config, resolve_run_settings
    from pytest_ooda.live.transcript import build_transcript
    from pytest_ooda.loop import run_loop

    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    (tmp_path / "ooda-config.yml").write_text("procedures:\n  p:\n    act:\n      - content: go\n")
    config = load_config(tmp_path / "ooda-config.yml")
    settings = resolve_run_settings(
        config, "p", max_iterations=1, ai_cmd=f"{sys.executable} {agent}",
        ai_output="claude-stream-json",
    )  # fmt: skip
    backend = CommandBackend([sys.executable, str(agent)], ai_output="claude-stream-json")
    backend.tool_texts = ToolTextBudget(limit=10_000)
    result = run_loop(
        config.procedures["p"], settings, backend=backend, workdir=tmp_path, handle_signals=False
    )
    transcript = build_transcript(config.procedures["p"], result, Redactor({}))
    (iteration,) = transcript["iterations"]
    assert [call["summary"] for call in iteration["tool_calls"]] == [f"/f{i}" for i in range(5)]
    assert iteration["tool_calls"][0]["result"] == "r" * 4000
    assert iteration["tool_calls"][-1]["result"] is None
    unkept = sum(call["result"] is None for call in iteration["tool_calls"])
    assert f"iteration 1: {unkept} tool calls' input and result not kept" in " ".join(
        transcript["notes"]
    )
