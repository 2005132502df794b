"""The ``config`` checks of Claude Code material: each command, skill and subagent's
front matter (known keys, their types, tool names, a subagent's required name and
description), the files a prompt references, the hooks, and a plugin's manifests.

Claude Code reads all of this leniently and says nothing: an unknown key is ignored, a
subagent without a ``name`` is dropped, a tool it does not know is never offered, a
broken ``settings.json`` is skipped in ``-p`` mode. Each such case is a located
:class:`~.frontmatter.Problem` here — an error (``OODA005``) where Claude Code drops or
misreads the thing, a warning (``OODA006``) where it reads it otherwise than the author
most likely meant.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import did_you_mean, type_name
from pytest_ooda.agents.claude_code.frontmatter import ERROR_RULE, WARNING_RULE, Problem
from pytest_ooda.agents.claude_code.hooks import read_hooks
from pytest_ooda.agents.claude_code.material import (
    MARKETPLACE,
    PLUGIN_MANIFEST,
    read_json,
    tool_list,
)
from pytest_ooda.agents.claude_code.tools import check_tool
from pytest_ooda.yamlnodes import Mark, YamlMapping

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents.claude_code.material import Item, Material

__all__ = ["KNOWN_KEYS", "check_item", "check_material", "references"]

_SKILL_KEYS = (
    "name",
    "description",
    "when_to_use",
    "allowed-tools",
    "argument-hint",
    "arguments",
    "model",
    "effort",
    "disable-model-invocation",
    "user-invocable",
    "license",
    "metadata",
    "version",
    "context",
    "agent",
    "hooks",
    "compatibility",
    "shell",
    "paths",
)
#: The front-matter keys Claude Code reads, per kind (commands and skills share theirs:
#: a command is a skill kept in one file).
KNOWN_KEYS: dict[str, tuple[str, ...]] = {
    "command": _SKILL_KEYS,
    "skill": _SKILL_KEYS,
    "subagent": (
        "name",
        "description",
        "tools",
        "disallowedTools",
        "model",
        "permissionMode",
        "skills",
        "hooks",
        "color",
        "mcpServers",
        "maxTurns",
        "memory",
        "background",
        "effort",
        "isolation",
        "initialPrompt",
    ),
}
_TEXT_KEYS = frozenset(
    {
        "name",
        "description",
        "when_to_use",
        "argument-hint",
        "model",
        "effort",
        "license",
        "version",
        "context",
        "agent",
        "color",
        "permissionMode",
        "initialPrompt",
        "compatibility",
        "shell",
    }
)
_FLAG_KEYS = frozenset({"disable-model-invocation", "user-invocable", "background"})
_TOOL_KEYS = frozenset({"allowed-tools", "tools", "disallowedTools"})
_MODELS = frozenset({"sonnet", "opus", "haiku", "fable", "inherit", "default", "opusplan"})
#: The Agent Skills format: a name of lowercase letters, digits and hyphens.
_SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
_DIR_REF = re.compile(r"\$\{(CLAUDE_SKILL_DIR|CLAUDE_PLUGIN_ROOT)\}/([\w./-]+)")
_AT_FILE = re.compile(r"(?<![\w`])@((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*\.\w+)")


def _add(
    out: list[Problem],
    rule: str,
    item: Item,
    message: str,
    mark: Mark | None,
    hint: str | None = None,
) -> None:
    out.append(
        Problem(
            rule,
            f"{item.shown}: {message}",
            item.file,
            mark.line if mark is not None else None,
            mark.column if mark is not None else None,
            hint,
        )
    )


def check_item(item: Item, material: Material) -> tuple[Problem, ...]:
    """Every mistake of one command, skill or subagent: its front matter, its tool
    names, the files its text references."""
    out: list[Problem] = list(item.front.problems)
    values = item.front.values
    known = KNOWN_KEYS[item.kind]
    for key in values:
        if key not in known:
            _add(
                out,
                WARNING_RULE,
                item,
                f"unknown front-matter key {key!r}: Claude Code ignores it",
                values.key_marks.get(key, values.mark),
                did_you_mean(str(key), known) or None,
            )
            continue
        _check_value(out, item, str(key), values[key], values.value_marks.get(key, values.mark))
    if item.kind == "subagent":
        for key in ("name", "description"):
            value = values.get(key)
            if not isinstance(value, str) or not value.strip():
                _add(
                    out,
                    ERROR_RULE,
                    item,
                    f"a subagent needs a {key}: Claude Code drops this one without a word",
                    values.mark if item.front.present else Mark(1, 1),
                    "give it a front matter with name: and description:",
                )
    elif item.kind == "skill":
        _check_skill_name(out, item)
    described = values.get("description")
    if item.kind != "subagent" and (
        described is None
        or described == ""
        or (isinstance(described, str) and not described.strip())
    ):
        _add(
            out,
            WARNING_RULE,
            item,
            f"no description: Claude Code lists it by its first line, {item.description!r}",
            values.mark if item.front.present else Mark(1, 1),
            "say what it does and when to use it in description:",
        )
    out.extend(_missing_references(item, material))
    return tuple(out)


def _check_value(out: list[Problem], item: Item, key: str, value: Any, mark: Mark) -> None:
    if key in _TEXT_KEYS and not isinstance(value, str):
        _add(out, ERROR_RULE, item, f"{key}: expected text, got {type_name(value)}", mark)
        return
    if key in _FLAG_KEYS and not isinstance(value, bool):
        _add(out, ERROR_RULE, item, f"{key}: expected true or false, got {value!r}", mark)
        return
    if key == "maxTurns" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        _add(out, ERROR_RULE, item, f"{key}: expected a number of turns >= 1", mark)
        return
    if key == "metadata" and not isinstance(value, dict):
        _add(out, ERROR_RULE, item, f"metadata: expected a mapping, got {type_name(value)}", mark)
        return
    if key == "model" and isinstance(value, str):
        model = value.strip()
        if model not in _MODELS and not model.startswith("claude-"):
            _add(
                out,
                WARNING_RULE,
                item,
                f"model: {model!r} is neither an alias ({', '.join(sorted(_MODELS))}) nor a "
                "model id (claude-…)",
                mark,
            )
    if key in _TOOL_KEYS:
        _check_tools(out, item, key, value, mark)


def _check_tools(out: list[Problem], item: Item, key: str, value: Any, mark: Mark) -> None:
    if not isinstance(value, str | list) or (
        isinstance(value, list) and not all(isinstance(entry, str) for entry in value)
    ):
        _add(
            out,
            ERROR_RULE,
            item,
            f"{key}: expected tool names, as 'Read, Grep' or a list, got {type_name(value)}",
            mark,
        )
        return
    for entry in tool_list(value) or ():
        name, problem, hint = check_tool(entry)
        if problem is None:
            continue
        legacy = name is not None and hint is not None and hint.startswith("use ")
        _add(
            out,
            WARNING_RULE if legacy else ERROR_RULE,
            item,
            f"{key}: {problem}",
            mark,
            hint,
        )


def _check_skill_name(out: list[Problem], item: Item) -> None:
    values = item.front.values
    folder = item.directory.name
    declared = values.get("name")
    mark = values.value_marks.get("name", values.mark)
    if isinstance(declared, str) and declared.strip() and declared.strip() != folder:
        _add(
            out,
            WARNING_RULE,
            item,
            f"name: {declared.strip()!r} differs from its directory {folder!r}: Claude Code "
            f"lists and invokes it as {folder!r}",
            mark,
            f"rename the directory, or set name: {folder}",
        )
    if not _SKILL_NAME.match(folder) or len(folder) > 64:
        _add(
            out,
            WARNING_RULE,
            item,
            f"{folder!r} is not a skill name of the Agent Skills format (lowercase letters, "
            "digits and hyphens, at most 64 characters)",
            mark,
        )


def references(item: Item) -> list[tuple[str, int, int, str]]:
    """The files ``item``'s body refers to: ``(kind, line, column, path)`` for relative
    Markdown links, ``${CLAUDE_SKILL_DIR}/…`` and ``${CLAUDE_PLUGIN_ROOT}/…`` paths and
    ``@file`` mentions (kinds ``link``, ``dir``, ``at``)."""
    found: list[tuple[str, int, int, str]] = []
    body = item.front.body
    line0 = item.front.body_line
    fenced = False
    for offset, line in enumerate(body.split("\n")):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _LINK.finditer(line):
            target = match.group(1).split("#", 1)[0]
            if (
                target
                and not re.match(r"[a-z][a-z0-9+.-]*:", target)
                and not target.startswith("/")
            ):
                found.append(("link", line0 + offset, match.start(1) + 1, target))
        for match in _DIR_REF.finditer(line):
            found.append(
                ("dir:" + match.group(1), line0 + offset, match.start() + 1, match.group(2))
            )
        for match in _AT_FILE.finditer(line):
            found.append(("at", line0 + offset, match.start() + 1, match.group(1)))
    return found


def _missing_references(item: Item, material: Material) -> list[Problem]:
    out: list[Problem] = []
    for kind, line, column, target in references(item):
        if kind == "at":
            if material.kind != "project":
                continue  # a plugin's @file names the user's project: unknown here
            base = material.root.parent
            path = base / target
            if not path.exists():
                _add(
                    out,
                    WARNING_RULE,
                    item,
                    f"@{target} is not in the project ({path}): Claude Code sends the "
                    "text as it is, without the file",
                    Mark(line, column),
                    "a scenario's workspace must hold it",
                )
            continue
        if kind == "dir:CLAUDE_PLUGIN_ROOT":
            if material.kind != "plugin":
                continue
            path = material.root / target
        else:
            path = item.directory / target
        if not path.exists():
            _add(
                out,
                ERROR_RULE,
                item,
                f"references {target}, which does not exist ({path})",
                Mark(line, column),
            )
    return out


def check_material(material: Material) -> tuple[Problem, ...]:
    """Every mistake of ``material``: the directory's own files (manifests, hook
    settings) then each item's, in file order."""
    out: list[Problem] = list(material.problems)
    _hooks, hook_problems = read_hooks(material)
    out.extend(hook_problems)
    if material.kind == "plugin":
        out.extend(_check_manifest(material))
    if (material.root / MARKETPLACE).is_file():
        out.extend(_check_marketplace(material))
    for item in material.items:
        out.extend(check_item(item, material))
    return tuple(out)


