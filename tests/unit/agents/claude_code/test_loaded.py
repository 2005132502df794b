"""What Claude Code loads for a run, named as it names it: the user's and the project's
commands, skills, subagents and hooks, plugins from the command line and the user's
install, MCP servers, the CLAUDE.md files, and the settings hash."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pytest_ooda.agents import load_agent

from .helpers import front, tree

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents import Configuration

HOOKS = json.dumps(
    {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command",
                                                             "command": "true"}]}]}}
)  # fmt: skip


def _names(found: Configuration) -> dict[str, list[tuple[str, str]]]:
    return {kind: [(i.name, i.scope) for i in items] for kind, items in found.loaded.items()}


def _configuration(home: Path, work: Path, *argv: str, **env: str) -> Configuration:
    return load_agent("claude").configuration(
        ["claude", "-p", *argv], home=home, workspace=work, env=env
    )


def test_the_user_and_the_project_material_by_the_names_claude_code_gives(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    tree(
        home / ".claude",
        {
            "skills/greet/SKILL.md": front("Greet.", description="Greets."),
            "commands/kiro/spec-init.md": "Start a spec.\n",
            "agents/rev.md": front("Review.", name="reviewer", description="Reviews."),
            "settings.json": HOOKS,
            "CLAUDE.md": "Be brief.\n",
            "projects/-x/transcript.jsonl": "{}\n",  # state, not configuration
        },
    )
    tree(
        work,
        {
            ".claude/commands/hello.md": "Hello.\n",
            "CLAUDE.md": "Project rules.\n",
            ".mcp.json": json.dumps({"mcpServers": {"docs": {"command": "docs-mcp"}}}),
        },
    )
    tree(home, {".claude.json": json.dumps({"mcpServers": {"github": {"url": "x"}},
                                             "projects": {str(work): {"mcpServers": {
                                                 "local": {"command": "l"}}}}})})  # fmt: skip
    assert _names(_configuration(home, work)) == {
        "skills": [("greet", "user")],
        "commands": [("hello", "project"), ("kiro:spec-init", "user")],
        "subagents": [("reviewer", "user")],
        "hooks": [("PreToolUse:Write", "user")],
        "mcp": [("docs", "project"), ("github", "user"), ("local", "project")],
        "instructions": [("CLAUDE.md", "project"), ("CLAUDE.md", "user")],
    }


def test_the_configuration_directory_follows_claude_config_dir(tmp_path: Path) -> None:
    home, work, moved = tmp_path / "home", tmp_path / "work", tmp_path / "config"
    tree(home / ".claude", {"skills/old/SKILL.md": "Old.\n"})
    tree(moved, {"skills/new/SKILL.md": "New.\n", "settings.json": HOOKS})
    found = _configuration(home, work, CLAUDE_CONFIG_DIR=str(moved))
    assert _names(found) == {
        "skills": [("new", "user")],
        "hooks": [("PreToolUse:Write", "user")],
    }


def test_plugins_from_the_command_line_and_the_users_install(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    plugin = {
        ".claude-plugin/plugin.json": json.dumps({"name": "greeter"}),
        "commands/hello.md": "Hello.\n",
        "skills/wave/SKILL.md": front("Wave.", description="Waves."),
        "hooks/hooks.json": HOOKS,
        ".mcp.json": json.dumps({"mcpServers": {"greeter-mcp": {"command": "g"}}}),
    }
    tree(work / ".ooda" / "plugins" / "greeter", plugin)
    installed = tree(home / ".claude" / "plugins" / "cache" / "m" / "helper" / "1.0", {
        ".claude-plugin/plugin.json": json.dumps({"name": "helper"}),
        "commands/help.md": "Help.\n",
    })  # fmt: skip
    off = tree(home / ".claude" / "plugins" / "cache" / "m" / "off" / "1.0", {
        ".claude-plugin/plugin.json": json.dumps({"name": "off"}),
        "commands/off.md": "Off.\n",
    })  # fmt: skip
    listing = {
        "version": 2,
        "plugins": {
            "helper@m": [{"scope": "user", "installPath": str(installed)}],
            "off@m": [{"scope": "user", "installPath": str(off)}],
        },
    }
    tree(home / ".claude", {
        "plugins/installed_plugins.json": json.dumps(listing),
        "settings.json": json.dumps({"enabledPlugins": {"off@m": False}}),
    })  # fmt: skip
    found = _names(_configuration(home, work, "--plugin-dir", ".ooda/plugins/greeter"))
    assert found == {
        "plugins": [("greeter", "command-line"), ("helper", "user")],
        "commands": [("greeter:hello", "command-line"), ("helper:help", "user")],
        "skills": [("greeter:wave", "command-line")],
        "hooks": [("PreToolUse:Write", "command-line")],
        "mcp": [("greeter-mcp", "command-line")],
    }


def test_a_changed_skill_text_changes_its_hash_and_a_changed_setting_the_settings(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    tree(work / ".claude", {"skills/greet/SKILL.md": "Greet.\n", "settings.json": "{}"})
    before = _configuration(home, work)
    tree(work / ".claude", {"skills/greet/SKILL.md": "Greet warmly.\n"})
    after = _configuration(home, work)
    assert before.loaded["skills"][0].sha256 != after.loaded["skills"][0].sha256
    assert before.settings == after.settings
    tree(work / ".claude", {"settings.json": '{"model": "opus"}'})
    assert _configuration(home, work).settings != after.settings
    assert _configuration(home, work, "--model", "opus").settings != after.settings


def test_an_empty_home_loads_nothing(tmp_path: Path) -> None:
    found = _configuration(tmp_path / "home", tmp_path / "work")
    assert dict(found.loaded) == {}
