"""The agent registry and the interface's defaults: which agent a command line runs,
output formats by name, the built-in aliases, model APIs, and what each built-in agent
says about its messages, its refusals, its credentials and its configuration."""

from __future__ import annotations

import json
import stat
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.agents import (
    Agent,
    agent_for,
    agent_names,
    builtin_aliases,
    infer_format,
    load_agent,
    message_fault,
    model_apis,
    output_format,
    output_formats,
    shell_tools,
    tool_formats,
)
from pytest_ooda.errors import ConfigError
from pytest_ooda.sandbox import load_kind

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("argv", "agent"),
    [
        (["claude", "-p"], "claude"),
        (["/usr/local/bin/claude"], "claude"),
        (["codex", "exec", "--json", "-"], "codex"),
        (["/usr/bin/gemini", "-o", "json"], "gemini"),
        (["qwen", "-o", "stream-json", "--yolo"], "qwen"),
        (["copilot", "--yolo"], "copilot"),
        (["kiro-cli", "chat"], "kiro-cli"),
        (["python3", "agent.py"], "command"),
        ([], "command"),
    ],
)
def test_a_command_line_is_claimed_by_its_agent(argv: list[str], agent: str) -> None:
    assert agent_for(argv).name == agent


def test_formats_aliases_and_apis_come_from_the_agents() -> None:
    assert output_formats() == (
        "text",
        "claude-json",
        "claude-stream-json",
        "codex-json",
        "gemini-stream-json",
        "gemini-json",
        "qwen-stream-json",
    )
    assert tool_formats() == (
        "claude-stream-json",
        "codex-json",
        "gemini-stream-json",
        "qwen-stream-json",
    )
    assert not output_format("gemini-json").reports_tools
    assert output_format("codex-json").reports_tools
    assert not output_format("claude-json").reports_tools
    assert output_format("claude-json").reports_cost
    assert output_format("text").reader is None
    assert dict(builtin_aliases()) == {
        "claude": "claude -p --dangerously-skip-permissions",
        "kiro-cli": "kiro-cli chat --no-interactive --trust-all-tools",
        "copilot": "copilot --yolo",
        "cursor-agent": "cursor-agent -p -f --output-format text",
    }
    assert {"anthropic", "openai", "gemini"} <= set(model_apis())
    assert model_apis()["gemini"].base_url_env == "GOOGLE_GEMINI_BASE_URL"
    assert model_apis()["openai"].url_suffix == "/v1"
    # Codex and Qwen Code share the route; each one's replay rules hold on it.
    origins = [rule.origin for rule in model_apis()["openai"].replay_rules]
    assert "codex: chunk ids" in origins
    assert "qwen: PGIDs" in origins
    assert {"Bash", "shell", "run_shell_command"} <= shell_tools()
    assert agent_names(plugins=False)[-1] == "command"


def test_an_unknown_format_or_agent_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="expected one of text, claude-json") as caught:
        output_format("claude-jsn")
    assert caught.value.hint == "did you mean 'claude-json'?"
    with pytest.raises(ConfigError, match="unknown agent 'claud'"):
        load_agent("claud")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["claude", "-p", "--output-format", "stream-json", "--verbose"], "claude-stream-json"),
        (["claude", "--output-format=json"], "claude-json"),
        (["claude", "--output-format", "text"], "text"),
        (["claude", "-p"], None),
        (["codex", "exec", "--json", "-"], "codex-json"),
        (["codex", "exec", "-"], None),
        (["my-agent", "--output-format", "json"], None),
    ],
)
def test_the_format_a_command_line_asks_for(argv: list[str], expected: str | None) -> None:
    assert infer_format(argv) == expected


@pytest.mark.parametrize(
    ("argv", "unattended"),
    [
        (["claude", "-p", "--dangerously-skip-permissions"], True),
        (["claude", "--permission-mode", "bypassPermissions"], True),
        (["claude", "--permission-mode=bypassPermissions"], True),
        (["claude", "-p", "--allowedTools", "Bash"], False),
        (["codex", "exec", "--full-auto"], True),
        (["cursor-agent", "-p", "-f"], True),
        (["my-agent", "--yolo"], True),
        (["my-agent", "-f"], False),
    ],
)
def test_whether_a_command_line_runs_unattended(argv: list[str], unattended: bool) -> None:
    assert agent_for(argv).unattended(argv) is unattended


@pytest.mark.parametrize(
    ("agent", "text", "kind"),
    [
        ("claude", "Not logged in · Please run /login", "auth"),
        ("claude", "Invalid API key · Please run /login", "auth"),
        ("claude", "working\nAPI Error: 529 overloaded", "overloaded"),
        ("claude", "API Error: 401 {}", "auth"),
        ("claude", "I am not logged in to anything, said the model", None),
        ("codex", "unexpected status 401 Unauthorized: bad key", "auth"),
        ("codex", "exceeded retry limit, last status: 429 Too Many Requests", "rate-limit"),
        ("command", "Error: HTTP 503 Service Unavailable", "overloaded"),
        ("command", "the tests failed", None),
    ],
)
def test_what_an_agents_own_words_mean(agent: str, text: str, kind: str | None) -> None:
    fault = load_agent(agent).fault(text)
    assert (fault.kind if fault is not None else None) == kind
    if fault is not None:
        # The detail is the agent's own last line, the evidence its word.
        assert fault.reason == f"{kind}: {text.splitlines()[-1]}"
        assert fault.evidence == "agent"


