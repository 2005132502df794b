from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.agents.claude_code.checks import check_material
from pytest_ooda.agents.claude_code.hooks import Hook, matched_by, read_hooks
from pytest_ooda.agents.claude_code.material import load_material

from .helpers import tree

if TYPE_CHECKING:
    from pathlib import Path

PLUGIN = '{"name": "p"}'


def test_a_plugin_s_hooks_and_their_scripts(tmp_path: Path) -> None:
    root = tree(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": PLUGIN,
            "hooks/hooks.json": (
                '{"hooks": {\n'
                ' "PreToolUse": [{"matcher": "Write|Edit", "hooks": [\n'
                '   {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/check.sh",'
                ' "timeout": 10}]}],\n'
                ' "Stop": [{"hooks": [{"type": "prompt", "prompt": "Done?"}]}]\n'
                "}}\n"
            ),
            "hooks/check.sh": "#!/bin/sh\nexit 0\n",
        },
        executable=("hooks/check.sh",),
    )
    material = load_material(root)
    hooks, problems = read_hooks(material)
    assert problems == ()
    assert [(hook.name, hook.type, hook.line) for hook in hooks] == [
        ("PreToolUse:Write|Edit", "command", 3),
        ("Stop", "prompt", 4),
    ]
    assert matched_by(hooks[0], "Edit")
    assert not matched_by(hooks[0], "Bash")
    assert matched_by(hooks[1], "anything")


def test_a_project_s_settings_hooks_name_their_scripts_from_the_project(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/settings.json": (
                '{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [\n'
                '  {"type": "command",'
                ' "command": "\\"$CLAUDE_PROJECT_DIR\\"/.claude/hooks/log.sh x"},\n'
                '  {"type": "command",'
                ' "command": "bash $CLAUDE_PROJECT_DIR/.claude/hooks/run.sh"},\n'
                '  {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/gone.sh"}\n'
                "]}]}}\n"
            ),
            ".claude/hooks/log.sh": "#!/bin/sh\n",
            ".claude/hooks/run.sh": "echo run\n",
        },
    )
    problems = check_material(load_material(tmp_path))
    messages = [(problem.message, problem.line) for problem in problems]
    assert messages == [
        (
            "hooks.PostToolUse[0].hooks[0].command: $CLAUDE_PROJECT_DIR/.claude/hooks/log.sh is "
            "not executable",
            2,
        ),
        (
            "hooks.PostToolUse[0].hooks[2].command: $CLAUDE_PROJECT_DIR/.claude/hooks/gone.sh "
            f"does not exist ({tmp_path}/.claude/hooks/gone.sh)",
            4,
        ),
    ]


def test_shape_mistakes_are_located(tmp_path: Path) -> None:
    root = tree(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": PLUGIN,
            "hooks/hooks.json": (
                '{"hooks": {\n'
                ' "PreToolUze": [],\n'
                ' "Stop": {"hooks": []},\n'
                ' "SessionStart": [{"hooks": [{"type": "shell", "command": "x"}]}],\n'
                ' "PostToolUse": [{"matcher": "(", "hooks": []}],\n'
                ' "Notification": [{"hooks": [{"type": "command",'
                ' "command": "a \'b", "timeout": -1}]}]\n'
                "}}\n"
            ),
        },
    )
    found = [
        (problem.rule, problem.message, problem.line)
        for problem in check_material(load_material(root))
    ]
    assert found == [
        (
            "OODA006",
            "hooks: 'PreToolUze' is not a hook event Claude Code documents; its hooks never "
            "run unless a newer release knows it",
            2,
        ),
        ("OODA005", "hooks.Stop: expected a list", 3),
        (
            "OODA005",
            "hooks.SessionStart[0].hooks[0].type: expected one of command, prompt, agent, got "
            "'shell'",
            4,
        ),
        (
            "OODA005",
            "hooks.PostToolUse[0].matcher: not a pattern: missing ), unterminated "
            "subpattern at position 0",
            5,
        ),
        (
            "OODA005",
            'hooks.PostToolUse[0]: expected \'hooks\': a list of {"type": "command", "command": …}',
            5,
        ),
        ("OODA005", "hooks.Notification[0].hooks[0].timeout: expected seconds > 0", 6),
        (
            "OODA005",
            "hooks.Notification[0].hooks[0].command: cannot be split: No closing quotation",
            6,
        ),
    ]


def test_a_settings_file_that_is_not_json_is_located(tmp_path: Path) -> None:
    tree(tmp_path, {".claude/settings.json": '{"hooks": \n', ".claude/commands/a.md": "a\n"})
    (problem, *_) = check_material(load_material(tmp_path))
    assert problem.line == 2
    assert "invalid JSON" in problem.message


def test_a_hook_is_named_as_claude_code_names_it() -> None:
    from pathlib import Path

    assert Hook("PreToolUse", "Write", "command", "x", Path("h")).name == "PreToolUse:Write"
    assert Hook("Stop", None, "command", "x", Path("h")).name == "Stop"
