"""The agent material a config names, linted with its procedures (``OODA005``,
``OODA006``, ``OODA303``–``OODA305``, ``OODA404``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.agents import MATERIAL_SECTIONS
from pytest_ooda.lint import lint_path

if TYPE_CHECKING:
    from pathlib import Path

(SECTION,) = MATERIAL_SECTIONS


def test_ooda_lint_reports_the_material_of_the_config(tmp_path: Path) -> None:
    skills = tmp_path / "plugin" / ".claude" / "skills"
    (skills / "a").mkdir(parents=True)
    (skills / "a" / "SKILL.md").write_text("---\ndescription: Helps\nalowed: x\n---\nBody\n")
    agents = tmp_path / "plugin" / ".claude" / "agents"
    agents.mkdir()
    (agents / "r.md").write_text("---\nname: r\n---\nReview.\n")
    (tmp_path / "ooda-config.yml").write_text(
        f"{SECTION}: plugin\nprocedures:\n  p:\n    act:\n"
        "      - content: Done? <promise>SUCCESS</promise> else <promise>FAILURE</promise>\n"
    )
    report = lint_path(None, cwd=tmp_path)
    material = [f for f in report.findings if f.file and "plugin" in f.file]
    found = [(f.id, f.severity, f.location(relative_to=tmp_path)) for f in material]
    assert found == [
        ("OODA005", "error", "plugin/.claude/agents/r.md:2:1"),
        ("OODA304", "warning", "plugin/.claude/skills/a/SKILL.md:2:14"),
        ("OODA006", "warning", "plugin/.claude/skills/a/SKILL.md:3:1"),
    ]
    assert report.exit_code == 1
    assert "a subagent needs a description" in material[0].message


def test_material_rules_take_severities_like_any_rule(tmp_path: Path) -> None:
    (tmp_path / "p" / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / "p" / ".claude" / "commands" / "c.md").write_text(
        "---\ndescription: C\nallowed-tools: Write\n---\nSay hi.\n"
    )
    (tmp_path / "ooda-config.yml").write_text(f"{SECTION}: [p]\nlint: {{OODA404: error}}\n")
    report = lint_path(None, cwd=tmp_path)
    assert [(f.id, f.severity) for f in report.findings] == [("OODA404", "error")]
    off = lint_path(None, cwd=tmp_path, severities={"unneeded-allowed-tool": "off"})
    assert off.findings == ()


def test_a_material_section_naming_no_directory_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "ooda-config.yml").write_text(f"{SECTION}: [missing]\n")
    report = lint_path(None, cwd=tmp_path)
    (finding,) = report.findings
    assert finding.id == "OODA001"
    assert "'missing' is not a directory" in finding.message
    assert (finding.line, finding.column) == (1, 10)


def test_a_scenario_workspace_s_own_claude_directory_is_linted_once(tmp_path: Path) -> None:
    agents = tmp_path / "scenarios" / "p" / "repo" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "r.md").write_text("---\nname: r\n---\nReview.\n")
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    act:\n"
        "      - content: Done? <promise>SUCCESS</promise> else <promise>FAILURE</promise>\n"
    )
    for name in ("one", "two"):
        (tmp_path / "scenarios" / "p" / f"{name}.yml").write_text(
            "procedure: p\nworkspace: repo\niterations: []\n"
        )
    report = lint_path(None, cwd=tmp_path)
    found = [
        (f.id, f.location(relative_to=tmp_path))
        for f in report.findings
        if "repo" in (f.file or "")
    ]
    assert found == [("OODA005", "scenarios/p/repo/.claude/agents/r.md:2:1")]
