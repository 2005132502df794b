"""What Gemini CLI loads for one run, named as it names it: the fingerprint's Gemini side
(:meth:`GeminiAgent.configuration`), read from where 0.61 looks.

- The user's directory, ``$GEMINI_CLI_HOME/.gemini`` or ``~/.gemini``: ``settings.json``
  (its ``mcpServers``, its ``hooks`` by event, its ``context.fileName``), the
  instructions file (``GEMINI.md`` unless the settings name another), ``commands/``
  (TOML files; ``git/commit.toml`` is ``/git:commit``), ``skills/``, ``agents/``
  (subagents), ``policies/`` and ``extensions/`` (each a plugin: its directory, and the
  MCP servers its ``gemini-extension.json`` declares); skills also under ``~/.agents/skills``.
- The project, the workspace: ``.gemini/`` the same way (but extensions), the
  instructions file, ``.agents/skills``.
- The machine: ``/etc/gemini-cli/settings.json`` and ``system-defaults.json`` (or
  where ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` / ``GEMINI_CLI_SYSTEM_DEFAULTS_PATH`` say).

The settings hash covers the command line, every settings file and the policies; a
``.env`` file (which may hold the key) is left out.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.fingerprint import (
    Configuration,
    Loaded,
    file_sha256,
    mcp_servers,
    read_json_file,
    settings_sha256,
    tree_sha256,
    value_sha256,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import LoadedScope

__all__ = ["SYSTEM_DIR", "configuration", "system_files", "user_home"]

#: Where an administrator configures Gemini CLI on Linux.
SYSTEM_DIR = Path("/etc/gemini-cli")
INSTRUCTIONS = "GEMINI.md"


def user_home(home: Path, env: Mapping[str, str] | None = None) -> Path:
    """The home Gemini CLI reads ``.gemini`` from: ``$GEMINI_CLI_HOME``, else ``home``."""
    moved = (os.environ if env is None else env).get("GEMINI_CLI_HOME")
    return Path(moved) if moved else home


def system_files(env: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """The machine's settings and its defaults, where the variables may move them."""
    source = os.environ if env is None else env
    settings = source.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or str(SYSTEM_DIR / "settings.json")
    defaults = source.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or str(
        SYSTEM_DIR / "system-defaults.json"
    )
    return Path(settings), Path(defaults)


def _instruction_names(settings: Sequence[Any]) -> list[str]:
    """The instructions files' names: ``context.fileName`` (a name or a list) of the
    last settings that says, else ``GEMINI.md``."""
    for value in reversed(settings):
        context = value.get("context") if isinstance(value, dict) else None
        name = context.get("fileName") if isinstance(context, dict) else None
        if isinstance(name, str) and name:
            return [name]
        if isinstance(name, list) and all(isinstance(item, str) for item in name) and name:
            return list(name)
    return [INSTRUCTIONS]


def _hooks(loaded: Loaded, value: Any, scope: LoadedScope) -> None:
    """Each event's hooks of a settings file (``{"hooks": {"BeforeTool": [...]}}``)."""
    hooks = value.get("hooks") if isinstance(value, dict) else None
    if not isinstance(hooks, dict):
        return
    for event, entries in hooks.items():
        if isinstance(entries, list) and entries:
            loaded.add("hooks", str(event), value_sha256(entries), scope)


def _commands(loaded: Loaded, root: Path, scope: LoadedScope) -> None:
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.toml")):
        if path.is_file() and not path.is_symlink():
            name = path.relative_to(root).with_suffix("").as_posix().replace("/", ":")
            loaded.add("commands", name, file_sha256(path), scope)


def _entries(loaded: Loaded, kind: str, root: Path, scope: LoadedScope) -> None:
    """A skill per subdirectory, or a subagent per Markdown file."""
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        if kind == "skills" and child.is_dir() and not child.is_symlink():
            loaded.add("skills", child.name, tree_sha256(child), scope)
        elif kind == "subagents" and child.suffix == ".md" and child.is_file():
            loaded.add("subagents", child.stem, file_sha256(child), scope)


def _extensions(loaded: Loaded, root: Path) -> None:
    """Each installed extension (a plugin) and the MCP servers it declares."""
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        manifest = child / "gemini-extension.json"
        if not child.is_dir() or not manifest.is_file():
            continue
        loaded.add("plugins", child.name, tree_sha256(child), "user")
        for name, digest in mcp_servers(read_json_file(manifest)):
            loaded.add("mcp", f"{child.name}:{name}", digest, "user")


def _policies(root: Path) -> list[Path]:
    return sorted(path for path in root.glob("*.toml") if path.is_file()) if root.is_dir() else []


def configuration(
    argv: Sequence[str],
    *,
    home: Path,
    workspace: Path,
    env: Mapping[str, str] | None = None,
) -> Configuration:
    """What Gemini CLI loads when ``argv`` runs with ``home`` as ``HOME`` in
    ``workspace``; see the module docstring."""
    user = user_home(home, env) / ".gemini"
    project = workspace / ".gemini"
    system, defaults = system_files(env)
    layers: list[tuple[LoadedScope, Path]] = [
        ("system", defaults),
        ("user", user / "settings.json"),
        ("project", project / "settings.json"),
        ("system", system),
    ]
    loaded = Loaded()
    values = []
    for scope, path in layers:
        value = read_json_file(path)
        values.append(value)
        for name, digest in mcp_servers(value):
            loaded.add("mcp", name, digest, scope)
        _hooks(loaded, value, scope)
    for name in _instruction_names(values):
        loaded.add("instructions", name, file_sha256(user / name), "user")
        loaded.add("instructions", name, file_sha256(workspace / name), "project")
    for scope, gemini_dir, agents_dir in (
        ("user", user, user_home(home, env) / ".agents"),
        ("project", project, workspace / ".agents"),
    ):
        where: LoadedScope = "user" if scope == "user" else "project"
        _commands(loaded, gemini_dir / "commands", where)
        _entries(loaded, "skills", gemini_dir / "skills", where)
        _entries(loaded, "skills", agents_dir / "skills", where)
        _entries(loaded, "subagents", gemini_dir / "agents", where)
    _extensions(loaded, user / "extensions")
    files = [(scope, path) for scope, path in layers]
    for scope, root in (("user", user / "policies"), ("project", project / "policies")):
        files += [(scope, path) for path in _policies(root)]
    files += [("system", path) for path in _policies(SYSTEM_DIR / "policies")]
    return Configuration(settings_sha256(argv, files), loaded.done())
