"""Qwen Code's side of the agent interface that its live runs do not reach: a stream
cut off before its result, an error result, what its flags and words mean, and what it
loads for a fingerprint (the real CLI is tests/agents/test_real_qwen.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pytest_ooda.agents import load_agent
from pytest_ooda.agents.qwen_code import parse_qwen_stream_json, qwen_fault

if TYPE_CHECKING:
    from pathlib import Path

AGENT = load_agent("qwen")


def _lines(*events: dict[str, object]) -> str:
    return "\n".join(json.dumps(event) for event in events)


def test_a_stream_cut_off_keeps_its_calls_and_says_it_stopped() -> None:
    call = {"type": "tool_use", "id": "c1", "name": "run_shell_command",
            "input": {"command": "pytest -q"}}  # fmt: skip
    text = _lines(
        {"type": "system", "subtype": "init", "model": "m-1"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Running."}, call]}},
    )
    report = parse_qwen_stream_json(text).report()
    assert [c.summary for c in report.tool_calls] == ["pytest -q"]
    assert report.model == "m-1"
    assert report.text == "Running."
    assert report.error is not None
    assert "qwen-stream-json: the stream ended without a result event" in report.error


def test_an_error_result_names_the_apis_fault() -> None:
    failed = {"type": "result", "is_error": True, "num_turns": 1, "usage": {},
              "error": {"message": "[API Error: 429 Rate limit reached]"}}  # fmt: skip
    report = parse_qwen_stream_json(_lines(failed)).report()
    assert report.is_error
    assert report.text == "[API Error: 429 Rate limit reached]"
    assert report.infra_error == "rate-limit: [API Error: 429 Rate limit reached]"


def test_its_flags_and_its_words() -> None:
    assert AGENT.format_of(["qwen", "-o", "stream-json"]) == "qwen-stream-json"
    assert AGENT.format_of(["qwen", "--output-format=json"]) is None
    assert AGENT.unattended(["qwen", "--approval-mode", "yolo"])
    assert not AGENT.unattended(["qwen", "--approval-mode", "auto-edit"])
    missing = "Missing API key for OpenAI-compatible auth. Set the 'OPENAI_API_KEY' variable."
    fault = AGENT.fault(f"starting\n{missing}\n")
    assert fault is not None
    assert fault.kind == "auth"
    assert qwen_fault("Wrote hello.py.") is None
    assert (
        AGENT.missing_credentials({}) == "Qwen Code has no credentials: set OPENAI_API_KEY "
        "(or its login in home_files: ~/.qwen/oauth_creds.json)"
    )


def test_it_reads_its_home_and_the_projects_qwen_directory(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".qwen" / "skills" / "greet").mkdir(parents=True)
    (home / ".qwen" / "skills" / "greet" / "SKILL.md").write_text("---\nname: greet\n---\n")
    servers = {"mcpServers": {"files": {"command": "mcp-files"}}}
    (home / ".qwen" / "settings.json").write_text(json.dumps(servers))
    (work / ".qwen" / "commands").mkdir(parents=True)
    (work / ".qwen" / "commands" / "review.md").write_text("Review.\n")
    (work / "QWEN.md").write_text("Project rules.\n")
    found = AGENT.configuration(["qwen"], home=home, workspace=work, env={})
    assert [i.name for i in found.loaded["skills"]] == ["greet"]
    assert [i.name for i in found.loaded["mcp"]] == ["files"]
    assert [(i.name, i.scope) for i in found.loaded["commands"]] == [("review", "project")]
    assert [(i.name, i.scope) for i in found.loaded["instructions"]] == [("QWEN.md", "project")]
    moved = AGENT.configuration(
        ["qwen"], home=home, workspace=work, env={"QWEN_HOME": str(tmp_path / "x")}
    )
    assert "skills" not in moved.loaded
    assert moved.settings != found.settings
