"""Agent material as lint findings: every command, skill, subagent, hook and plugin file
of a config's material sections (``claude:``), checked and linted by the agent that
reads it (``OODA005``, ``OODA006``, ``OODA303``–``OODA305``, ``OODA404``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.errors import OodaError

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents import Problem
    from pytest_ooda.config import Config
    from pytest_ooda.lint.findings import Collector

__all__ = [
    "lint_material_dir",
    "lint_material_sections",
    "lint_workspace_material",
    "material_items",
]


def _add(out: Collector, problem: Problem) -> None:
    out.add(
        problem.rule,
        problem.message,
        file=problem.file,
        line=problem.line,
        column=problem.column,
        hint=problem.hint,
    )


def lint_material_dir(out: Collector, section: str, path: Path) -> int:
    """The findings of one material directory into ``out``; the items it holds (a
    directory that is no material at all is one ``OODA005`` finding)."""
    from pytest_ooda.agents import MATERIAL_SECTIONS, check_material, lint_material

    try:
        material = MATERIAL_SECTIONS[section](path)
    except OodaError as error:
        out.add("OODA005", error.message, file=path, hint=error.hint)
        return 0
    for problem in (*check_material(material), *lint_material(material)):
        _add(out, problem)
    return len(material.items)


def lint_material_sections(out: Collector, config: Config) -> int:
    """Every directory of ``config``'s material sections; the items checked."""
    return sum(
        lint_material_dir(out, section, path)
        for section, paths in config.material.items()
        for path in paths
    )


def lint_workspace_material(out: Collector, workspace: Path, seen: set[Path]) -> None:
    """The findings of the agent material a scenario's ``workspace`` holds itself (its
    ``.claude/``: the agent loads it as the project's), each directory once (``seen``)."""
    from pytest_ooda.agents import WORKSPACE_MATERIAL

    for section, name in WORKSPACE_MATERIAL.items():
        held = (workspace / name).resolve()
        if held.is_dir() and held not in seen:
            seen.add(held)
            lint_material_dir(out, section, held)


def material_items(config: Config) -> int:
    """How many commands, skills and subagents ``config``'s material sections hold."""
    from pytest_ooda.agents import MATERIAL_SECTIONS

    total = 0
    for section, paths in config.material.items():
        for path in paths:
            try:
                total += len(MATERIAL_SECTIONS[section](path).items)
            except OodaError:
                continue
    return total
