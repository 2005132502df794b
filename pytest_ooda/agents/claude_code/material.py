"""Claude Code material: a plugin directory or a project's ``.claude/`` directory, read
into its commands, skills and subagents as Claude Code finds and names them.

Where Claude Code 2.1.197 looks (measured, docs/claude-code.md):

- a **plugin** (``--plugin-dir DIR``; ``DIR/.claude-plugin/plugin.json`` names it):
  ``commands/**/*.md``, ``skills/*/SKILL.md``, ``agents/**/*.md``, ``hooks/hooks.json``;
  every name is prefixed with the plugin's (``myplug:greet``);
- a **project** (``.claude/`` in the working directory): the same folders, no prefix,
  and the hooks of ``settings.json`` (and ``settings.local.json``).

A command is named by its path under ``commands/`` (``kiro/spec-init.md`` is
``kiro:spec-init``), a skill by its directory (its ``name:`` is not what it is listed
as), a subagent by its ``name:`` (without one it is dropped). Reading is one pass over
the directory: a plugin of 50 skills loads in milliseconds (``benchmarks/``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pytest_ooda.agents.claude_code.frontmatter import (
    ERROR_RULE,
    FrontMatter,
    Problem,
    split_front_matter,
)
from pytest_ooda.errors import ConfigError, OodaError
from pytest_ooda.textfile import read_text_file

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "Item",
    "ItemKind",
    "Material",
    "MaterialKind",
    "load_material",
    "read_json",
    "read_material",
]

ItemKind = Literal["command", "skill", "subagent"]
MaterialKind = Literal["plugin", "project"]

#: The manifest that makes a directory a plugin.
PLUGIN_MANIFEST = Path(".claude-plugin") / "plugin.json"
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
#: Files of a material directory never installed nor hashed: VCS and tool litter, and
#: what pytest-ooda itself keeps there (results, runs, prompt snapshots).
_SKIPPED_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        "__pycache__",
        ".venv",
        ".ooda",
        "__snapshots__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
    }
)
#: The config files that make a directory a pytest-ooda project: a plugin tested in its
#: own repository (``ooda init --claude-plugin .``) holds one at its root, beside the
#: ``scenarios/`` it records into. Neither is the plugin's: a recording written there
#: must not change the prompt it recorded.
_HARNESS_CONFIGS = ("ooda-config.yml", "rooda-config.yml")
_HARNESS_TOP = frozenset({*_HARNESS_CONFIGS, "scenarios"})
#: No SKILL.md or command a person wrote is larger.
MAX_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Item:
    """One command, skill or subagent as Claude Code lists it."""

    kind: ItemKind
    #: The name Claude Code gives it (a plugin's prefixed: ``myplug:greet``).
    name: str
    file: Path
    front: FrontMatter
    #: Where the material's root is (relative paths in messages start there).
    root: Path

    @property
    def directory(self) -> Path:
        """A skill's directory (its ``Base directory``); a file's own directory else."""
        return self.file.parent

    def value(self, key: str) -> Any:
        return self.front.values.get(key)

    def text(self, key: str) -> str | None:
        value = self.front.values.get(key)
        return value if isinstance(value, str) else None

    @property
    def description(self) -> str:
        """What Claude Code lists it with: its ``description:`` (a skill's
        ``when_to_use:`` after `` - ``), else the body's first line without ``#``."""
        text = self.text("description")
        if text is None or not text.strip():
            text = first_line(self.front.body)
        when = self.text("when_to_use")
        if self.kind != "subagent" and when:
            text = f"{text} - {when}"
        return " ".join(text.split())

    @property
    def tools(self) -> tuple[str, ...] | None:
        """``allowed-tools:`` (a subagent's ``tools:``) as a list, ``None`` when unset."""
        value = self.value("tools" if self.kind == "subagent" else "allowed-tools")
        return tool_list(value)

    @property
    def model_invocable(self) -> bool:
        """Whether the model is told of it (``disable-model-invocation: true`` hides a
        command or skill from the listing; a subagent is always listed)."""
        return self.kind == "subagent" or self.value("disable-model-invocation") is not True

    @property
    def shown(self) -> str:
        """``command /kiro:spec-init``, ``skill greet``, ``subagent reviewer``."""
        return f"{self.kind} /{self.name}" if self.kind == "command" else f"{self.kind} {self.name}"

    @property
    def key(self) -> str:
        """``command/kiro:spec-init``: the item's id part (``prompt[command/…]``)."""
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class Material:
    """A plugin or a project's ``.claude/`` directory, read."""

    root: Path
    kind: MaterialKind
    #: The plugin's name (``plugin.json``), or the directory's for a project.
    name: str
    items: tuple[Item, ...] = ()
    #: Every file under ``root`` (relative, sorted): what a run installs and hashes.
    files: tuple[str, ...] = ()
    #: Mistakes of the directory itself (a manifest, a settings file).
    problems: tuple[Problem, ...] = ()
    #: The decoded hook settings, with the file they came from.
    hook_files: tuple[tuple[Path, Any], ...] = field(default=())

    @property
    def prefix(self) -> str:
        """What a plugin's names start with (``myplug:``); empty for a project."""
        return f"{self.name}:" if self.kind == "plugin" else ""

    def find(self, kind: ItemKind, name: str) -> Item | None:
        """The item of ``kind`` called ``name`` (with or without the plugin's prefix)."""
        for item in self.items:
            if item.kind == kind and name in (item.name, item.name.removeprefix(self.prefix)):
                return item
        return None