def _located(value: Any, key: str, file: Path) -> tuple[int | None, int | None]:
    if isinstance(value, YamlMapping):
        mark = value.value_marks.get(key, value.mark)
        return mark.line, mark.column
    return 1, 1


def _check_manifest(material: Material) -> list[Problem]:
    file = material.root / PLUGIN_MANIFEST
    out: list[Problem] = []
    data = read_json(file, [])
    if data is None:
        return out  # its syntax error is among the material's problems already
    if not isinstance(data, dict):
        return [Problem(ERROR_RULE, "plugin.json: expected a JSON object", file, 1, 1)]
    name = data.get("name")
    if not isinstance(name, str) or not _SKILL_NAME.match(name.strip()):
        line, column = _located(data, "name", file)
        out.append(
            Problem(
                ERROR_RULE,
                f"plugin.json: name: expected a kebab-case plugin name, got {name!r}",
                file,
                line,
                column,
                "every command, skill and subagent of the plugin is named name:…",
            )
        )
    for key in ("commands", "agents", "skills", "hooks", "outputStyles"):
        value = data.get(key)
        paths = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for entry in paths:
            if isinstance(entry, str) and not (material.root / entry).exists():
                line, column = _located(data, key, file)
                out.append(
                    Problem(
                        ERROR_RULE,
                        f"plugin.json: {key}: {entry} does not exist",
                        file,
                        line,
                        column,
                    )
                )
    return out


