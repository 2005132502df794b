from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.agents.claude_code.checks import check_material
from pytest_ooda.agents.claude_code.material import load_material

from .helpers import front, tree

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents.claude_code.frontmatter import Problem


def _problems(root: Path) -> list[Problem]:
    return list(check_material(load_material(root)))


def _messages(root: Path) -> list[tuple[str, str, int | None, int | None]]:
    return [
        (problem.rule, problem.message, problem.line, problem.column) for problem in _problems(root)
    ]


def test_clean_material_has_no_problem(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/commands/hello.md": front(
                "Say hi to $0. See [the notes](../notes.md).\n",
                description="Say hello",
                allowed_tools="Bash(git status:*), Read",
                argument_hint="<name>",
                model="haiku",
            ),
            ".claude/notes.md": "notes\n",
            ".claude/skills/greet/SKILL.md": front(
                "Read [reference](reference.md) and run ${CLAUDE_SKILL_DIR}/scripts/x.sh\n",
                name="greet",
                description="Greets people. Use when asked to greet.",
            ),
            ".claude/skills/greet/reference.md": "r\n",
            ".claude/skills/greet/scripts/x.sh": "#!/bin/sh\n",
            ".claude/agents/reviewer.md": front(
                "You review.\n", name="reviewer", description="Reviews", tools="Read, Grep"
            ),
        },
    )
    assert _problems(tmp_path) == []


def test_unknown_keys_are_warnings_with_the_closest_key(tmp_path: Path) -> None:
    tree(tmp_path, {".claude/commands/a.md": front("x\n", description="d", alowed_tools="Read")})
    (problem,) = _problems(tmp_path)
    assert problem.rule == "OODA006"
    assert "unknown front-matter key 'alowed-tools'" in problem.message
    assert problem.hint is not None
    assert "allowed-tools" in problem.hint
    assert (problem.line, problem.column) == (3, 1)


def test_wrong_types_are_errors_at_the_value(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/skills/a/SKILL.md": front(
                "x\n",
                description="[1, 2]",
                disable_model_invocation="maybe",
                metadata="text",
            )
        },
    )
    found = _messages(tmp_path)
    assert found == [
        ("OODA005", "skill a: description: expected text, got a list", 2, 14),
        (
            "OODA005",
            "skill a: disable-model-invocation: expected true or false, got 'maybe'",
            3,
            27,
        ),
        ("OODA005", "skill a: metadata: expected a mapping, got a string ('text')", 4, 11),
    ]


def test_a_subagent_without_name_or_description_is_an_error(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/agents/a.md": front("x\n", description="d"),
            ".claude/agents/b.md": "no front matter\n",
        },
    )
    found = _messages(tmp_path)
    assert sum("needs a name" in message for _, message, _, _ in found) == 2
    assert sum("needs a description" in message for _, message, _, _ in found) == 1
    assert (
        "OODA005",
        "subagent b: a subagent needs a name: Claude Code drops this one without a word",
        1,
        1,
    ) in found


def test_tool_names_unknown_legacy_and_valid(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/commands/a.md": front(
                "x\n",
                description="d",
                allowed_tools="Read, Update, MultiEdit, mcp__github__list_prs, Bash(npm:*), 9x",
            )
        },
    )
    found = {(problem.rule, problem.message, problem.hint) for problem in _problems(tmp_path)}
    assert found == {
        (
            "OODA005",
            "command /a: allowed-tools: Update is not a Claude Code tool",
            "did you mean 'TaskUpdate'?",
        ),
        (
            "OODA006",
            "command /a: allowed-tools: MultiEdit is not a tool of Claude Code 2.1.197 (an "
            "older release had it)",
            "use Edit",
        ),
        (
            "OODA005",
            "command /a: allowed-tools: '9x' is not a tool name or a rule like Bash(git status:*)",
            None,
        ),
    }


def test_skill_names_follow_their_directory_and_the_format(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/skills/Mixed_Case/SKILL.md": front("x\n", description="d"),
            ".claude/skills/dir/SKILL.md": front("x\n", name="other", description="d"),
        },
    )
    messages = [message for _, message, _, _ in _messages(tmp_path)]
    assert any("'Mixed_Case' is not a skill name" in message for message in messages)
    assert any("name: 'other' differs from its directory 'dir'" in message for message in messages)


def test_missing_references_are_errors_and_missing_at_files_warnings(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/skills/a/SKILL.md": front(
                "See [ref](reference.md), [web](https://x.org) and [top](#top).\n"
                "```\n[in a fence](nowhere.md)\n```\n"
                "Run ${CLAUDE_SKILL_DIR}/scripts/go.sh\n",
                description="d",
            ),
            ".claude/commands/c.md": front(
                "Look at @src/main.py and @README.md\n", description="d"
            ),
            "README.md": "x\n",
        },
    )
    found = [(rule, message, line, column) for rule, message, line, column in _messages(tmp_path)]
    assert (
        "OODA005",
        f"skill a: references reference.md, which does not exist "
        f"({tmp_path}/.claude/skills/a/reference.md)",
        4,
        11,
    ) in found
    assert any("scripts/go.sh" in message and line == 8 for _, message, line, _ in found)
    assert not any("nowhere.md" in message for _, message, _, _ in found)
    assert not any("x.org" in message for _, message, _, _ in found)
    (at,) = [entry for entry in found if "@src/main.py" in entry[1]]
    assert at[0] == "OODA006"
    assert (at[2], at[3]) == (4, 9)


def test_a_plugin_manifest_s_name_and_paths(tmp_path: Path) -> None:
    tree(
        tmp_path / "p",
        {".claude-plugin/plugin.json": '{\n  "name": "Bad Name",\n  "commands": "./cmds"\n}\n'},
    )
    found = _messages(tmp_path / "p")
    assert (
        "OODA005",
        "plugin.json: name: expected a kebab-case plugin name, got 'Bad Name'",
        2,
        11,
    ) in found
    assert ("OODA005", "plugin.json: commands: ./cmds does not exist", 3, 15) in found


def test_a_marketplace_lists_plugins_that_exist(tmp_path: Path) -> None:
    tree(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": '{"name": "p"}',
            ".claude-plugin/marketplace.json": (
                '{"name": "m", "owner": {"name": "o"}, "plugins": [\n'
                '  {"name": "p", "source": "./"},\n'
                '  {"name": "q", "source": "./missing"},\n'
                '  {"source": "./"}\n]}'
            ),
        },
    )
    found = _messages(tmp_path / "p")
    assert (
        "OODA005",
        "marketplace.json: plugins[1].source: ./missing does not exist",
        3,
        3,
    ) in found
    assert (
        "OODA005",
        "marketplace.json: plugins[2]: expected an object with a name",
        4,
        3,
    ) in found
    assert len(found) == 2
