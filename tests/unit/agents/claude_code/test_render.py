"""The rendering rules, each as Claude Code 2.1.197 was measured to apply it
(docs/claude-code.md); tests/agents/test_claude_material.py holds the renderings to the
real CLI's first request."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.agents.claude_code.material import load_material
from pytest_ooda.agents.claude_code.render import (
    LISTING_LIMIT,
    bang_commands,
    expand_arguments,
    invocation_text,
    listing_line,
    render_snapshot,
    split_arguments,
)

from .helpers import front, tree

if TYPE_CHECKING:
    from pathlib import Path


def test_arguments_split_like_a_shell_and_fall_back_to_words() -> None:
    assert split_arguments('"Alice Smith" happy extra') == ["Alice Smith", "happy", "extra"]
    assert split_arguments("it's open") == ["it's", "open"]
    assert split_arguments("") == []


@pytest.mark.parametrize(
    ("body", "arguments", "expected"),
    [
        # $N and $ARGUMENTS[N] count from 0; $ARGUMENTS is the text as typed.
        (
            "zero=[$0] one=[$1] two=[$2] a0=[$ARGUMENTS[0]] all=[$ARGUMENTS]\n",
            '"Alice Smith" happy',
            'zero=[Alice Smith] one=[happy] two=[] a0=[Alice Smith] all=["Alice Smith" happy]\n',
        ),
        # No placeholder: the arguments are appended.
        ("Do it.\n", "now please", "Do it.\n\n\nARGUMENTS: now please"),
        # No placeholder and no arguments: the body as it is.
        ("Do it.\n", "", "Do it.\n"),
        # A placeholder and no arguments: empty.
        ("Greet $ARGUMENTS.\n", "", "Greet .\n"),
    ],
)
def test_expand_arguments(body: str, arguments: str, expected: str) -> None:
    assert expand_arguments(body, arguments) == expected


def _material(tmp_path: Path) -> Path:
    return tree(
        tmp_path,
        {
            ".claude/commands/hello.md": front(
                "\nGreet $0.\nFile: @notes.txt\nStatus: !`git status --short`\n",
                description="Say hello",
            ),
            ".claude/skills/greet/SKILL.md": front(
                "# Greet\nScripts in ${CLAUDE_SKILL_DIR}/scripts.\n",
                description="Greets. Use when greeting.",
            ),
            ".claude/agents/rev.md": front(
                "You review.\n", name="rev", description="Reviews.", model="haiku"
            ),
            ".claude/agents/any.md": front("Any.\n", name="any", description="All tools."),
        },
    )


def test_a_command_s_user_message(tmp_path: Path) -> None:
    material = load_material(_material(tmp_path))
    command = material.find("command", "hello")
    assert command is not None
    assert invocation_text(command, "Bob extra") == (
        "<command-message>hello</command-message>\n"
        "<command-name>/hello</command-name>\n"
        "<command-args>Bob extra</command-args>\n"
        "\nGreet Bob.\nFile: @notes.txt\nStatus: !`git status --short`\n"
    )
    assert bang_commands(command) == [(7, "git status --short")]


def test_a_skill_s_text_names_its_directory(tmp_path: Path) -> None:
    material = load_material(_material(tmp_path))
    skill = material.find("skill", "greet")
    assert skill is not None
    assert invocation_text(skill, "Bob", skill_dir="/w/.claude/skills/greet") == (
        "Base directory for this skill: /w/.claude/skills/greet\n\n"
        "# Greet\nScripts in /w/.claude/skills/greet/scripts.\n\n\nARGUMENTS: Bob"
    )


def test_listing_lines(tmp_path: Path) -> None:
    material = load_material(_material(tmp_path))
    lines = sorted(filter(None, (listing_line(item) for item in material.items)))
    assert lines == [
        "- any: All tools. (Tools: *)",
        "- greet: Greets. Use when greeting.",
        "- hello: Say hello",
        "- rev: Reviews. (Tools: *)",
    ]


def test_a_long_description_is_cut_in_the_listing(tmp_path: Path) -> None:
    tree(tmp_path, {".claude/skills/long/SKILL.md": front("x\n", description="w " * 1000)})
    (item,) = load_material(tmp_path).items
    line = listing_line(item)
    assert line is not None
    assert len(line) == len("- long: ") + LISTING_LIMIT
    assert line.endswith("…")


def test_a_hidden_skill_is_not_listed(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/skills/h/SKILL.md": front(
                "x\n", description="d", disable_model_invocation="true"
            )
        },
    )
    (item,) = load_material(tmp_path).items
    assert listing_line(item) is None
    assert "not listed: disable-model-invocation" in render_snapshot(item, load_material(tmp_path))


def test_snapshots_show_paths_from_the_project_and_bang_commands_as_written(
    tmp_path: Path,
) -> None:
    material = load_material(_material(tmp_path))
    command = material.find("command", "hello")
    assert command is not None
    text = render_snapshot(command, material, "Bob", label="/hello Bob")
    assert str(tmp_path) not in text
    assert text.startswith("# /hello\n\ncommand file: `.claude/commands/hello.md`\n")
    assert "as a scenario invokes it: `/hello Bob`" in text
    assert "    - hello: Say hello\n" in text
    assert "Status: !`git status --short`" in text
    assert "- line 7: `git status --short`" in text
    assert "## Attached as a Read of each file\n\n- @notes.txt\n" in text
    skill = material.find("skill", "greet")
    assert skill is not None
    assert "Base directory for this skill: .claude/skills/greet" in render_snapshot(skill, material)
    agent = material.find("subagent", "rev")
    assert agent is not None
    shown = render_snapshot(agent, material)
    assert "model: haiku" in shown
    assert "You review." in shown


def test_a_body_holding_fences_gets_a_longer_fence(tmp_path: Path) -> None:
    tree(tmp_path, {".claude/commands/f.md": front("```bash\nls\n```\n", description="d")})
    material = load_material(tmp_path)
    text = render_snapshot(material.items[0], material)
    assert "````text\n" in text
    assert text.rstrip().endswith("````")
