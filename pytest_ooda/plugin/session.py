"""Session-level work behind the plugin's hooks: adding the packaged built-ins,
warning about scenarios nothing runs, keeping ``live`` items out unless asked for, and
cleaning up when the session ends."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda._util import closest, display_path
from pytest_ooda.errors import ScenarioError
from pytest_ooda.plugin.nodes import ConfigFile, OrphanScenariosItem, iter_procedure_nodes
from pytest_ooda.plugin.options import SCENARIO_SUFFIXES
from pytest_ooda.plugin.snapshot import PromptSnapshotExtension, prune_empty_dirs
from pytest_ooda.plugin.state import (
    BUILTIN_NODEID,
    BUILTIN_SNAPSHOTS,
    PLUGIN_STATE,
    builtin_config_path,
)
from pytest_ooda.settings import BUILTIN, CONFIG, PROCEDURE_FILES, SCENARIO_DIR

if TYPE_CHECKING:
    import pytest


def add_builtin_items(session: pytest.Session, items: list[pytest.Item]) -> None:
    """With ``--ooda-builtin``: collect the packaged built-ins unless already collected."""
    state = session.config.stash[PLUGIN_STATE]
    if not state.settings[BUILTIN]:
        return
    path = builtin_config_path()
    if path.resolve() in state.collected_files:
        return
    inside_root = path.resolve().is_relative_to(state.settings.root.resolve())
    node = ConfigFile.from_parent(
        session, path=path, nodeid=None if inside_root else f"{BUILTIN_NODEID}/builtin.yml"
    )
    if not inside_root:
        # Outside the rootdir (an installed package): keep snapshots in the project,
        # never inside site-packages.
        node.snapshot_dir = (
            state.settings.root / str(PromptSnapshotExtension.snapshot_dirname) / BUILTIN_SNAPSHOTS
        )
        node.read_only = True
    items.extend(session.genitems(node))


def fail_orphan_scenarios(config: pytest.Config, items: list[pytest.Item]) -> None:
    """An item that fails for each ``<scenario root>/<name>/`` holding scenario files
    where no collected procedure is ``name``.

    Such scenarios never run, so a typo in the folder name would pass silently. Only
    checked when the whole tree was collected (no file or node id named on the command
    line), and not for a root shared with a config file that failed to load, whose
    procedures are unknown. Every xdist worker makes the same items.
    """
    if any("::" in arg or Path(arg).is_file() for arg in config.args):
        return
    state = config.stash[PLUGIN_STATE]
    declared: dict[Path, set[str]] = {}
    owner: dict[Path, ConfigFile] = {}
    for node in iter_procedure_nodes(items):
        if node.file_node.read_only:
            continue
        root = node.scenario_dir().parent
        declared.setdefault(root, set()).add(node.procedure.name)
        owner.setdefault(root, node.file_node)
    broken_roots = {
        state.settings[SCENARIO_DIR] or path.parent / "scenarios" for path in state.broken_files
    }
    for root, names in declared.items():
        if root in broken_roots or not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            if folder.name in names or folder.name.startswith(".") or not folder.is_dir():
                continue
            files = sorted(
                path
                for path in folder.iterdir()
                if path.suffix in SCENARIO_SUFFIXES and path.is_file()
            )
            if not files:
                continue
            close = closest(folder.name, names)
            error = ScenarioError(
                f"{display_path(folder, config.rootpath)}/ holds {len(files)} scenario "
                f"file(s) that never run: no collected procedure is named {folder.name!r}",
                file=str(files[0]),
                line=1,
                hint=f"did you mean {close!r}? (rename the folder)"
                if close
                else f"known procedures: {', '.join(sorted(names))}",
            )
            items.append(
                OrphanScenariosItem.from_parent(
                    owner[root], name=f"scenarios[{folder.name}]", error=error
                )
            )


def prune_snapshot_dirs(config: pytest.Config) -> None:
    """After ``--snapshot-update``, drop snapshot directories left empty by deletions.

    Runs where syrupy deletes (a single process, or the xdist controller, which never
    collects), so the config directories come from the globs rather than collection.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    settings = config.stash[PLUGIN_STATE].settings
    directories = {path.parent for path in config.stash[PLUGIN_STATE].collected_files}
    for glob in settings[PROCEDURE_FILES]:
        directories.update(path.parent for path in settings.root.glob(glob))
    config_file = settings[CONFIG]
    if config_file is not None:
        directories.add(config_file.parent)
    directories.add(settings.root)
    for directory in directories:
        prune_empty_dirs(directory / str(PromptSnapshotExtension.snapshot_dirname))
