"""``--ooda-prompt-format`` / ini ``ooda_prompt_format``, and a collected rooda-config.yml."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ooda_project import Project

ROODA = Path(__file__).resolve().parents[2] / "rooda"
GOLDENS = json.loads((ROODA / "goldens.json").read_text(encoding="utf-8"))["runs"]


#: The corpus cases are about composition; their prompts name no signals.
NO_SIGNAL_RULES = "[pytest]\nooda_lint_severity = OODA301=off\n"


def rooda_project(project: Project, case: str = "no_display") -> Path:
    """The project with a corpus case's rooda-config.yml at its root, and no ooda one."""
    (project.path / "ooda-config.yml").unlink()
    project.write("pytest.ini", NO_SIGNAL_RULES)
    for item in (ROODA / "corpus" / case).iterdir():
        if item.is_dir():
            shutil.copytree(item, project.path / item.name, dirs_exist_ok=True)
        else:
            shutil.copy(item, project.path / item.name)
    return project.path / "__snapshots__" / "rooda-config"


def test_a_root_rooda_config_is_collected_in_our_format_by_default(project: Project) -> None:
    snapshots = rooda_project(project)
    project.run("--snapshot-update").assert_outcomes(passed=12)
    assert (
        (snapshots / "bare" / "assembled.md")
        .read_text()
        .startswith("═" * 63 + "\nOODA PROCEDURE EXECUTION\n")
    )
    assert not (snapshots / "bare" / "assembled.rooda.md").exists()


def test_rooda_format_snapshots_are_roodas_bytes_and_say_so(project: Project) -> None:
    snapshots = rooda_project(project)
    project.run("--snapshot-update", "--ooda-prompt-format=rooda").assert_outcomes(passed=12)
    stored = (snapshots / "bare" / "assembled.rooda.md").read_bytes().decode("utf-8")
    # Iteration 1 of the default 5, as rooda piped it to its AI command.
    assert stored == GOLDENS["no_display/bare/iteration"]["prompt"]
    assert not (snapshots / "bare" / "assembled.md").exists()
    # The phases compose alike in both formats: one file each.
    assert (snapshots / "bare" / "observe.md").read_text() == "Look around.\n"
    project.run("--ooda-prompt-format=rooda").assert_outcomes(passed=12)


def test_switching_format_names_the_other_snapshot(project: Project) -> None:
    rooda_project(project)
    project.run("--snapshot-update").assert_outcomes(passed=12)
    result = project.run("--ooda-prompt-format", "rooda")
    result.assert_outcomes(passed=10, failed=2)
    result.stdout.fnmatch_lines(
        [
            "procedure bare: no snapshot of the assembled prompt yet "
            "(__snapshots__/rooda-config/bare/assembled.rooda.md)",
            "  __snapshots__/rooda-config/bare/assembled.md holds it in another prompt "
            "format; --snapshot-update replaces it",
        ]
    )
    # Accepting the new format replaces the old file instead of keeping both.
    project.run("--snapshot-update", "--ooda-prompt-format", "rooda").assert_outcomes(passed=12)
    bare = project.path / "__snapshots__/rooda-config/bare"
    assert sorted(p.name for p in bare.iterdir()) == [
        "act.md",
        "assembled.rooda.md",
        "decide.md",
        "observe.md",
        "orient.md",
    ]


def test_ini_key_and_config_setting(project: Project) -> None:
    snapshots = rooda_project(project)
    project.write("pytest.ini", NO_SIGNAL_RULES + "ooda_prompt_format = rooda\n")
    project.run("--snapshot-update").assert_outcomes(passed=12)
    assert (snapshots / "bare" / "assembled.rooda.md").exists()
    # Without the ini key, the procedure's own setting decides.
    project.write("pytest.ini", NO_SIGNAL_RULES)
    config = project.path / "rooda-config.yml"
    config.write_text(
        config.read_text().replace("  bare:\n", "  bare:\n    prompt_format: rooda\n")
    )
    project.run("--snapshot-update").assert_outcomes(passed=12)
    assert (snapshots / "bare" / "assembled.rooda.md").exists()
    assert (snapshots / "nothing" / "assembled.md").exists()


def test_bad_value_is_a_usage_error(project: Project) -> None:
    result = project.run("--ooda-prompt-format", "go")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--ooda-prompt-format*invalid choice*'go'*"])
    project.write("pytest.ini", "[pytest]\nooda_prompt_format = go\n")
    result = project.run()
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*ini option ooda_prompt_format: invalid choice: 'go'*"])


def test_a_broken_procedures_snapshots_survive_snapshot_update(project: Project) -> None:
    snapshots = rooda_project(project, "blast_radius")
    (project.path / "prompts" / "missing.md").write_text("Here for now.\n")
    project.run("--snapshot-update").assert_outcomes(passed=12)
    (project.path / "prompts" / "missing.md").unlink()
    result = project.run("--snapshot-update")
    result.assert_outcomes(passed=6, failed=1, skipped=5)
    assert (snapshots / "broken" / "observe.md").read_text() == "Here for now.\n"
    assert (snapshots / "broken" / "assembled.md").exists()


def test_rooda_snapshots_are_kept_with_two_workers(project: Project) -> None:
    snapshots = rooda_project(project)
    first = project.run("--snapshot-update", "-n", "2", "--ooda-prompt-format=rooda")
    first.assert_outcomes(passed=12)
    stored = snapshots / "bare" / "assembled.rooda.md"
    assert stored.read_text() == GOLDENS["no_display/bare/iteration"]["prompt"]
    again = project.run("--snapshot-update", "-n", "2", "--ooda-prompt-format=rooda")
    again.assert_outcomes(passed=12)
    assert "unused" not in again.stdout.str()
    assert stored.is_file()