def _check_marketplace(material: Material) -> list[Problem]:
    file = material.root / MARKETPLACE
    out: list[Problem] = []
    data = read_json(file, out)
    if data is None:
        return out
    if not isinstance(data, dict):
        return [Problem(ERROR_RULE, "marketplace.json: expected a JSON object", file, 1, 1)]
    for key in ("name", "owner"):
        if key not in data:
            out.append(Problem(ERROR_RULE, f"marketplace.json: missing {key!r}", file, 1, 1))
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        line, column = _located(data, "plugins", file)
        out.append(
            Problem(ERROR_RULE, "marketplace.json: plugins: expected a list", file, line, column)
        )
        return out
    for index, entry in enumerate(plugins):
        mark = getattr(entry, "mark", Mark(1, 1))
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            out.append(
                Problem(
                    ERROR_RULE,
                    f"marketplace.json: plugins[{index}]: expected an object with a name",
                    file,
                    mark.line,
                    mark.column,
                )
            )
            continue
        source = entry.get("source")
        if isinstance(source, str) and source.startswith("."):
            if not (material.root / source).exists():
                out.append(
                    Problem(
                        ERROR_RULE,
                        f"marketplace.json: plugins[{index}].source: {source} does not exist",
                        file,
                        mark.line,
                        mark.column,
                    )
                )
        elif not isinstance(source, str | dict):
            out.append(
                Problem(
                    ERROR_RULE,
                    f"marketplace.json: plugins[{index}]: expected a source (a path or an object)",
                    file,
                    mark.line,
                    mark.column,
                )
            )
    return out
