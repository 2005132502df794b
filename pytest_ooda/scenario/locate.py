"""Where a scenario's files are: the scenario loaded for its procedure, and its
workspace directory, kept inside the project."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import SCENARIO_SUFFIXES
from pytest_ooda._util import closest
from pytest_ooda.errors import ScenarioError

if TYPE_CHECKING:
    from collections.abc import Collection

    from pytest_ooda.scenario.model import Scenario

__all__ = [
    "declared_values",
    "declared_workspace",
    "load_for",
    "loose_scenario_error",
    "loose_scenario_files",
    "workspace_of",
]


def loose_scenario_files(root: Path) -> list[Path]:
    """The scenario files directly in ``root``, beside the procedures' folders: none of
    them runs, since the folder a scenario is in names its procedure."""
    if not root.is_dir():
        return []
    return sorted(
        path
        for path in root.iterdir()
        if path.suffix in SCENARIO_SUFFIXES and path.is_file() and not path.name.startswith(".")
    )


def loose_scenario_error(path: Path, shown: str) -> ScenarioError:
    """The error for a loose scenario file (``shown``: its path as the user reads it)."""
    return ScenarioError(
        f"{shown} never runs: a scenario file belongs in the folder of the procedure it "
        "tests, not beside the folders",
        file=str(path),
        line=1,
        column=1,
        hint=f"move it to {path.parent.name}/<procedure>/{path.name}",
    )


def load_for(procedure: str, path: Path, *, known: Collection[str] = ()) -> Scenario:
    """Load a scenario file and check it belongs to ``procedure``, the folder it is in.

    ``known`` names the procedures of the config: a ``procedure:`` naming none of them
    is a typo (did you mean …), not a file to move to another folder."""
    from pytest_ooda.scenario.schema import load_scenario

    scenario = load_scenario(path)
    if scenario.procedure != procedure:
        line = _key_line(path, "procedure")
        where: dict[str, Any] = {
            "file": str(path),
            "line": line or 1,
            "column": len("procedure: ") + 1 if line else None,
        }
        if known and scenario.procedure not in known:
            close = closest(scenario.procedure, known)
            raise ScenarioError(
                f"procedure: no procedure is named {scenario.procedure!r} "
                f"(the file is in the {procedure}/ scenario folder)",
                hint=f"did you mean {close!r}?"
                if close is not None
                else f"fix `procedure:` (this folder's is {procedure!r})",
                **where,
            )
        raise ScenarioError(
            f"scenario is stored under procedure {procedure!r} but declares "
            f"procedure: {scenario.procedure}",
            hint=f"move it to the {scenario.procedure}/ scenario folder or fix `procedure:`",
            **where,
        )
    return scenario


def _key_line(path: Path, key: str) -> int | None:
    """The line of a top-level ``key:`` in the file at ``path``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for number, content in enumerate(text.splitlines(), start=1):
        if content.startswith(f"{key}:"):
            return number
    return None


def _workspace_line(scenario: Scenario) -> int | None:
    if scenario.path is None:
        return None
    return _key_line(scenario.path, "workspace")


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


def declared_values(path: Path, keys: Collection[str]) -> dict[str, str]:
    """The one-line text values the scenario file at ``path`` gives its top-level
    ``keys`` (``workspace``, ``prompt``), found in its text without loading it:
    collection asks them of every scenario (a workspace's own ``.claude/`` is collected
    as material, a slash command a ``prompt:`` sends is snapshot with its arguments), and
    a recorded scenario can be large. A key left out, written over several lines, or a
    file that cannot be read gives nothing — its scenario item says why."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    found: dict[str, str] = {}
    for key in keys:
        head = f"{key}:".encode()
        # The first line that starts with the key (bytes.find: a recording can be large).
        at = 0 if data.startswith(head) else data.find(b"\n" + head) + 1
        if at == 0 and not data.startswith(head):
            continue
        end = data.find(b"\n", at)
        line = data[at + len(head) : end if end >= 0 else len(data)].strip(b" \t\r")
        try:
            value = _one_line_value(line.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if value is not None:
            found[key] = value
    return found


#: The first characters of a plain YAML scalar that reads as the text it shows (a path,
#: a slash command, words); anything else is read by the YAML parser.
_PLAIN = re.compile(r"[\w./][^#]*?(?=\s+#|\s*$)")
_NOT_TEXT = frozenset({"null", "Null", "NULL", "~", "true", "True", "false", "False"})


def _one_line_value(text: str) -> str | None:
    """The text a one-line YAML value holds, ``None`` when it holds none (a block
    scalar's indicator, a number, a mapping, YAML it cannot read)."""
    plain = _PLAIN.match(text)
    if plain is not None and plain.group() not in _NOT_TEXT:
        return plain.group() if not plain.group().isdigit() else None
    import yaml

    try:
        value = yaml.safe_load(f"v: {text}")
    except yaml.YAMLError:
        return None
    found = value.get("v") if isinstance(value, dict) else None
    return found if isinstance(found, str) and found.strip() else None


def declared_workspace(path: Path) -> Path | None:
    """The directory the scenario file at ``path`` names in its top-level ``workspace:``
    (resolved against the file's directory; :func:`declared_values`), else ``None``."""
    found = declared_values(path, ("workspace",)).get("workspace")
    return (path.parent / found).resolve() if found is not None else None
