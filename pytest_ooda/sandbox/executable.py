"""What of the host an agent's executable needs to be seen in a sandbox that hides the
home directories, ``/run`` and the temporary directories (``bwrap``).

An agent is often installed where the sandbox hides: ``~/.local/bin/claude`` (a link
into the native installer's ``~/.local/share/claude/versions/``), a script in a virtual
environment under the home (its interpreter a link in the same environment), a global
npm package under ``~/.npm-global`` started by ``#!/usr/bin/env node`` with ``node``
from ``~/.nvm``. :func:`agent_needs` follows the command the way ``execve`` will: the
name through ``PATH``, every symbolic link on the way (each recreated as a link), the
file it ends at, and its ``#!`` interpreter (the same way again). What lies in a hidden
place is shown read-only: the virtual environment a path is in (the directory with
``pyvenv.cfg``), the npm package it belongs to (``node_modules/<package>``), the entry
of a ``versions`` directory (a native installer's), or else the file alone. Nothing
else of a hidden directory is shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["AgentNeeds", "NotVisible", "agent_needs"]

#: Symbolic links followed at most (the kernel's own limit).
_MAX_LINKS = 40
#: Interpreters followed at most (a script run by a script run by …).
_MAX_DEPTH = 4


class NotVisible(Exception):
    """The agent cannot be made visible in the sandbox; the message names the path."""


@dataclass
class AgentNeeds:
    """``binds``: host paths to show read-only at the same place; ``links``: symbolic
    links to recreate (link path, its target as written); ``executables``: the paths
    that must be executable inside (the command as ``PATH`` finds it, its
    interpreters)."""

    binds: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    executables: list[str] = field(default_factory=list)

    def covered(self, path: str) -> bool:
        return any(
            path == bound or path.startswith(bound.rstrip("/") + "/") for bound in self.binds
        )


def _lookup(name: str, search_path: str) -> str | None:
    for directory in search_path.split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


def _walk(path: str) -> tuple[list[tuple[str, str]], str]:
    """Every symbolic link met resolving the absolute ``path`` (at its real place, with
    its target as written) and the real path it ends at."""
    links: list[tuple[str, str]] = []
    queue = path.split("/")
    current = "/"
    while queue:
        part = queue.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            if len(links) >= _MAX_LINKS:
                raise NotVisible(f"{path}: too many levels of symbolic links")
            target = os.readlink(candidate)
            links.append((candidate, target))
            if target.startswith("/"):
                current = "/"
            queue = target.split("/") + queue
        else:
            current = candidate
    return links, current


def _install_root(path: str) -> str | None:
    """The directory ``path`` is part of when it is a virtual environment, an npm
    package or an entry of an installer's ``versions`` directory."""
    parts = path.split("/")
    for end in range(len(parts) - 1, 1, -1):
        if os.path.isfile("/".join(parts[:end]) + "/pyvenv.cfg"):
            return "/".join(parts[:end])
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == "node_modules":
            width = 3 if parts[index + 1].startswith("@") and index + 2 < len(parts) else 2
            return "/".join(parts[: index + width])
        if parts[index] == "versions":
            return "/".join(parts[: index + 2])
    return None


def _interpreter(path: str, search_path: str) -> str | None:
    """The interpreter a ``#!`` line names (``/usr/bin/env NAME`` looked up on the
    path), ``None`` for anything else."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        if not names:
            return None
        found = _lookup(names[0], search_path)
        if found is None:
            raise NotVisible(f"{path}: its interpreter {names[0]} is not on PATH")
        return found
    return words[0]


def agent_needs(
    command: str, *, search_path: str, hidden: Callable[[str], bool], roots: tuple[str, ...]
) -> AgentNeeds:
    """What ``command`` (an argv[0]) needs to be visible where ``hidden`` says a path is
    hidden; ``roots`` are the hidden directories themselves, never shown whole.
    :class:`NotVisible` names the path when it cannot be made visible. A relative path
    with a ``/`` is the workspace's (always visible)."""
    needs = AgentNeeds()
    if "/" in command and not command.startswith("/"):
        return needs
    found = command if command.startswith("/") else _lookup(command, search_path)
    if found is None:
        raise NotVisible(f"{command} is not on PATH ({search_path or 'empty'})")
    _add(found, needs, search_path=search_path, hidden=hidden, roots=roots, depth=0)
    return needs


def _add(
    path: str,
    needs: AgentNeeds,
    *,
    search_path: str,
    hidden: Callable[[str], bool],
    roots: tuple[str, ...],
    depth: int,
) -> None:
    needs.executables.append(path)
    links, real = _walk(path)
    if not os.path.isfile(real):
        raise NotVisible(f"{path}: {real} is not a file")
    if not os.access(real, os.X_OK):
        raise NotVisible(f"{path}: {real} is not executable")
    for place in [*(link for link, _ in links), real]:
        if not hidden(place) or needs.covered(place):
            continue
        root = _install_root(place)
        if root is not None and hidden(root):
            _bind(root, needs, roots)
        elif place == real:
            _bind(real, needs, roots)
        else:
            needs.links.append((place, dict(links)[place]))
    interpreter = _interpreter(real, search_path)
    if interpreter is not None:
        if depth >= _MAX_DEPTH:
            raise NotVisible(f"{path}: interpreters nested more than {_MAX_DEPTH} deep")
        if not os.path.isabs(interpreter):
            raise NotVisible(f"{real}: its #! interpreter {interpreter} is not an absolute path")
        _add(
            interpreter, needs, search_path=search_path, hidden=hidden, roots=roots, depth=depth + 1
        )


def _bind(path: str, needs: AgentNeeds, roots: tuple[str, ...]) -> None:
    for root in roots:
        if path == root or root.startswith(path.rstrip("/") + "/"):
            raise NotVisible(
                f"{path}: showing it would show the whole of {root}, which the sandbox hides"
            )
    needs.binds = [bound for bound in needs.binds if not bound.startswith(path + "/")]
    needs.binds.append(path)
