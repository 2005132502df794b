"""Hooks: what a plugin's ``hooks/hooks.json`` or a project's ``settings.json`` runs,
and whether Claude Code could run it.

The shape is ``{"hooks": {EVENT: [{"matcher": "Write|Edit", "hooks": [{"type":
"command", "command": "…", "timeout": 60}]}]}}``. Claude Code runs a ``command`` hook as
a process with the event as JSON on its stdin and ``$CLAUDE_PROJECT_DIR`` (a plugin's
also ``${CLAUDE_PLUGIN_ROOT}``) in its environment; exit 2 blocks what the event is
about, and in ``-p`` mode a settings file that fails its validation is ignored without a
word. So every mistake is found here: the shape, an unknown event or type, and a script
the command names that is missing or not executable.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.claude_code.frontmatter import ERROR_RULE, WARNING_RULE, Problem
from pytest_ooda.yamlnodes import YamlMapping

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents.claude_code.material import Material

__all__ = ["EVENTS", "Hook", "read_hooks"]

#: The hook events Claude Code 2.x documents; another name is a warning (a newer
#: release may know it), not an error.
EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
    "TeammateIdle",
    "TaskCompleted",
)
#: Events whose entries take a ``matcher`` (a tool name pattern).
MATCHED = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest")
HOOK_TYPES = ("command", "prompt", "agent")
_ROOT_VARS = re.compile(r"\$\{?(CLAUDE_PLUGIN_ROOT|CLAUDE_PROJECT_DIR)\}?")


@dataclass(frozen=True)
class Hook:
    """One hook: its event, matcher, type and command, and where it is written."""

    event: str
    matcher: str | None
    type: str
    command: str | None
    file: Path
    line: int | None = None
    column: int | None = None

    @property
    def name(self) -> str:
        """``PreToolUse:Write`` as Claude Code names it in its events (the matcher
        after the event), or the event alone."""
        return f"{self.event}:{self.matcher}" if self.matcher else self.event


_Where = tuple[int | None, int | None]
_NOWHERE: _Where = (None, None)


def _at(value: Any, fallback: _Where = _NOWHERE) -> _Where:
    """Where a located value starts, else ``fallback``."""
    mark = getattr(value, "mark", None)
    return (mark.line, mark.column) if mark is not None else fallback


def read_hooks(material: Material) -> tuple[tuple[Hook, ...], tuple[Problem, ...]]:
    """Every hook of ``material`` and every mistake in its hook settings."""
    hooks: list[Hook] = []
    problems: list[Problem] = []
    for file, data in material.hook_files:
        _read_file(material, file, data, hooks, problems)
    return tuple(hooks), tuple(problems)


def _problem(
    problems: list[Problem],
    rule: str,
    message: str,
    file: Path,
    at: _Where,
    hint: str | None = None,
) -> None:
    problems.append(Problem(rule, message, file, at[0], at[1], hint))


def _read_file(
    material: Material, file: Path, data: Any, hooks: list[Hook], problems: list[Problem]
) -> None:
    if not isinstance(data, dict):
        _problem(problems, ERROR_RULE, "expected a JSON object", file, _at(data, (1, 1)))
        return
    table = data.get("hooks")
    if table is None:
        return
    at = _value_at(data, "hooks")
    if not isinstance(table, dict):
        _problem(problems, ERROR_RULE, "hooks: expected an object of events", file, at)
        return
    for event, entries in table.items():
        event_at = _key_at(table, event)
        if event not in EVENTS:
            from pytest_ooda._util import did_you_mean

            _problem(
                problems,
                WARNING_RULE,
                f"hooks: {event!r} is not a hook event Claude Code documents; its hooks "
                "never run unless a newer release knows it",
                file,
                event_at,
                did_you_mean(str(event), EVENTS) or None,
            )
        if not isinstance(entries, list):
            _problem(problems, ERROR_RULE, f"hooks.{event}: expected a list", file, event_at)
            continue
        for index, entry in enumerate(entries):
            _entry(material, file, str(event), index, entry, event_at, hooks, problems)


def _entry(
    material: Material,
    file: Path,
    event: str,
    index: int,
    entry: Any,
    parent: _Where,
    hooks: list[Hook],
    problems: list[Problem],
) -> None:
    where = f"hooks.{event}[{index}]"
    at = _at(entry, parent)
    if not isinstance(entry, dict):
        _problem(problems, ERROR_RULE, f"{where}: expected an object", file, at)
        return
    matcher = entry.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        _problem(problems, ERROR_RULE, f"{where}.matcher: expected a string", file, at)
        matcher = None
    if isinstance(matcher, str) and matcher:
        try:
            re.compile(matcher)
        except re.error as exc:
            _problem(problems, ERROR_RULE, f"{where}.matcher: not a pattern: {exc}", file, at)
    inner = entry.get("hooks")
    if not isinstance(inner, list) or not inner:
        _problem(
            problems,
            ERROR_RULE,
            f'{where}: expected \'hooks\': a list of {{"type": "command", "command": …}}',
            file,
            at,
        )
        return
    for number, hook in enumerate(inner):
        _hook(material, file, event, matcher, f"{where}.hooks[{number}]", hook, at, hooks, problems)


def _hook(
    material: Material,
    file: Path,
    event: str,
    matcher: str | None,
    where: str,
    hook: Any,
    parent: _Where,
    hooks: list[Hook],
    problems: list[Problem],
) -> None:
    at = _at(hook, parent)
    if not isinstance(hook, dict):
        _problem(problems, ERROR_RULE, f"{where}: expected an object", file, at)
        return
    kind = hook.get("type")
    if kind not in HOOK_TYPES:
        _problem(
            problems,
            ERROR_RULE,
            f"{where}.type: expected one of {', '.join(HOOK_TYPES)}, got {kind!r}",
            file,
            at,
        )
        return
    timeout = hook.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        _problem(problems, ERROR_RULE, f"{where}.timeout: expected seconds > 0", file, at)
    command = hook.get("command") if kind == "command" else None
    if kind == "command":
        if not isinstance(command, str) or not command.strip():
            _problem(problems, ERROR_RULE, f"{where}.command: expected a command line", file, at)
            return
        _check_command(material, file, where, command, _value_at(hook, "command"), problems)
    elif not isinstance(hook.get("prompt"), str):
        _problem(problems, ERROR_RULE, f"{where}.prompt: expected the prompt text", file, at)
    hooks.append(Hook(event, matcher or None, str(kind), command, file, at[0], at[1]))


def _check_command(
    material: Material,
    file: Path,
    where: str,
    command: str,
    at: _Where,
    problems: list[Problem],
) -> None:
    """The files a hook command names inside the material exist, and the one it runs
    directly is executable."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        _problem(problems, ERROR_RULE, f"{where}.command: cannot be split: {exc}", file, at)
        return
    for index, word in enumerate(words):
        if not _ROOT_VARS.search(word):
            continue
        path = _resolve(material, word)
        if path is None:
            continue
        shown = word
        if not path.exists():
            _problem(
                problems,
                ERROR_RULE,
                f"{where}.command: {shown} does not exist ({path})",
                file,
                at,
                "the hook fails each time its event fires",
            )
        elif index == 0 and not os.access(path, os.X_OK):
            _problem(
                problems,
                ERROR_RULE,
                f"{where}.command: {shown} is not executable",
                file,
                at,
                f"chmod +x {path}, or run it through its interpreter (bash {word})",
            )


