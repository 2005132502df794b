"""Which scenarios a change touched: exactly the ones whose prompts (any fragment,
parameter, reachable iteration, variant, installed material) or workspace differ from
the revision's, each with why."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from git_project import CONFIG, git, make_project, write

from pytest_ooda.errors import UsageError
from pytest_ooda.impact import changed_since
from pytest_ooda.settings import session_settings

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.impact import Impact

ALL = {"greet/hello", "farewell/bye", "count/numbers"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    make_project(tmp_path)
    return tmp_path


def impact(root: Path, ref: str = "HEAD") -> Impact:
    return changed_since(session_settings(root), ref)


def touched(found: Impact) -> dict[str, tuple[str, ...]]:
    return {item.label: item.reasons for item in found.touched}


def test_nothing_changed_touches_nothing(project: Path) -> None:
    found = impact(project)
    assert {item.label for item in found.scenarios} == ALL
    assert found.touched == ()
    assert found.commit == git(project, "rev-parse", "HEAD")


def test_a_shared_fragment_touches_the_scenarios_that_read_it(project: Path) -> None:
    write(project, "prompts/shared.md", "Read the whole room first.\n")
    assert touched(impact(project)) == {
        "greet/hello": ("observe[0] prompts/shared.md",),
        "farewell/bye": ("observe[0] prompts/shared.md",),
    }


def test_a_private_fragment_touches_its_scenario_alone(project: Path) -> None:
    write(project, "prompts/count.md", "Find the odd numbers.\n")
    assert touched(impact(project)) == {"count/numbers": ("observe[0] prompts/count.md",)}


def test_a_template_branch_touches_only_the_scenarios_whose_parameters_take_it(
    project: Path,
) -> None:
    tone = (project / "prompts/tone.md").read_text()
    write(project, "prompts/tone.md", tone.replace("Speak up.", "Speak up, clearly."))
    assert touched(impact(project)) == {"farewell/bye": ("act[0] prompts/tone.md",)}


def test_a_template_branch_no_scenario_takes_touches_none(project: Path) -> None:
    tone = (project / "prompts/tone.md").read_text()
    write(project, "prompts/tone.md", tone.replace("Say nothing.", "Say nothing at all."))
    assert impact(project).touched == ()


def test_a_parameter_changes_the_rendered_fragment(project: Path) -> None:
    write(project, "ooda-config.yml", CONFIG.replace("{mode: calm}", "{mode: loud}"))
    assert touched(impact(project)) == {"greet/hello": ("observe[2] prompts/tone.md",)}


def test_the_iteration_limit_changes_every_prompt_after_the_first_line(project: Path) -> None:
    write(
        project,
        "scenarios/count/numbers.yml",
        "procedure: count\nmax_iterations: 7\niterations: []\n",
    )
    assert touched(impact(project)) == {"count/numbers": ("iteration limit 3 -> 7",)}


def test_a_workspace_file_touches_the_scenario_that_copies_it(project: Path) -> None:
    write(project, "workspaces/bye/guests.txt", "Ada\nGrace\nEdsger\n")
    write(project, "workspaces/bye/new.txt", "untracked, but git does not ignore it\n")
    assert touched(impact(project)) == {
        "farewell/bye": ("workspace workspaces/bye/: guests.txt, new.txt",)
    }


def test_an_ignored_file_in_a_workspace_is_no_change(project: Path) -> None:
    write(project, ".gitignore", "*.log\n")
    git(project, "add", ".gitignore")
    git(project, "commit", "-q", "-m", "ignore logs")
    write(project, "workspaces/bye/run.log", "noise\n")
    assert impact(project).touched == ()


def test_a_variant_reaches_a_fragment_the_base_prompt_does_not_use(project: Path) -> None:
    write(project, "prompts/greet-v2.md", "Find who arrived, by name.\n")
    write(
        project,
        "scenarios/greet/hello.yml",
        "procedure: greet\nvariants:\n  v2: {fragments: {prompts/greet.md: prompts/greet-v2.md}}\n"
        "iterations: []\n",
    )
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a variant")
    write(project, "prompts/greet-v2.md", "Find who arrived, by first name.\n")
    assert touched(impact(project)) == {
        "greet/hello": ("variant v2: observe[1] prompts/greet-v2.md",)
    }


def test_a_new_scenario_and_one_that_no_longer_composes(project: Path) -> None:
    write(project, "scenarios/count/more.yml", "procedure: count\niterations: []\n")
    write(project, "scenarios/greet/hello.yml", "procedure: greet\ncontext: [\n")
    found = touched(impact(project))
    assert found["count/more"] == ("new since the revision",)
    (reason,) = found["greet/hello"]
    assert reason.startswith("does not compose: scenarios/greet/hello.yml:")
    assert set(found) == {"count/more", "greet/hello"}


def test_the_revision_is_read_from_git_not_the_working_tree(project: Path) -> None:
    base = git(project, "rev-parse", "HEAD")
    write(project, "prompts/greet.md", "Find who arrived today.\n")
    git(project, "commit", "-q", "-am", "greet today")
    write(project, "prompts/count.md", "Find the even numbers.\n")  # uncommitted
    before = {path: path.read_bytes() for path in project.rglob("*") if path.is_file()}
    found = touched(impact(project, base))
    assert found == {
        "greet/hello": ("observe[1] prompts/greet.md",),
        "count/numbers": ("observe[0] prompts/count.md",),
    }
    after = {path: path.read_bytes() for path in project.rglob("*") if path.is_file()}
    assert after == before
    assert "count.md" in git(project, "status", "--porcelain")


def test_a_revision_that_names_no_commit_is_a_usage_error(project: Path) -> None:
    with pytest.raises(UsageError, match="'nope' names no commit"):
        impact(project, "nope")
    with pytest.raises(UsageError, match="is not a git revision"):
        impact(project, "--all")


def test_the_selection_reads_back_from_json(project: Path) -> None:
    from pytest_ooda.impact import Impact

    write(project, "prompts/shared.md", "Read the whole room first.\n")
    found = impact(project)
    assert Impact.from_json(found.to_json()) == found
    lines = found.lines()
    assert lines[0].startswith("changed since HEAD (")
    assert lines[0].endswith("2 of 3 scenario(s) touched")
    assert [line.split()[0] for line in lines[1:]] == ["touched", "touched", "untouched"]


def test_a_claude_directory_a_scenario_installs_is_part_of_its_prompts(project: Path) -> None:
    from pytest_ooda.agents import MATERIAL_SECTIONS

    (section,) = MATERIAL_SECTIONS
    write(
        project,
        ".claude/skills/greet/SKILL.md",
        "---\ndescription: Greets. Use when asked.\n---\nGreet.\n",
    )
    write(
        project,
        "scenarios/greet/hello.yml",
        f"procedure: greet\n{section}: ../../.claude\niterations: []\n",
    )
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "the greet skill")
    assert impact(project).touched == ()
    write(
        project,
        ".claude/skills/greet/SKILL.md",
        "---\ndescription: Greets. Use when asked.\n---\nGreet warmly.\n",
    )
    assert touched(impact(project)) == {
        "greet/hello": (f"{section}[0] .claude/skills/greet/SKILL.md",)
    }
