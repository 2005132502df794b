"""What an agent loads, read for a run's fingerprint, and its version, asked once.

An agent says where it reads its configuration (:meth:`Agent.config_sources`); the
fingerprint hashes what is there: the *settings* (the command line and every settings
file, one sha256 over all of them) and each *loaded* thing by name with the sha256 of
its content — a skill (its directory), a slash command or a subagent (its file), an MCP
server (its entry), a plugin (its directory), an instructions file (``AGENTS.md``).
:func:`from_sources` does that for any agent from its sources alone; an agent that knows
its configuration better (Claude Code names its hooks, its plugins' skills) overrides
:meth:`Agent.configuration` and uses the helpers here.

An agent's version is asked once per process (:mod:`.version`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ooda.facts import LoadedItem

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from pytest_ooda._types import LoadedKind, LoadedScope

__all__ = [
    "Configuration",
    "Loaded",
    "file_sha256",
    "from_sources",
    "mcp_servers",
    "read_json_file",
    "settings_sha256",
    "tree_sha256",
]

#: Directories a tree hash does not walk (a skill's vendored packages, VCS data).
SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
#: A configuration file larger than this is hashed, never parsed (``~/.claude.json`` of
#: a long-used install is a few hundred KB).
MAX_PARSED_BYTES = 16 * 1024 * 1024
#: What a source's ``what`` holds, as a fingerprint's kind (an agent's custom prompts are
#: its slash commands; Claude Code's ``agents`` are its subagents).
_KIND_OF: dict[str, LoadedKind] = {
    "skills": "skills",
    "commands": "commands",
    "prompts": "commands",
    "agents": "subagents",
    "plugins": "plugins",
    "mcp": "mcp",
    "instructions": "instructions",
    "hooks": "hooks",
}


class Source(Protocol):
    """A place an agent reads configuration from (``agents.ConfigSource``)."""

    @property
    def what(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def scope(self) -> str: ...


@dataclass(frozen=True)
class Configuration:
    """What an agent's configuration comes to for one run: the sha256 of its effective
    settings, and what it loaded, by kind."""

    settings: str
    loaded: Mapping[LoadedKind, tuple[LoadedItem, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )


class Loaded:
    """Collects loaded items by kind, each (name, scope, content) once, in order."""

    def __init__(self) -> None:
        self._items: dict[LoadedKind, dict[tuple[str, str, str], LoadedItem]] = {}

    def add(self, kind: LoadedKind, name: str, sha256: str | None, scope: LoadedScope) -> None:
        if sha256 is None:
            return
        item = LoadedItem(name, sha256, scope)
        self._items.setdefault(kind, {}).setdefault((name, scope, sha256), item)

    def done(self) -> Mapping[LoadedKind, tuple[LoadedItem, ...]]:
        return MappingProxyType(
            {
                kind: tuple(sorted(items.values(), key=lambda item: (item.name, item.scope)))
                for kind, items in self._items.items()
                if items
            }
        )


def file_sha256(path: Path) -> str | None:
    """The sha256 of a regular file's bytes (``None``: there is none, or it cannot be
    read)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 16), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _files(root: Path) -> Iterator[Path]:
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(name for name in dirs if name not in SKIPPED_DIRS)
        base = Path(directory)
        for name in sorted(names):
            path = base / name
            if path.is_file() and not path.is_symlink():
                yield path


def tree_sha256(root: Path) -> str | None:
    """The sha256 of a directory's files (their relative names and contents, in sorted
    order; VCS and package directories left out); ``None`` when it is no directory."""
    if not root.is_dir():
        return None
    digest = hashlib.sha256()
    for path in _files(root):
        content = file_sha256(path)
        if content is None:
            continue
        digest.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape"))
        digest.update(b"\0" + content.encode() + b"\n")
    return digest.hexdigest()


def value_sha256(value: Any) -> str:
    """The sha256 of a JSON value's canonical text (sorted keys)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def settings_sha256(argv: Sequence[str], files: Iterable[tuple[str, Path]]) -> str:
    """The sha256 of an agent's effective settings: its command line, and each settings
    file (``(scope, path)``) as it is now — missing files count as missing."""
    digest = hashlib.sha256()
    digest.update(value_sha256(list(argv)).encode())
    for scope, path in files:
        digest.update(f"\n{scope}\0{path.name}\0{file_sha256(path) or '-'}".encode())
    return digest.hexdigest()


def read_json_file(path: Path) -> Any:
    """A JSON file's value; ``None`` when it is missing, too large, or not JSON (a file
    the agent cannot read either configures nothing; its bytes still count where the
    caller hashes them)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_PARSED_BYTES:
            return None
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def mcp_servers(value: Any) -> list[tuple[str, str]]:
    """``(name, sha256 of its entry)`` of each server of an ``mcpServers`` object."""
    servers = value.get("mcpServers") if isinstance(value, dict) else None
    if not isinstance(servers, dict):
        return []
    return [(str(name), value_sha256(entry)) for name, entry in servers.items()]


def _add_directory(loaded: Loaded, kind: LoadedKind, root: Path, scope: LoadedScope) -> None:
    """Each entry of a directory of ``kind`` (a skill or plugin per subdirectory; a
    command or subagent per Markdown file, folders joined with ``:``)."""
    if not root.is_dir():
        return
    if kind in ("skills", "plugins"):
        for child in sorted(root.iterdir()):
            if child.is_dir() and not child.is_symlink():
                loaded.add(kind, child.name, tree_sha256(child), scope)
        return
    for path in _files(root):
        if path.suffix == ".md":
            name = path.relative_to(root).with_suffix("").as_posix().replace("/", ":")
            loaded.add(kind, name, file_sha256(path), scope)


def from_sources(sources: Sequence[Source], argv: Sequence[str]) -> Configuration:
    """An agent's configuration read from its ``sources`` alone: the settings files and
    the command line hashed together; instructions files by name, directories of skills,
    commands, prompts, subagents and plugins entry by entry, an MCP file by server."""
    loaded = Loaded()
    settings: list[tuple[str, Path]] = []
    for source in sources:
        scope: LoadedScope = "project" if source.scope == "project" else "user"
        if source.what == "settings":
            settings.append((source.scope, source.path))
            continue
        kind = _KIND_OF.get(source.what)
        if kind is None:
            continue
        if kind == "instructions":
            loaded.add(kind, source.path.name, file_sha256(source.path), scope)
        elif kind == "mcp" and source.path.is_file():
            for name, digest in mcp_servers(read_json_file(source.path)):
                loaded.add(kind, name, digest, scope)
        else:
            _add_directory(loaded, kind, source.path, scope)
    return Configuration(settings_sha256(argv, settings), loaded.done())
