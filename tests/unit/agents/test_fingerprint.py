"""What an agent loads, read from its configuration sources for a run's fingerprint, and
its version asked once per process and command."""

from __future__ import annotations

import stat
import sys
from typing import TYPE_CHECKING

from pytest_ooda.agents import Agent, ConfigSource, agent_version, from_sources, load_agent
from pytest_ooda.agents.fingerprint import settings_sha256, tree_sha256

if TYPE_CHECKING:
    from pathlib import Path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_each_source_is_read_by_its_kind(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(home / "skills" / "greet" / "SKILL.md", "Greet.\n")
    _write(home / "skills" / "greet" / "tool.sh", "echo hi\n")
    _write(home / "prompts" / "kiro" / "spec.md", "Spec.\n")
    _write(home / "agents" / "reviewer.md", "Review.\n")
    _write(home / "agents" / "notes.txt", "not a subagent\n")
    _write(home / "mcp.json", '{"mcpServers": {"github": {"command": "gh-mcp"}}}')
    _write(work / "AGENTS.md", "Be brief.\n")
    _write(home / "config.toml", "model = 'x'\n")
    sources = (
        ConfigSource("settings", home / "config.toml"),
        ConfigSource("skills", home / "skills"),
        ConfigSource("prompts", home / "prompts"),
        ConfigSource("agents", home / "agents"),
        ConfigSource("mcp", home / "mcp.json"),
        ConfigSource("instructions", work / "AGENTS.md", "project"),
        ConfigSource("instructions", home / "AGENTS.md"),  # not there: not loaded
        ConfigSource("plugins", home / "plugins"),  # not there either
    )
    found = from_sources(sources, ["my-agent", "--fast"])
    names = {kind: [(i.name, i.scope) for i in items] for kind, items in found.loaded.items()}
    assert names == {
        "skills": [("greet", "user")],
        "commands": [("kiro:spec", "user")],
        "subagents": [("reviewer", "user")],
        "mcp": [("github", "user")],
        "instructions": [("AGENTS.md", "project")],
    }
    [skill] = found.loaded["skills"]
    assert skill.sha256 == tree_sha256(home / "skills" / "greet")
    # A file of the skill's directory other than SKILL.md changes the skill.
    _write(home / "skills" / "greet" / "tool.sh", "echo bye\n")
    assert from_sources(sources, ["my-agent", "--fast"]).loaded["skills"][0].sha256 != skill.sha256


def test_the_settings_hash_covers_the_command_line_and_every_settings_file(
    tmp_path: Path,
) -> None:
    settings = _write(tmp_path / "settings.json", "{}")
    files = [("user", settings), ("project", tmp_path / "absent.json")]
    first = settings_sha256(["claude", "-p"], files)
    assert first == settings_sha256(["claude", "-p"], files)
    assert first != settings_sha256(["claude", "-p", "--model", "opus"], files)
    settings.write_text('{"model": "opus"}')
    assert first != settings_sha256(["claude", "-p"], files)
    # A file that appears where none was counts too.
    settings.write_text("{}")
    _write(tmp_path / "absent.json", "{}")
    assert first != settings_sha256(["claude", "-p"], files)


def test_codex_reads_its_home_and_the_projects_agents_file(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(home / ".codex" / "prompts" / "review.md", "Review.\n")
    _write(work / "AGENTS.md", "Project rules.\n")
    found = load_agent("codex").configuration(["codex", "exec"], home=home, workspace=work, env={})
    assert [i.name for i in found.loaded["commands"]] == ["review"]
    assert [(i.name, i.scope) for i in found.loaded["instructions"]] == [("AGENTS.md", "project")]
    moved = load_agent("codex").configuration(
        ["codex", "exec"], home=home, workspace=work, env={"CODEX_HOME": str(tmp_path / "x")}
    )
    assert "commands" not in moved.loaded


def test_a_plain_command_loads_nothing_and_its_settings_are_its_command_line(
    tmp_path: Path,
) -> None:
    agent = load_agent("command")
    found = agent.configuration(["my-agent", "--print"], home=tmp_path, workspace=tmp_path)
    assert dict(found.loaded) == {}
    other = agent.configuration(["my-agent", "--quiet"], home=tmp_path, workspace=tmp_path)
    assert found.settings != other.settings


class _Counted(Agent):
    """An agent that answers ``--version`` (as the built-in ones do)."""

    name = "counted"


def test_the_version_is_asked_once_per_command_and_place(tmp_path: Path) -> None:
    count = tmp_path / "count"
    program = tmp_path / "counted-agent"
    program.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys\n"
        f"path = pathlib.Path({str(count)!r})\n"
        "path.write_text(path.read_text() + 'x' if path.exists() else 'x')\n"
        "print('counted 1.0')\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    agent = _Counted()
    argv = [str(program), "-p"]
    assert agent_version(agent, argv) == "counted 1.0"
    assert agent_version(agent, [*argv, "--more"]) == "counted 1.0"  # the same program
    assert count.read_text() == "x"
    # Another place (a sandbox holding its own installation) is asked on its own.
    seen: list[list[str]] = []

    def launch(words: object) -> tuple[list[str], None]:
        seen.append(list(words))  # type: ignore[call-overload]
        return [sys.executable, "-c", "print('inside 2.0')"], None

    assert agent_version(agent, argv, where=("bwrap",), launch=launch) == "inside 2.0"
    assert agent_version(agent, argv, where=("bwrap",), launch=launch) == "inside 2.0"
    assert seen == [[str(program), "--version"]]
    assert count.read_text() == "x"


def test_a_command_no_agent_claims_is_never_asked_its_version(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    program = tmp_path / "fake-agent"
    program.write_text(f"#!/bin/sh\ntouch {marker}\necho 9.9\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    assert agent_version(load_agent("command"), [str(program)]) is None
    assert not marker.exists()
