from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.agents.claude_code.material import load_material, material_root, tool_list
from pytest_ooda.errors import ConfigError

from .helpers import front, tree

if TYPE_CHECKING:
    from pathlib import Path


def test_a_plugin_names_everything_with_its_prefix(tmp_path: Path) -> None:
    root = tree(
        tmp_path / "plug",
        {
            ".claude-plugin/plugin.json": '{"name": "myplug", "version": "1.0.0"}',
            "commands/hello.md": front("Hi $ARGUMENTS\n", description="Say hi"),
            "commands/git/commit.md": front("Commit.\n", description="Commit"),
            "skills/greet/SKILL.md": front("Greet.\n", name="greet", description="Greets"),
            "skills/greet/reference.md": "ref\n",
            "agents/reviewer.md": front("Review.\n", name="code-reviewer", description="R"),
            "README.md": "not material\n",
        },
    )
    material = load_material(root)
    assert material.kind == "plugin"
    assert material.name == "myplug"
    assert sorted(item.key for item in material.items) == [
        "command/myplug:git:commit",
        "command/myplug:hello",
        "skill/myplug:greet",
        "subagent/myplug:code-reviewer",
    ]
    assert "skills/greet/reference.md" in material.files
    assert material.find("skill", "greet") is material.find("skill", "myplug:greet")
    assert material.find("skill", "other") is None


def test_a_project_is_found_from_its_root_and_has_no_prefix(tmp_path: Path) -> None:
    tree(tmp_path, {".claude/commands/kiro/spec-init.md": front("x\n", description="Init")})
    material = load_material(tmp_path)
    assert material.kind == "project"
    assert material.root == tmp_path / ".claude"
    assert [item.name for item in material.items] == ["kiro:spec-init"]
    assert material.prefix == ""


def test_a_skill_is_listed_by_its_directory_not_its_name(tmp_path: Path) -> None:
    tree(tmp_path, {".claude/skills/dirname/SKILL.md": front("x\n", name="other", description="d")})
    (item,) = load_material(tmp_path / ".claude").items
    assert item.name == "dirname"


def test_descriptions_as_claude_code_lists_them(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/commands/a.md": front("# Heading first\nBody\n", argument_hint="x"),
            ".claude/skills/b/SKILL.md": front(
                "x\n", description="Does b.", when_to_use="Use when b."
            ),
            ".claude/skills/c/SKILL.md": "No front matter.\n",
        },
    )
    found = {item.name: item.description for item in load_material(tmp_path).items}
    assert found == {"a": "Heading first", "b": "Does b. - Use when b.", "c": "No front matter."}


def test_hidden_from_the_model_only_when_it_says_so(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/skills/a/SKILL.md": front(
                "x\n", description="a", **{"disable_model_invocation": "true"}
            ),
            ".claude/skills/b/SKILL.md": front("x\n", description="b"),
        },
    )
    found = {item.name: item.model_invocable for item in load_material(tmp_path).items}
    assert found == {"a": False, "b": True}


def test_tool_lists_split_at_commas_outside_parentheses() -> None:
    assert tool_list("Read, Bash(git add, git commit:*), Grep") == (
        "Read",
        "Bash(git add, git commit:*)",
        "Grep",
    )
    assert tool_list(["Read", " Glob "]) == ("Read", "Glob")
    assert tool_list(None) is None
    assert tool_list(3) == ()


def test_a_directory_that_is_no_material_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="neither a Claude Code plugin") as caught:
        load_material(tmp_path)
    assert caught.value.file == str(tmp_path)
    assert material_root(tmp_path) is None


def test_an_unreadable_file_is_an_item_carrying_its_problem(tmp_path: Path) -> None:
    root = tree(tmp_path, {".claude/commands/bin.md": "x"})
    (root / ".claude/commands/bin.md").write_bytes(b"\xff\xfe\x00binary")
    (item,) = load_material(root).items
    (problem,) = item.front.problems
    assert problem.is_error
    assert "UTF-8" in problem.message


def test_a_plugin_manifest_that_is_not_json_is_located(tmp_path: Path) -> None:
    root = tree(tmp_path / "p", {".claude-plugin/plugin.json": '{"name": "x",\n  oops}'})
    material = load_material(root)
    (problem,) = material.problems
    assert problem.line == 2
    assert "invalid JSON" in problem.message
    assert material.name == "p"


def test_symbolic_links_and_vcs_folders_are_not_material_files(tmp_path: Path) -> None:
    root = tree(tmp_path, {".claude/skills/a/SKILL.md": front("x\n", description="a")})
    (root / ".claude/.git").mkdir()
    (root / ".claude/.git/HEAD").write_text("ref")
    (root / ".claude/link.md").symlink_to(tmp_path / "elsewhere.md")
    assert load_material(root).files == ("skills/a/SKILL.md",)


def test_pytest_ooda_s_own_files_beside_a_plugin_are_not_its_material(tmp_path: Path) -> None:
    """``ooda init --claude-plugin .`` puts a config, scenarios and snapshots in the
    plugin's own directory, and runs leave results there: a recording written into
    ``scenarios/`` must not change the material (the prompt) it recorded."""
    plugin = {
        ".claude-plugin/plugin.json": '{"name": "p"}',
        "skills/a/SKILL.md": front("x\n", description="a"),
        "dist/cli.js": "x\n",
    }
    harness = {
        "ooda-config.yml": "claude: [.]\n",
        "scenarios/skill-p-a/first-live.yml": "procedure: skill-p-a\n",
        "__snapshots__/ooda-config/claude[p]/skill.p~a.md": "# /p:a\n",
        ".ooda/results/session.jsonl": "{}\n",
        ".pytest_cache/v/cache/lastfailed": "{}\n",
    }
    root = tree(tmp_path / "p", {**plugin, **harness})
    assert load_material(root).files == (
        ".claude-plugin/plugin.json",
        "dist/cli.js",
        "skills/a/SKILL.md",
    )
    # Without a config beside it, a plugin's own scenarios/ folder is its own.
    (root / "ooda-config.yml").unlink()
    assert "scenarios/skill-p-a/first-live.yml" in load_material(root).files
