"""An agent's version as its CLI reports it, asked once per process.

Asking costs a process start (and, inside a sandbox, the sandbox's start), so a run's
fingerprint asks each agent once per process for each command and each place it runs —
a sandbox may hold another installation than the host.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda.agents.base import Agent

__all__ = ["agent_version"]

#: Versions asked in this process: (agent, the command that prints it, the program it
#: resolves to and its file's time and size, where it runs) -> the first line it printed.
_VERSIONS: dict[tuple[Any, ...], str | None] = {}


def agent_version(
    agent: Agent,
    argv: Sequence[str],
    *,
    where: Any = None,
    launch: Callable[[Sequence[str]], tuple[Sequence[str], Mapping[str, str] | None]] | None = None,
) -> str | None:
    """The agent's version as its CLI reports it (:meth:`Agent.version`), asked once per
    process for each command and each place it runs (``where``: the sandbox's identity;
    ``launch`` turns the version command into what starts it there)."""
    if not argv:
        return None
    words = agent.version_argv(argv)
    program = shutil.which(argv[0]) or argv[0]
    try:
        # An upgrade in place (another file at the same path) is asked again.
        found = os.stat(program)
        stamp: tuple[int, int] | None = (found.st_mtime_ns, found.st_size)
    except OSError:
        stamp = None
    key = (agent.name, tuple(words), program, stamp, where)
    if key not in _VERSIONS:
        _VERSIONS[key] = agent.version(argv, launch=launch)
    return _VERSIONS[key]