def test_generic_words_of_a_message() -> None:
    fault = message_fault("stream disconnected before completion")
    assert fault is not None
    assert fault.kind == "connection"
    assert message_fault("the model refused the request") is None


def test_credentials_any_variable_or_a_login_file() -> None:
    claude = load_agent("claude")
    missing = claude.missing_credentials({"PATH": "/usr/bin"})
    assert missing == (
        "Claude Code has no credentials: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN or "
        "CLAUDE_CODE_OAUTH_TOKEN (or its login in home_files: ~/.claude/.credentials.json)"
    )
    assert claude.missing_credentials({"ANTHROPIC_API_KEY": "k"}) is None
    assert claude.missing_credentials({"ANTHROPIC_API_KEY": ""}) is not None
    assert claude.missing_credentials({}, ["~/.claude/.credentials.json"]) is None
    assert claude.missing_credentials({}, ["~/.claude"]) is None
    assert claude.missing_credentials({}, ["~/.claude.json"]) is not None
    assert load_agent("command").missing_credentials({}) is None


def test_root_refusal_is_the_agents_own_rule() -> None:
    claude = load_agent("claude")
    argv = ["claude", "-p", "--dangerously-skip-permissions"]
    assert claude.refusal(argv, env={}, euid=1000, sandbox=None) is None
    assert claude.refusal(argv, env={"IS_SANDBOX": "1"}, euid=0, sandbox=None) is None
    refused = claude.refusal(argv, env={"IS_SANDBOX": "yes"}, euid=0, sandbox="bwrap")
    assert refused is not None
    assert "the bwrap sandbox's env: gives IS_SANDBOX='yes'" in refused
    assert claude.refusal(["claude", "-p"], env={}, euid=0, sandbox=None) is None
    assert load_agent("codex").refusal(argv, env={}, euid=0, sandbox=None) is None


def test_error_bodies_are_in_the_apis_own_shape() -> None:
    anthropic = json.loads(model_apis()["anthropic"].error_body("no"))
    assert anthropic == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "no"},
    }
    openai = json.loads(model_apis()["openai"].error_body("no"))
    assert openai["error"]["message"] == "no"


def test_configuration_sources_follow_the_variables_that_move_them(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    claude = load_agent("claude").config_sources(home, work, {})
    assert home / ".claude" / "settings.json" in [source.path for source in claude]
    assert work / "CLAUDE.md" in [source.path for source in claude if source.scope == "project"]
    moved = load_agent("claude").config_sources(home, work, {"CLAUDE_CONFIG_DIR": "/etc/c"})
    assert moved[0].path.as_posix() == "/etc/c/settings.json"
    codex = load_agent("codex").config_sources(home, work, {"CODEX_HOME": "/x"})
    assert codex[0].path.as_posix() == "/x/config.toml"
    assert load_agent("command").config_sources(home, work) == ()


def test_the_version_is_what_the_cli_reports(tmp_path: Path) -> None:
    program = tmp_path / "my-agent"
    program.write_text(f"#!{sys.executable}\nimport sys\nprint('my-agent 4.2.1 (build x)')\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    agent = load_agent("copilot")
    assert agent.version([str(program)]) == "my-agent 4.2.1 (build x)"
    assert agent.version([str(tmp_path / "absent")]) is None
    # Any other command is never started just to ask (it may do its work instead).
    assert load_agent("command").version([str(program)]) is None


def test_the_interface_defaults_are_a_plain_text_command() -> None:
    class Bare(Agent):
        name = "bare"

    bare = Bare()
    assert not bare.claims(["bare"])
    assert bare.format_of(["bare"]) is None
    assert bare.fault("HTTP 429") is None
    assert bare.refusal(["bare"], env={}, euid=0, sandbox=None) is None
    assert bare.missing_credentials({}) is None
    assert repr(bare) == "<agent bare>"


@pytest.mark.parametrize(
    ("kind", "options", "access"),
    [
        ("none", {}, "loopback"),
        ("bwrap", {}, "loopback"),
        ("bwrap", {"network": "none"}, "relay"),
        ("docker", {}, "netns"),
        ("docker", {"network": "host"}, "loopback"),
        ("docker", {"network": "none"}, "netns"),
    ],
)
def test_each_sandbox_says_how_an_agent_reaches_the_proxy(
    kind: str, options: dict[str, str], access: str
) -> None:
    assert load_kind(kind).proxy_access(options) == access
