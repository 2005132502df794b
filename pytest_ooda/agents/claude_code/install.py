"""Installing Claude Code material into a run's workspace, and what the command line
then needs — never into the user's own ``~/.claude``.

- A project's ``.claude/`` directory is copied into the workspace's ``.claude/`` (its
  files over any the workspace has), where Claude Code finds it as the project's.
- A plugin is copied to ``.ooda/plugins/<name>/`` in the workspace and given to the
  CLI as ``--plugin-dir .ooda/plugins/<name>`` (a relative path: Claude Code resolves it
  against its working directory, inside any sandbox), so its names keep the plugin's
  prefix, as an installed plugin's do.

With ``--output-format stream-json`` the command also gets ``--include-hook-events``:
without it the stream reports the ``SessionStart`` hooks only, and ``expect.activation``
could not see the others fire.
"""

from __future__ import annotations

import shutil
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pytest_ooda.agents.claude_code.material import Material

__all__ = ["PLUGINS_DIR", "install_material", "material_argv", "with_material_argv"]

#: Where plugins are installed in a run's workspace.
PLUGINS_DIR = ".ooda/plugins"
_PROGRAMS = ("claude",)
_HOOK_EVENTS = "--include-hook-events"


def install_material(material: Material, workspace: Path) -> None:
    """Copy ``material``'s files into ``workspace`` (see the module docstring)."""
    if material.kind == "plugin":
        target = workspace / PLUGINS_DIR / material.name
    else:
        target = workspace / ".claude"
    for relative in material.files:
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(material.root / relative, destination)


def material_argv(material: Material) -> tuple[str, ...]:
    """The words the command line needs for ``material`` once it is installed."""
    if material.kind == "plugin":
        return ("--plugin-dir", f"{PLUGINS_DIR}/{material.name}")
    return ()


def with_material_argv(argv: Sequence[str], extra: Sequence[str]) -> tuple[str, ...]:
    """``argv`` with ``extra`` (what :func:`material_argv` gave) and, for a stream-json
    run, ``--include-hook-events`` added — when ``argv`` runs Claude Code at all; any
    other command is left as it is (a wrapper script must pass them on itself)."""
    words = tuple(argv)
    if not words or PurePath(words[0]).name not in _PROGRAMS:
        return words
    added = tuple(extra)
    streaming = "stream-json" in words or "--output-format=stream-json" in words
    if streaming and _HOOK_EVENTS not in words:
        added += (_HOOK_EVENTS,)
    return words + added