def first_line(body: str) -> str:
    """The first non-empty line of ``body`` without a heading's ``#`` marks (what Claude
    Code lists an item with that has no description)."""
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return ""


def tool_list(value: Any) -> tuple[str, ...] | None:
    """A tool list as Claude Code reads it: a comma-separated string or a YAML list."""
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(part.strip() for part in _split_tools(value) if part.strip())
    if isinstance(value, list):
        return tuple(str(part).strip() for part in value if str(part).strip())
    return ()


def _split_tools(text: str) -> list[str]:
    """Split at commas outside parentheses: ``Bash(git add, commit:*)`` is one entry."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def read_json(path: Path, problems: list[Problem]) -> Any:
    """The JSON document at ``path``, its syntax errors as located problems (``None``
    then). Values carry their marks when the YAML loader reads the file too (JSON is
    YAML), so a later check can point inside it."""
    try:
        text = read_text_file(path, error=ConfigError, what="JSON file")
    except OodaError as error:
        problems.append(Problem(ERROR_RULE, error.message, path, error.line, error.column))
        return None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(
            Problem(ERROR_RULE, f"invalid JSON: {exc.msg}", path, exc.lineno, exc.colno)
        )
        return None
    from pytest_ooda.yamlload import load_yaml_text

    try:
        return load_yaml_text(text, file=str(path), error=ConfigError)
    except ConfigError:
        # Valid JSON the YAML reader refuses (rare escapes): the values, unlocated.
        return json.loads(text)


def _walk(root: Path, parts: Sequence[str] | None = None) -> Iterator[str]:
    """Every regular file under ``root`` (only under its entries ``parts``, when given),
    relative, skipping VCS and tool directories and symbolic links out of it."""
    if parts is not None:
        for part in parts:
            top = root / part
            if top.is_file() and not top.is_symlink():
                yield part
            elif top.is_dir() and not top.is_symlink():
                yield from (f"{part}/{rel}" for rel in _walk(top))
        return
    harness = any((root / name).is_file() for name in _HARNESS_CONFIGS)
    for directory, dirs, files in os.walk(root):
        at_root = harness and directory == str(root)
        dirs[:] = sorted(
            name
            for name in dirs
            if name not in _SKIPPED_DIRS and not (at_root and name in _HARNESS_TOP)
        )
        base = Path(directory)
        for name in sorted(files):
            if at_root and name in _HARNESS_TOP:
                continue
            path = base / name
            if path.is_symlink() or not path.is_file():
                continue
            yield path.relative_to(root).as_posix()


def material_root(path: Path) -> tuple[Path, MaterialKind] | None:
    """The material directory ``path`` names and its kind: a plugin (it has
    ``.claude-plugin/plugin.json``), a ``.claude`` directory, or a project whose
    ``.claude/`` holds it; ``None`` when it is none of these."""
    if (path / PLUGIN_MANIFEST).is_file():
        return path, "plugin"
    if path.name == ".claude" and path.is_dir():
        return path, "project"
    if (path / ".claude").is_dir():
        return path / ".claude", "project"
    if any((path / part).is_dir() for part in ("commands", "skills", "agents")):
        return path, "project"
    return None


def load_material(path: Path) -> Material:
    """Read the plugin or ``.claude/`` directory at ``path`` (see :func:`material_root`).

    A file that does not parse is still an item, carrying its problem; a directory that
    is no material at all is a ``ConfigError``."""
    found = material_root(path)
    if found is None:
        raise ConfigError(
            f"{path} is neither a Claude Code plugin (no .claude-plugin/plugin.json) nor a "
            ".claude directory (no commands/, skills/ or agents/ in it)",
            file=str(path),
            hint="name the plugin's directory, or the project's .claude directory",
        )
    return read_material(*found)


def read_material(
    root: Path, kind: MaterialKind, *, parts: Sequence[str] | None = None
) -> Material:
    """The material directory ``root`` of ``kind`` read (:func:`load_material` once it
    knows them); ``parts``: only those entries of it (``commands``, ``skills``,
    ``agents``, ``settings.json`` …: a user's ``~/.claude`` holds much else)."""
    problems: list[Problem] = []
    name = root.parent.name if root.name == ".claude" else root.name
    if kind == "plugin":
        manifest = read_json(root / PLUGIN_MANIFEST, problems)
        declared = manifest.get("name") if isinstance(manifest, dict) else None
        if isinstance(declared, str) and declared.strip():
            name = declared.strip()
    files = tuple(_walk(root, parts))
    items = [_item(root, kind, name, rel) for rel in files]
    hook_files = []
    for rel in (
        ("hooks/hooks.json",) if kind == "plugin" else ("settings.json", "settings.local.json")
    ):
        if rel in files:
            data = read_json(root / rel, problems)
            if data is not None:
                hook_files.append((root / rel, data))
    return Material(
        root=root,
        kind=kind,
        name=name,
        items=tuple(item for item in items if item is not None),
        files=files,
        problems=tuple(problems),
        hook_files=tuple(hook_files),
    )


def _kind_of(rel: str) -> ItemKind | None:
    parts = rel.split("/")
    if not rel.endswith(".md"):
        return None
    if parts[0] == "commands" and len(parts) >= 2:
        return "command"
    if parts[0] == "agents" and len(parts) >= 2:
        return "subagent"
    if parts[0] == "skills" and len(parts) == 3 and parts[2] == "SKILL.md":
        return "skill"
    return None


def _item(root: Path, kind: MaterialKind, plugin: str, rel: str) -> Item | None:
    item_kind = _kind_of(rel)
    if item_kind is None:
        return None
    file = root / rel
    try:
        text = read_text_file(file, error=ConfigError, max_bytes=MAX_FILE_BYTES, what="file")
    except OodaError as error:
        problem = Problem(ERROR_RULE, error.message, file, error.line, error.column)
        front = FrontMatter(split_front_matter("", file).values, "", 1, False, (problem,))
    else:
        front = split_front_matter(text, file)
    prefix = f"{plugin}:" if kind == "plugin" else ""
    parts = rel.split("/")
    if item_kind == "command":
        name = ":".join([*parts[1:-1], parts[-1][: -len(".md")]])
    elif item_kind == "skill":
        name = parts[1]
    else:
        declared = front.values.get("name")
        name = declared.strip() if isinstance(declared, str) and declared.strip() else ""
        if not name:
            name = parts[-1][: -len(".md")]
    return Item(item_kind, prefix + name, file, front, root)
