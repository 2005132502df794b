"""Claude Code material against the real CLI (2.1.197), driven offline by the agent mock:
what pytest-ooda renders of a command, a skill and a subagent is what Claude Code sends
(the first request's user message and its listing, byte for byte), and what it reads as
fired from the stream (a slash command, a skill, a subagent, a hook) is what the CLI did.
The plugin is ``greeter/`` beside this file, installed as a live run installs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mock import CLAUDE

from pytest_ooda.agents import (
    Activation,
    agent_argv,
    install,
    install_argv,
    invocation_text,
    listing_line,
    load_material,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest
    from claude_mock import AgentMock

GREETER = Path(__file__).resolve().parent / "greeter"
SECTION = "claude"


def _workspace(tmp_path: Path) -> Path:
    """A repository with the plugin installed as a run installs it, a committed file and
    an uncommitted one (what ``!`git status --short``` shows)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "NOTES.md").write_text("Be brief.\n")
    install(SECTION, GREETER, work)
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
    ):
        subprocess.run(argv, cwd=work, check=True)
    (work / "draft.txt").write_text("draft\n")
    return work


def _claude(work: Path, mock: AgentMock, prompt: str) -> list[dict[str, Any]]:
    """Run ``claude -p PROMPT`` in ``work`` as a live run would (the plugin's words
    added by the agent), returning its stream-json events."""
    argv = agent_argv(CLAUDE.split(), install_argv(SECTION, GREETER))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(mock.env())
    done = subprocess.run(
        argv, input=prompt, cwd=work, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _first_request(mock: AgentMock) -> dict[str, Any]:
    return next(body for body in mock.bodies() if len(body.get("messages", ())) == 2)


def _bang(work: Path, text: str) -> str:
    """``text`` with each ``!`cmd``` replaced by its output, trimmed, as Claude Code
    runs them before sending."""

    def run(match: re.Match[str]) -> str:
        done = subprocess.run(
            match.group(1), shell=True, cwd=work, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    return re.sub(r"!`([^`\n]+)`", run, text)


def test_a_command_is_rendered_as_claude_code_sends_it(
    tmp_path: Path, agent_mock: Callable[..., AgentMock]
) -> None:
    mock = agent_mock([[{"text": "Done."}]], dump=True)
    work = _workspace(tmp_path)
    material = load_material(work / ".ooda/plugins/greeter")
    command = material.find("command", "hello")
    assert command is not None
    _claude(work, mock, "/greeter:hello Alice cheerful")
    request = _first_request(mock)
    first, listing = request["messages"]
    blocks = [block["text"] for block in first["content"][1:]]
    # The invocation and the body, with the command's !`...` run first.
    assert "".join(f"{block}\n" if i == 0 else block for i, block in enumerate(blocks)) == _bang(
        work, invocation_text(command, "Alice cheerful")
    )
    assert "Greet Alice in a cheerful mood (all arguments: Alice cheerful)." in blocks[1]
    assert "?? draft.txt" in blocks[1]
    content = listing["content"]
    shown = content if isinstance(content, str) else "".join(b["text"] for b in content)
    assert listing["role"] == "system"
    # @NOTES.md is attached as a Read of the workspace's file.
    assert shown.startswith(
        "Called the Read tool with the following input: "
        + json.dumps({"file_path": str(work / "NOTES.md")}, separators=(",", ":"))
    )
    for item in material.items:
        line = listing_line(item)
        assert line is not None
        assert line in shown.splitlines(), line


def test_a_skill_invoked_by_name_is_rendered_as_claude_code_sends_it(
    tmp_path: Path, agent_mock: Callable[..., AgentMock]
) -> None:
    mock = agent_mock([[{"text": "Done."}]], dump=True)
    work = _workspace(tmp_path)
    material = load_material(work / ".ooda/plugins/greeter")
    skill = material.find("skill", "greet")
    assert skill is not None
    _claude(work, mock, "/greeter:greet Bob")
    first, _listing = _first_request(mock)["messages"]
    head, text = (block["text"] for block in first["content"][1:])
    assert head.startswith("<command-message>greeter:greet</command-message>")
    assert text == invocation_text(skill, "Bob", skill_dir=str(skill.directory))


def test_what_fired_is_read_from_the_stream(
    tmp_path: Path, agent_mock: Callable[..., AgentMock], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda.backends import CommandBackend

    mock = agent_mock(
        [
            [
                {"tool": "Skill", "input": {"skill": "greeter:greet", "args": "Alice"}},
                {"tool": "Write", "input": {"file_path": "GREETING.md", "content": "Hello!\n"}},
                {
                    "tool": "Agent",
                    "input": {
                        "description": "Review",
                        "prompt": "Review GREETING.md",
                        "subagent_type": "greeter:reviewer",
                    },
                },
                {"text": "Greeted."},
            ]
        ]
    )
    mock.use(monkeypatch)
    work = _workspace(tmp_path)
    argv = agent_argv(CLAUDE.split(), install_argv(SECTION, GREETER))
    assert "--include-hook-events" in argv
    backend = CommandBackend(list(argv), ai_output="claude-stream-json")
    result = backend.run(
        "/greeter:hello Alice",
        iteration=1,
        workdir=work,
        timeout=120,
        max_output=10**6,
        stream=None,
    )
    assert result.exit_code == 0, result.output
    fired = [activation.label for activation in result.activations]
    assert fired[0] == "command:greeter:hello"
    assert {
        "skill:greeter:greet",
        "subagent:greeter:reviewer",
        "hook:PostToolUse:Write",
    } <= set(fired)
    # The plugin's PostToolUse hook ran for the Write, in the workspace.
    assert "GREETING.md" in (work / ".greeter-writes.log").read_text()
    assert Activation("skill", "greeter:greet").is_named("greet")


def test_an_unknown_command_fires_nothing(
    tmp_path: Path, agent_mock: Callable[..., AgentMock], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda.backends import CommandBackend

    mock = agent_mock([[{"text": "never asked"}]])
    mock.use(monkeypatch)
    work = _workspace(tmp_path)
    backend = CommandBackend(CLAUDE.split(), ai_output="claude-stream-json")
    result = backend.run(
        "/greeter:nope x", iteration=1, workdir=work, timeout=120, max_output=10**6, stream=None
    )
    assert result.output == "Unknown command: /greeter:nope"
    assert [a.label for a in result.activations if a.kind == "command"] == []
    assert mock.sessions() == []


def test_ooda_init_then_record_each_command_and_skill_then_replay(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From zero: ``ooda init --claude-plugin``, plain pytest green, each generated
    scenario recorded with the real CLI (the command or skill fires from its slash
    prompt), then replayed offline with what fired."""
    import shutil

    from pytest_ooda.cli import main

    mock = agent_mock([[{"text": "Done."}]] * 3)
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    shutil.copytree(GREETER, pytester.path / "greeter")
    assert main(["init", f"--{SECTION}-plugin", "greeter", "--dir", str(pytester.path)]) == 0
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=30, skipped=3)
    # A skill of the user's own, which an unsandboxed run loads too: said, per run.
    own = Path(mock.env()["CLAUDE_CONFIG_DIR"]) / "skills" / "mine"
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text("---\ndescription: Mine. Use when asked.\n---\nMine.\n")
    recorded = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-record-mode=once",
        "--ooda-ai-cmd", CLAUDE,
    )  # fmt: skip
    recorded.assert_outcomes(passed=3, deselected=recorded.parseoutcomes().get("deselected", 0))
    recorded.stdout.fnmatch_lines(
        ["*scenario cmd-greeter-hello/first-live: ran without a sandbox, so the agent also "
         "loaded your own ~/.claude/skills: *--ooda-sandbox=bwrap*"]
    )  # fmt: skip
    scenario = pytester.path / "scenarios" / "skill-greeter-greet" / "first-live.yml"
    assert "fired:" in scenario.read_text()
    replayed = pytester.runpytest("-p", "no:cacheprovider", "-W", "ignore")
    replayed.assert_outcomes(passed=33)


def test_ooda_init_in_the_plugin_s_own_directory_records_and_replays_green(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's own words: ``ooda init --claude-plugin .`` in a plugin's repository.
    The config, the scenarios the runs are recorded into, the snapshots and the results
    are beside the plugin's files, not part of them: recording one scenario changes no
    other's prompt, and every replay is green."""
    import shutil

    from pytest_ooda.cli import main

    mock = agent_mock([[{"text": "Done."}]] * 3)
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    shutil.copytree(GREETER, pytester.path, dirs_exist_ok=True)
    monkeypatch.chdir(pytester.path)
    assert main(["init", f"--{SECTION}-plugin", "."]) == 0
    assert f"{SECTION}: [.]" in (pytester.path / "ooda-config.yml").read_text()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=30, skipped=3)
    recorded = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-record-mode=once", "-W", "ignore",
        "--ooda-ai-cmd", CLAUDE,
    )  # fmt: skip
    recorded.assert_outcomes(passed=3, deselected=recorded.parseoutcomes().get("deselected", 0))
    replayed = pytester.runpytest("-p", "no:cacheprovider", "-W", "ignore")
    replayed.assert_outcomes(passed=33)
