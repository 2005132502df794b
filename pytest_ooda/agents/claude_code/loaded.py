"""What Claude Code loads for one run, named as Claude Code names it: the fingerprint's
Claude Code side (:meth:`ClaudeAgent.configuration`).

Read with the material reader (:mod:`.material`, :mod:`.hooks`), from where 2.1.197
looks (docs/claude-code.md):

- the user's directory, ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``: ``commands/``,
  ``skills/``, ``agents/``, the hooks of ``settings.json``, ``CLAUDE.md``, and the
  plugins ``plugins/installed_plugins.json`` lists (unless the settings'
  ``enabledPlugins`` turns one off);
- the project, the workspace: ``.claude/`` the same way (with ``settings.local.json``),
  ``CLAUDE.md``, ``CLAUDE.local.md``, ``.mcp.json``;
- ``~/.claude.json``: the user's MCP servers, and the workspace's own entry's;
- the command line: each ``--plugin-dir`` (its commands, skills, subagents, hooks and
  ``.mcp.json``, names prefixed with the plugin's), ``--mcp-config`` and ``--settings``
  files;
- the machine: the managed settings (``/etc/claude-code/managed-settings.json``) and
  each ``CLAUDE.md`` in a directory above the workspace.

The settings hash covers the command line and every settings file (user, project,
local, managed, ``--settings``); each item is hashed by its content (a skill by its
directory, a hook by its type and command, an MCP server by its entry).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.claude_code.hooks import read_hooks
from pytest_ooda.agents.claude_code.material import read_material
from pytest_ooda.agents.fingerprint import (
    Configuration,
    Loaded,
    file_sha256,
    mcp_servers,
    read_json_file,
    settings_sha256,
    tree_sha256,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import LoadedScope
    from pytest_ooda.agents.claude_code.material import Material

__all__ = ["MANAGED_SETTINGS", "configuration"]

#: Settings an administrator puts on the machine; they win over every other file.
MANAGED_SETTINGS = Path("/etc/claude-code/managed-settings.json")
#: What of the user's or a project's ``.claude`` directory configures a run.
_PARTS = ("commands", "skills", "agents", "settings.json", "settings.local.json")
_KINDS = {"skill": "skills", "command": "commands", "subagent": "subagents"}


def _options(argv: Sequence[str], option: str) -> list[str]:
    """Every value of ``option`` on ``argv`` (``--opt v`` or ``--opt=v``), in order."""
    found: list[str] = []
    for index, word in enumerate(argv):
        if word == option and index + 1 < len(argv):
            found.append(argv[index + 1])
        elif word.startswith(option + "="):
            found.append(word.partition("=")[2])
    return found


def _read(root: Path, kind: str, parts: Sequence[str] | None = _PARTS) -> Material | None:
    if not root.is_dir():
        return None
    return read_material(root, "plugin" if kind == "plugin" else "project", parts=parts)


def _add_material(loaded: Loaded, material: Material, scope: LoadedScope) -> None:
    """Its commands, skills and subagents (a skill hashed with every file of its
    directory) and its hooks."""
    for item in material.items:
        kind = _KINDS[item.kind]
        digest = tree_sha256(item.directory) if item.kind == "skill" else file_sha256(item.file)
        loaded.add(kind, item.name, digest, scope)  # type: ignore[arg-type]
    hooks, _ = read_hooks(material)
    for hook in hooks:
        text = f"{hook.type}\0{hook.command or ''}"
        loaded.add("hooks", hook.name, hashlib.sha256(text.encode()).hexdigest(), scope)


def _add_plugin(loaded: Loaded, root: Path, scope: LoadedScope) -> None:
    material = _read(root, "plugin", parts=None)
    if material is None:
        return
    loaded.add("plugins", material.name, tree_sha256(root), scope)
    _add_material(loaded, material, scope)
    for name, digest in mcp_servers(read_json_file(root / ".mcp.json")):
        loaded.add("mcp", name, digest, scope)


def _installed_plugins(user: Path, settings: Sequence[Any]) -> list[Path]:
    """The directories of the plugins the user installed and did not turn off."""
    listed = read_json_file(user / "plugins" / "installed_plugins.json")
    plugins = listed.get("plugins") if isinstance(listed, dict) else None
    if not isinstance(plugins, dict):
        return []
    off = {
        name
        for value in settings
        if isinstance(value, dict) and isinstance(value.get("enabledPlugins"), dict)
        for name, enabled in value["enabledPlugins"].items()
        if enabled is False
    }
    found: list[Path] = []
    for name, entries in plugins.items():
        if name in off:
            continue
        for entry in entries if isinstance(entries, list) else [entries]:
            where = entry.get("installPath") if isinstance(entry, dict) else None
            if isinstance(where, str) and Path(where).is_dir():
                found.append(Path(where))
    return found


def _mcp_config(loaded: Loaded, value: str, workspace: Path) -> None:
    """An ``--mcp-config`` value: a JSON file, or JSON text."""
    path = Path(value) if os.path.isabs(value) else workspace / value
    data = read_json_file(path) if path.is_file() else None
    if data is None:
        try:
            data = json.loads(value)
        except ValueError:
            return
    for name, digest in mcp_servers(data):
        loaded.add("mcp", name, digest, "command-line")


def _ancestors(workspace: Path) -> list[Path]:
    """Each ``CLAUDE.md`` in a directory above the workspace (Claude Code reads them
    all, up to the root)."""
    return [
        parent / name
        for parent in workspace.resolve().parents
        for name in ("CLAUDE.md", "CLAUDE.local.md")
        if (parent / name).is_file()
    ]


def configuration(
    argv: Sequence[str], *, home: Path, workspace: Path, env: Mapping[str, str] | None = None
) -> Configuration:
    """What Claude Code loads when ``argv`` runs with ``home`` as ``HOME`` in
    ``workspace`` (see the module docstring)."""
    moved = (os.environ if env is None else env).get("CLAUDE_CONFIG_DIR")
    user = Path(moved) if moved else home / ".claude"
    project = workspace / ".claude"
    loaded = Loaded()
    settings_files: list[tuple[str, Path]] = [
        ("user", user / "settings.json"),
        ("project", project / "settings.json"),
        ("project", project / "settings.local.json"),
        ("system", MANAGED_SETTINGS),
    ]
    settings_files += [
        ("command-line", Path(value) if os.path.isabs(value) else workspace / value)
        for value in _options(argv, "--settings")
    ]
    for scope, root in (("user", user), ("project", project)):
        material = _read(root, "project")
        if material is not None:
            _add_material(loaded, material, scope)  # type: ignore[arg-type]
    decoded = [read_json_file(path) for _, path in settings_files]
    for root in _installed_plugins(user, decoded):
        _add_plugin(loaded, root, "user")
    for value in _options(argv, "--plugin-dir"):
        _add_plugin(loaded, Path(value) if os.path.isabs(value) else workspace / value,
                    "command-line")  # fmt: skip
    for value in _options(argv, "--mcp-config"):
        _mcp_config(loaded, value, workspace)
    # The user's state file moves with the configuration directory.
    state = read_json_file(user / ".claude.json" if moved else home / ".claude.json")
    for name, digest in mcp_servers(state):
        loaded.add("mcp", name, digest, "user")
    projects = state.get("projects") if isinstance(state, dict) else None
    if isinstance(projects, dict):
        for name, digest in mcp_servers(projects.get(str(workspace))):
            loaded.add("mcp", name, digest, "project")
    for name, digest in mcp_servers(read_json_file(workspace / ".mcp.json")):
        loaded.add("mcp", name, digest, "project")
    loaded.add("instructions", "CLAUDE.md", file_sha256(user / "CLAUDE.md"), "user")
    for name in ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"):
        loaded.add("instructions", name, file_sha256(workspace / name), "project")
    for path in _ancestors(workspace):
        loaded.add("instructions", str(path), file_sha256(path), "system")
    return Configuration(settings_sha256(argv, settings_files), loaded.done())
