"""Agent material as test items: a config's ``claude:`` section makes each command,
skill and subagent of the plugin a ``config`` item (front matter, references, lint) and
a ``prompt`` item (rendered as Claude Code renders it, against a Markdown snapshot),
with the arguments a raw procedure invokes a command with."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.agents import MATERIAL_SECTIONS

if TYPE_CHECKING:
    from ooda_project import Project

(SECTION,) = MATERIAL_SECTIONS
GREETER = Path(__file__).resolve().parents[2] / "agents" / "greeter"
NODE = f"ooda-config.yml::{SECTION}[greeter]"


def _plugin_project(project: Project) -> Path:
    shutil.copytree(GREETER, project.path / "greeter")
    project.write(
        "ooda-config.yml",
        f"{SECTION}: [greeter]\n"
        "procedures:\n"
        "  hello:\n    prompt_format: raw\n"
        "    act:\n      - content: /greeter:hello Alice cheerful\n",
    )
    return project.path / "greeter"


def test_each_command_skill_and_subagent_is_collected(project: Project) -> None:
    _plugin_project(project)
    result = project.run("--collect-only", "-q")
    items = [line for line in result.outlines if line.startswith(NODE)]
    assert items == [
        f"{NODE}::config",
        f"{NODE}::config[subagent/greeter:reviewer]",
        f"{NODE}::prompt[subagent/greeter:reviewer]",
        f"{NODE}::config[command/greeter:farewell]",
        f"{NODE}::prompt[command/greeter:farewell]",
        f"{NODE}::config[command/greeter:hello]",
        f"{NODE}::prompt[command/greeter:hello]",
        f"{NODE}::prompt[command/greeter:hello@hello]",
        f"{NODE}::config[skill/greeter:greet]",
        f"{NODE}::prompt[skill/greeter:greet]",
    ]
    # Material is not counted as procedures.
    result.stdout.fnmatch_lines(["ooda: 1 procedure, 0 scenarios in 1 config file"])


def test_snapshots_are_markdown_files_and_an_edit_shows_as_a_diff(project: Project) -> None:
    plugin = _plugin_project(project)
    project.run("--snapshot-update").assert_outcomes(passed=16)
    stored = project.path / "__snapshots__" / "ooda-config" / f"{SECTION}[greeter]"
    assert sorted(path.name for path in stored.iterdir()) == [
        "command.greeter~farewell.md",
        "command.greeter~hello.md",
        "command.greeter~hello@hello.md",
        "skill.greeter~greet.md",
        "subagent.greeter~reviewer.md",
    ]
    invoked = (stored / "command.greeter~hello@hello.md").read_text()
    assert "as a scenario invokes it: `/greeter:hello Alice cheerful`" in invoked
    assert "Greet Alice in a cheerful mood (all arguments: Alice cheerful)." in invoked
    assert "Uncommitted work before you start: !`git status --short`" in invoked
    project.run().assert_outcomes(passed=16)
    skill = plugin / "skills" / "greet" / "SKILL.md"
    skill.write_text(skill.read_text().replace("one line", "two lines"))
    result = project.run()
    result.assert_outcomes(passed=15, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*]: skill greeter:greet differs from its snapshot*",
            "*its file: greeter/skills/greet/SKILL.md*",
            "*-Write GREETING.md with one line*",
            "*+Write GREETING.md with two lines*",
        ]
    )


def test_a_front_matter_mistake_fails_its_item_at_its_line(project: Project) -> None:
    plugin = _plugin_project(project)
    (plugin / "agents" / "broken.md").write_text(
        "---\nname: broken\ntools: Read, Updte\n---\nYou are broken.\n"
    )
    (plugin / "commands" / "farewell.md").write_text(
        "---\ndescription: Bye\nargument-hint: [a] [b]\nalowed-tools: Write\n---\n"
        "Write FAREWELL.md.\n"
    )
    result = project.run("-k", "config and not prompt", "-p", "no:syrupy", "-W", "default")
    result.assert_outcomes(passed=5, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*greeter/agents/broken.md:2:1: OODA005 error: subagent greeter:broken: a subagent "
            "needs a description*",
            "*greeter/agents/broken.md:3:8: OODA005 error: subagent greeter:broken: tools: "
            "Updte is not a Claude Code tool*",
            "*greeter/commands/farewell.md:3:20: OODA005 error: front matter is not YAML*",
        ]
    )
    # The unknown key is a warning, located at its line.
    result.stdout.fnmatch_lines(
        ["*farewell.md:4*OODA006 warning*unknown front-matter key 'alowed-tools'*"]
    )


def test_a_section_naming_no_material_fails_one_item(project: Project) -> None:
    (project.path / "empty").mkdir()
    project.write("ooda-config.yml", f"{SECTION}: [empty]\n")
    result = project.run("-p", "no:syrupy")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*neither a Claude Code plugin*"])


def test_a_scenario_workspace_s_own_claude_directory_is_collected_once(project: Project) -> None:
    project.write(
        "ooda-config.yml",
        "procedures:\n  ship:\n    prompt_format: raw\n    act:\n      - content: /deploy now\n",
    )
    command = project.write(
        "scenarios/ship/repo/.claude/commands/deploy.md",
        "---\ndescription: Deploy the service\nallowed-tools: Bash(make deploy)\n---\n"
        "Run `make deploy` ($ARGUMENTS).\n",
    )
    # Two scenarios in the one workspace, one written with quotes and a comment.
    project.scenario("first", "procedure: ship\nworkspace: repo\niterations: []\n", "ship")
    project.scenario("again", "procedure: ship\nworkspace: 'repo'  # same\n", "ship")
    project.scenario("bare", "procedure: ship\niterations: []\n", "ship")
    node = f"ooda-config.yml::{SECTION}[scenarios/ship/repo/.claude]"
    listed = project.run("--collect-only", "-q")
    assert [line for line in listed.outlines if line.startswith(f"ooda-config.yml::{SECTION}")] == [
        f"{node}::config",
        f"{node}::config[command/deploy]",
        f"{node}::prompt[command/deploy]",
        f"{node}::prompt[command/deploy@ship]",
    ]
    project.run("--snapshot-update", "-k", SECTION).assert_outcomes(passed=4)
    stored = project.path / "__snapshots__" / "ooda-config"
    (site,) = [path for path in stored.iterdir() if path.name.startswith(SECTION)]
    invoked = (site / "command.deploy@ship.md").read_text()
    assert "Run `make deploy` (now)." in invoked
    project.run("-k", SECTION).assert_outcomes(passed=4)
    command.write_text(command.read_text().replace("make deploy`", "make release`"))
    changed = project.run("-k", SECTION, "-p", "no:cacheprovider")
    changed.assert_outcomes(passed=2, failed=2)
    changed.stdout.fnmatch_lines(["*-Run `make deploy` (now).*", "*+Run `make release` (now).*"])
    command.write_text("---\ndescription: [broken\n---\nRun it.\n")
    broken = project.run("-k", f"{SECTION} and not prompt", "-p", "no:syrupy")
    broken.assert_outcomes(passed=1, failed=1)
    broken.stdout.fnmatch_lines(
        ["scenarios/ship/repo/.claude/commands/deploy.md:3:1: OODA005 error: front matter *"]
    )


def test_a_scenario_s_slash_prompt_is_snapshot_with_its_arguments(project: Project) -> None:
    plugin = _plugin_project(project)
    project.scenario("bob", "procedure: hello\nprompt: /greeter:hello Bob grumpy\n", "hello")
    listed = project.run("--collect-only", "-q")
    assert f"{NODE}::prompt[command/greeter:hello@hello:bob]" in listed.outlines
    project.run("--snapshot-update", "-k", SECTION).assert_outcomes(passed=11)
    stored = project.path / "__snapshots__" / "ooda-config" / f"{SECTION}[greeter]"
    invoked = (stored / "command.greeter~hello@hello~bob.md").read_text()
    assert "as a scenario invokes it: `/greeter:hello Bob grumpy`" in invoked
    assert "Greet Bob in a grumpy mood (all arguments: Bob grumpy)." in invoked
    # Kept, not reported unused, by the next update.
    again = project.run("--snapshot-update", "-k", SECTION)
    again.assert_outcomes(passed=11)
    assert (stored / "command.greeter~hello@hello~bob.md").is_file()
    command = plugin / "commands" / "hello.md"
    command.write_text(command.read_text().replace("Greet $0", "Welcome $0"))
    changed = project.run("-k", "bob", "-p", "no:cacheprovider")
    changed.stdout.fnmatch_lines(
        ["*command /greeter:hello as scenario hello/bob invokes it differs from its snapshot*"]
    )
