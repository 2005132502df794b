"""Gemini CLI's two output formats read (``gemini-stream-json``, ``gemini-json``), what its
error words mean, its flags, credentials and what it loads — on output shaped as 0.61
prints it (the real CLI runs in test_real_gemini.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.agents import agent_for, load_agent
from pytest_ooda.agents.gemini_cli import gemini_fault, parse_gemini_json, parse_gemini_stream_json

if TYPE_CHECKING:
    from pathlib import Path


def _line(**event: object) -> str:
    return json.dumps(event)


def _stats(router: int, main: int) -> dict[str, object]:
    models = {
        "flash-lite": {"total_tokens": router, "input": router - 10, "output_tokens": 10},
        "flash": {"total_tokens": main, "input": main - 50, "output_tokens": 50},
    }
    total = router + main
    return {"input": total - 60, "output_tokens": 60, "cached": 5, "duration_ms": 9,
            "models": models}  # fmt: skip


STREAM = "\n".join(
    [
        "YOLO mode is enabled. All tool calls will be automatically approved.",
        _line(type="init", model="auto"),
        _line(type="message", role="user", content="go"),
        _line(type="tool_use", tool_name="write_file", tool_id="w1",
              parameters={"file_path": "a.py", "content": "x = 1\n"}),
        _line(type="tool_result", tool_id="w1", status="success"),
        _line(type="tool_use", tool_name="run_shell_command", tool_id="s1",
              parameters={"command": "false"}),
        _line(type="tool_result", tool_id="s1", status="error",
              error={"type": "x", "message": "Exit code: 1"}),
        _line(type="error", severity="warning", message="loop detected"),
        _line(type="message", role="assistant", content="Done.\n<promise>", delta=True),
        _line(type="message", role="assistant", content="SUCCESS</promise>", delta=True),
        _line(type="result", status="success", stats=_stats(210, 5250)),
    ]
)  # fmt: skip


def test_stream_json_gives_text_tools_tokens_and_the_main_model() -> None:
    stream = parse_gemini_stream_json(STREAM)
    report = stream.report()
    assert report.text == "Done.\n<promise>SUCCESS</promise>"
    assert [(call.name, call.summary, call.ok) for call in report.tool_calls] == [
        ("write_file", "a.py", True),
        ("run_shell_command", "false", False),
    ]
    assert report.tool_calls[1].error == "Exit code: 1"
    assert (report.input_tokens, report.output_tokens, report.cache_read_tokens) == (5400, 60, 5)
    assert report.model == "flash"
    assert report.cost_usd is None
    assert report.error is None
    assert report.infra_error is None


def test_the_clis_bracketed_words_on_stderr_are_not_broken_json() -> None:
    # 0.61 prints this on stderr now and then (seen inside bwrap), between the events.
    startup = "[STARTUP] Phase 'cleanup_ops' was started but never ended. Skipping metrics."
    lines = STREAM.split("\n")
    lines.insert(4, startup)
    stream = parse_gemini_stream_json("\n".join(lines))
    report = stream.report()
    assert report.error is None
    assert report.text == "Done.\n<promise>SUCCESS</promise>"
    assert len(report.tool_calls) == 2
    broken = parse_gemini_stream_json(STREAM + '\n{"type": "result", "stat').report()
    assert broken.error is not None
    assert "is not JSON" in broken.error


def test_a_cut_stream_and_the_wrong_flags_are_reasons() -> None:
    cut = parse_gemini_stream_json(STREAM.rsplit("\n", 1)[0]).report()
    assert cut.error is not None
    assert "without a result event" in cut.error
    plain = parse_gemini_stream_json("Hello there.").report()
    assert plain.error is not None
    assert "--output-format stream-json" in plain.error


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ('[API Error: {"error":{"code":401,"message":"bad key","status":"UNAUTHENTICATED"}}]',
         "auth: API Error 401: bad key"),
        ('[API Error: {"error":{"message":"slow down","status":"RESOURCE_EXHAUSTED"}}]',
         "rate-limit: API Error RESOURCE_EXHAUSTED: slow down"),
        ("[API Error: msg]\nPlease wait and try again later. To increase your limits, "
         "request a quota increase through AI Studio", "rate-limit: "),
        ("When using Gemini API, you must specify the GEMINI_API_KEY environment variable.",
         "auth: When using Gemini API"),
        ("the model wrote nonsense", None),
    ],
)  # fmt: skip
def test_a_failed_result_is_the_infrastructures_by_the_clis_words(
    message: str, reason: str | None
) -> None:
    text = _line(type="result", status="error", error={"type": "unknown", "message": message},
                 stats=_stats(210, 0))  # fmt: skip
    report = parse_gemini_stream_json(text).report()
    assert report.is_error
    if reason is None:
        assert report.infra_error is None
        assert gemini_fault(message) is None
    else:
        assert report.infra_error is not None
        assert report.infra_error.startswith(reason)
        assert load_agent("gemini").fault(f"noise\n{message}") is not None


def test_json_reads_the_closing_object_after_the_clis_words() -> None:
    stats = {"models": {
        "lite": {"tokens": {"input": 200, "candidates": 10, "cached": 0, "thoughts": 0,
                            "total": 210}},
        "flash": {"tokens": {"input": 5000, "candidates": 250, "cached": 7, "thoughts": 40,
                             "total": 5290}},
    }}  # fmt: skip
    body = json.dumps({"session_id": "s", "response": "ok <promise>SUCCESS</promise>",
                       "stats": stats}, indent=2)  # fmt: skip
    report = parse_gemini_json("Ripgrep is not available.\n  cause: {\n}\n" + body).report()
    assert report.text == "ok <promise>SUCCESS</promise>"
    assert (report.input_tokens, report.output_tokens, report.cache_read_tokens) == (5200, 300, 7)
    assert report.model == "flash"
    failed = json.dumps({"error": {"type": "Error", "message": "quota", "code": 429}}, indent=2)
    error = parse_gemini_json("TerminalQuotaError: quota\n" + failed).report()
    assert error.is_error
    assert error.infra_error == "rate-limit: API Error 429: quota"
    nothing = parse_gemini_json("just words").report()
    assert nothing.error is not None
    assert "--output-format json" in nothing.error


def test_flags_credentials_and_unattended() -> None:
    gemini = agent_for(["gemini", "--yolo"])
    assert gemini.name == "gemini"
    assert gemini.format_of(["gemini", "-o", "stream-json"]) == "gemini-stream-json"
    assert gemini.format_of(["gemini", "--output-format=json"]) == "gemini-json"
    assert gemini.format_of(["gemini", "-p", "hi"]) is None
    assert gemini.unattended(["gemini", "--approval-mode", "yolo"])
    assert gemini.unattended(["gemini", "-y"])
    assert not gemini.unattended(["gemini", "--approval-mode", "auto_edit"])
    missing = gemini.missing_credentials({})
    assert missing is not None
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in missing
    assert gemini.missing_credentials({"GEMINI_API_KEY": "k"}) is None
    assert gemini.missing_credentials({}, ["~/.gemini/oauth_creds.json"]) is None


def test_what_it_loads_is_named_as_it_names_it(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    user = home / ".gemini"
    (user / "commands" / "git").mkdir(parents=True)
    (user / "commands" / "git" / "commit.toml").write_text('prompt = "commit"\n')
    (user / "skills" / "tidy").mkdir(parents=True)
    (user / "skills" / "tidy" / "SKILL.md").write_text("---\nname: tidy\n---\n")
    (user / "extensions" / "lint").mkdir(parents=True)
    manifest = {"name": "lint", "mcpServers": {"checker": {"command": "lint-mcp"}}}
    (user / "extensions" / "lint" / "gemini-extension.json").write_text(json.dumps(manifest))
    settings = {"hooks": {"BeforeTool": [{"command": "x"}]}, "context": {"fileName": "AI.md"}}
    (user / "settings.json").write_text(json.dumps(settings))
    workspace.mkdir()
    (workspace / "AI.md").write_text("be brief")
    (workspace / "GEMINI.md").write_text("not read: the settings name AI.md")
    gemini = load_agent("gemini")
    found = gemini.configuration(["gemini"], home=home, workspace=workspace, env={})
    names = {
        kind: [(item.name, item.scope) for item in items] for kind, items in found.loaded.items()
    }
    assert names["commands"] == [("git:commit", "user")]
    assert names["skills"] == [("tidy", "user")]
    assert names["plugins"] == [("lint", "user")]
    assert names["mcp"] == [("lint:checker", "user")]
    assert names["hooks"] == [("BeforeTool", "user")]
    assert names["instructions"] == [("AI.md", "project")]
    before = found.settings
    (user / "settings.json").write_text(json.dumps({**settings, "model": {"name": "other"}}))
    after = gemini.configuration(["gemini"], home=home, workspace=workspace, env={})
    assert after.settings != before
