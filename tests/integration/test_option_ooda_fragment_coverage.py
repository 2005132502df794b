"""``--ooda-fragment-coverage`` / ini ``ooda_fragment_coverage``: the plugin wires the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ooda_project import Project


def test_flag_prints_the_report_for_composed_fragments(project: Project) -> None:
    project.write("prompts/unused.md", "Nobody composes this.\n")
    project.run("--snapshot-update", "-k", "prompt")
    result = project.run("--ooda-fragment-coverage", "-k", "prompt")
    result.stdout.fnmatch_lines(["*- ooda fragment coverage -*", "*prompts/observe.md*greet*"])


def test_ini_key_enables_it_and_it_is_off_by_default(project: Project) -> None:
    project.run("--snapshot-update", "-k", "prompt")
    assert "ooda fragment coverage" not in project.run("-k", "prompt").stdout.str()
    project.write("pytest.ini", "[pytest]\nooda_fragment_coverage = true\n")
    project.run("-k", "prompt").stdout.fnmatch_lines(["*- ooda fragment coverage -*"])
