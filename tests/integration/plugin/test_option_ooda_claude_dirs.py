"""ini ``ooda_claude_dirs``: a project that is only Claude Code material (a plugin, a
``.claude/`` directory) and has no procedure config gets its commands, skills and
subagents collected under the ini file — checked, and snapshot as Claude Code renders
them — by naming the directories in the ini file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

GREETER = Path(__file__).resolve().parents[2] / "agents" / "greeter"
NODE = "pytest.ini::claude[plugins/greeter]"


def _material_only(project: Project) -> Path:
    """The project holds the greeter plugin and nothing of ours: no config."""
    (project.path / "ooda-config.yml").unlink()
    plugin = project.path / "plugins" / "greeter"
    shutil.copytree(GREETER, plugin)
    project.write("pytest.ini", "[pytest]\nooda_claude_dirs = plugins/greeter\n")
    return plugin


def test_the_ini_file_collects_each_command_skill_and_subagent(project: Project) -> None:
    _material_only(project)
    result = project.run("--collect-only", "-q")
    items = [line for line in result.outlines if line.startswith("pytest.ini::")]
    assert items == [
        f"{NODE}::config",
        f"{NODE}::config[subagent/greeter:reviewer]",
        f"{NODE}::prompt[subagent/greeter:reviewer]",
        f"{NODE}::config[command/greeter:farewell]",
        f"{NODE}::prompt[command/greeter:farewell]",
        f"{NODE}::config[command/greeter:hello]",
        f"{NODE}::prompt[command/greeter:hello]",
        f"{NODE}::config[skill/greeter:greet]",
        f"{NODE}::prompt[skill/greeter:greet]",
    ]


def test_snapshots_sit_beside_the_ini_file_and_an_edit_is_a_diff(project: Project) -> None:
    plugin = _material_only(project)
    project.run("--snapshot-update").assert_outcomes(passed=9)
    stored = project.path / "__snapshots__" / "pytest" / "claude[pluginsgreeter]"
    assert sorted(path.name for path in stored.iterdir()) == [
        "command.greeter~farewell.md",
        "command.greeter~hello.md",
        "skill.greeter~greet.md",
        "subagent.greeter~reviewer.md",
    ]
    project.run().assert_outcomes(passed=9)
    skill = plugin / "skills" / "greet" / "SKILL.md"
    skill.write_text(skill.read_text().replace("one line", "two lines"))
    result = project.run()
    result.assert_outcomes(passed=8, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*]: skill greeter:greet differs from its snapshot*",
            "*its file: plugins/greeter/skills/greet/SKILL.md*",
            "*+Write GREETING.md with two lines*",
        ]
    )


def test_a_front_matter_mistake_fails_at_its_line_with_the_default_severities(
    project: Project,
) -> None:
    plugin = _material_only(project)
    (plugin / "agents" / "broken.md").write_text("---\nname: broken\ntools: Read\n---\nHi.\n")
    result = project.run("-k", "config", "-p", "no:syrupy")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        ["*plugins/greeter/agents/broken.md:2:1: OODA005 error: subagent greeter:broken: a "
         "subagent needs a description*"]
    )  # fmt: skip


def test_a_directory_that_is_no_material_fails_one_item(project: Project) -> None:
    _material_only(project)
    (project.path / "notes").mkdir()
    project.write("pytest.ini", "[pytest]\nooda_claude_dirs =\n  plugins/greeter\n  notes\n")
    result = project.run("-p", "no:syrupy", "-k", "notes")
    result.assert_outcomes(failed=1, deselected=9)
    result.stdout.fnmatch_lines(["*neither a Claude Code plugin*"])


def test_a_missing_directory_is_a_usage_error_naming_the_key(project: Project) -> None:
    _material_only(project)
    project.write("pytest.ini", "[pytest]\nooda_claude_dirs = plugins/gretter\n")
    result = project.run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: ini option ooda_claude_dirs: directory not found: */plugins/gretter"]
    )


def test_given_without_an_ini_file_it_says_where_it_belongs(project: Project) -> None:
    _material_only(project)
    (project.path / "pytest.ini").unlink()
    result = project.run("--collect-only", "-q", "-o", "ooda_claude_dirs=plugins/greeter")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: ini option ooda_claude_dirs: its directories are collected with the ini "
         "file, and this session has none*"]
    )  # fmt: skip


def test_pyproject_toml_works_the_same(project: Project) -> None:
    _material_only(project)
    (project.path / "pytest.ini").unlink()
    project.write(
        "pyproject.toml", '[tool.pytest.ini_options]\nooda_claude_dirs = ["plugins/greeter"]\n'
    )
    result = project.run("--collect-only", "-q")
    assert "pyproject.toml::claude[plugins/greeter]::config" in result.outlines
