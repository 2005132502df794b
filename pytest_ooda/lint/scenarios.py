"""Scenario files as lint findings (``OODA004``): every mistake of every scenario under
the config's ``scenarios/`` folder (or of the files named), found in one pass.

A scenario file is read by the same loader pytest uses, in its collecting mode, so a
file with three mistakes is three findings; a ``procedure:`` naming no procedure of the
config gets the closest name; a folder that names no procedure is one finding at its
first file, since its scenarios would never run; so is a scenario file left loose in the
root, beside the folders.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda._types import SCENARIO_SUFFIXES
from pytest_ooda._util import closest
from pytest_ooda.errors import OodaError

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from pytest_ooda.lint.findings import Collector

__all__ = ["SCENARIO_SUFFIXES", "lint_scenarios", "scenario_files"]


def scenario_files(root: Path) -> dict[str, list[Path]]:
    """The scenario files under ``root``, by the folder (procedure) they are in."""
    found: dict[str, list[Path]] = {}
    if not root.is_dir():
        return found
    for folder in sorted(root.iterdir()):
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        files = sorted(
            path
            for path in folder.iterdir()
            if path.suffix in SCENARIO_SUFFIXES and path.is_file() and not path.name.startswith(".")
        )
        if files:
            found[folder.name] = files
    return found


def _add(out: Collector, error: OodaError, procedure: str | None) -> None:
    for each in error.every:
        out.add(
            "OODA004",
            each.message,
            file=Path(each.file).resolve() if each.file is not None else None,
            line=each.line,
            column=each.column,
            procedure=procedure,
            hint=each.hint,
        )


def lint_scenarios(
    out: Collector,
    known: Collection[str] | None,
    *,
    root: Path | None = None,
    files: Iterable[Path] = (),
    project: Path | None = None,
) -> int:
    """Add a finding for each mistake in the scenarios under ``root`` (a folder per
    procedure) and in ``files``; returns how many scenario files were read. A
    scenario's ``workspace:`` must stay inside ``project``. ``known`` names the
    config's procedures (``None`` when the config did not load: each file is then
    checked on its own)."""
    from pytest_ooda.errors import ScenarioError
    from pytest_ooda.scenario import (
        load_for,
        load_scenario,
        loose_scenario_error,
        loose_scenario_files,
        workspace_of,
    )

    targets: list[tuple[Path, str | None]] = [(Path(file), None) for file in files]
    seen: set[Path] = set()
    for path in loose_scenario_files(root) if root is not None else ():
        _add(out, loose_scenario_error(path, f"{path.parent.name}/{path.name}"), None)
    for name, paths in (scenario_files(root) if root is not None else {}).items():
        if known is None:
            targets.extend((path, None) for path in paths)
            continue
        if name not in known:
            close = closest(name, known)
            _add(
                out,
                ScenarioError(
                    f"{name}/ holds {len(paths)} scenario file(s) that never run: no "
                    f"procedure is named {name!r}",
                    file=str(paths[0]),
                    line=1,
                    column=1,
                    hint=f"did you mean {close!r}? (rename the folder)" if close else None,
                ),
                None,
            )
            continue
        targets.extend((path, name) for path in paths)
    for path, folder in targets:
        if folder is None and known is not None and path.parent.name in known:
            folder = path.parent.name
        try:
            if known is None:
                scenario = load_scenario(path)
            elif folder is not None:
                scenario = load_for(folder, path, known=known)
            else:
                scenario = load_scenario(path)
                if scenario.procedure not in known:
                    close = closest(scenario.procedure, known)
                    raise ScenarioError(
                        f"procedure: no procedure is named {scenario.procedure!r}",
                        file=str(path),
                        line=1,
                        hint=f"did you mean {close!r}?" if close else None,
                    )
            workspace = workspace_of(scenario, root=project)
        except OodaError as error:
            _add(out, error, folder)
            continue
        if workspace is not None:
            # The agent material the workspace holds itself (its .claude/), once each.
            from pytest_ooda.lint.material import lint_workspace_material

            lint_workspace_material(out, workspace, seen)
    return len(targets)