def _resolve(material: Material, word: str) -> Path | None:
    """The file a word naming ``${CLAUDE_PLUGIN_ROOT}/…`` or ``$CLAUDE_PROJECT_DIR/…``
    stands for inside the material (``None``: it is elsewhere)."""
    found = _ROOT_VARS.search(word)
    assert found is not None
    rest = word[found.end() :].lstrip("/")
    if found.group(1) == "CLAUDE_PLUGIN_ROOT":
        return material.root / rest
    if material.kind == "project" and rest.startswith(".claude/"):
        return material.root / rest[len(".claude/") :]
    return None


def _key_at(table: Any, key: Any) -> _Where:
    if isinstance(table, YamlMapping):
        mark = table.key_marks.get(key)
        if mark is not None:
            return mark.line, mark.column
    return None, None


def _value_at(table: Any, key: Any) -> _Where:
    if isinstance(table, YamlMapping):
        mark = table.value_marks.get(key)
        if mark is not None:
            return mark.line, mark.column
    return None, None


def matched_by(hook: Hook, tool: str) -> bool:
    """Whether ``hook`` (a tool event's) fires for ``tool``: no matcher, ``*``, or a
    pattern matching the whole name."""
    if not hook.matcher or hook.matcher == "*":
        return True
    return re.fullmatch(hook.matcher, tool) is not None
