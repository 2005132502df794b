"""Where a scenario's files are: the scenario loaded for its procedure, and its
workspace directory, kept inside the project."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import ScenarioError

if TYPE_CHECKING:
    from pytest_ooda.scenario.model import Scenario

__all__ = ["load_for", "workspace_of"]


def load_for(procedure: str, path: Path) -> Scenario:
    """Load a scenario file and check it belongs to ``procedure``."""
    from pytest_ooda.scenario.schema import load_scenario

    scenario = load_scenario(path)
    if scenario.procedure != procedure:
        raise ScenarioError(
            f"scenario is stored under procedure {procedure!r} but declares "
            f"procedure: {scenario.procedure}",
            file=str(path),
            line=1,
            hint=f"move it to the {scenario.procedure}/ scenario folder or fix `procedure:`",
        )
    return scenario


def _workspace_line(scenario: Scenario) -> int | None:
    if scenario.path is None:
        return None
    text = scenario.path.read_text(encoding="utf-8", errors="replace")
    for number, content in enumerate(text.splitlines(), start=1):
        if content.startswith("workspace:"):
            return number
    return None


def workspace_of(scenario: Scenario, *, root: Path | None = None) -> Path | None:
    """The scenario's workspace directory; a located ``ScenarioError`` when it is missing,
    or when it lies outside ``root`` (the project) while the scenario lies inside.

    The containment check is on the path as written (``..`` and absolute paths), so a
    fixture reached through a symbolic link stays usable; a scenario committed with
    ``workspace: ../../..`` would copy whatever happens to sit above the checkout.
    """
    directory = scenario.workspace_dir()
    if directory is None or scenario.workspace is None:
        return None
    line = _workspace_line(scenario)
    where: dict[str, Any] = {
        "file": str(scenario.path) if scenario.path is not None else None,
        "line": line,
        "column": 1 if line is not None else None,
    }
    if root is not None and scenario.path is not None:
        root = Path(os.path.normpath(root.absolute()))
        written = Path(os.path.normpath(scenario.path.parent.absolute() / scenario.workspace))
        inside = Path(os.path.normpath(scenario.path.absolute())).is_relative_to(root)
        if inside and not written.is_relative_to(root):
            raise ScenarioError(
                f"workspace {scenario.workspace!r} is outside the project ({written})",
                hint="keep scenario workspaces inside the project, relative to the scenario file",
                **where,
            )
    if directory.is_dir():
        return directory
    raise ScenarioError(
        f"workspace directory not found: {scenario.workspace} (resolved to {directory})",
        hint="workspace is relative to the scenario file's directory",
        **where,
    )
