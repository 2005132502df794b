"""Checks made before an agent is started, so a run that cannot work costs no
iteration: Claude Code refuses ``--dangerously-skip-permissions`` (and
``--permission-mode bypassPermissions``) as root unless ``IS_SANDBOX=1`` says it runs in
a sandbox — it would exit 1 on every iteration, three times per run."""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["root_refusal", "sandbox_env"]


def sandbox_env(options: Mapping[str, object], outside: Mapping[str, str]) -> dict[str, str]:
    """The variables a sandbox's ``env:`` option sets inside it: ``NAME=value`` as given,
    ``NAME`` with the caller's value."""
    inside: dict[str, str] = {}
    entries = options.get("env") or ()
    for entry in entries if isinstance(entries, list | tuple) else ():
        name, equals, value = str(entry).partition("=")
        if equals:
            inside[name] = value
        elif name in outside:
            inside[name] = outside[name]
    return inside


def _skips_permissions(argv: Sequence[str]) -> bool:
    if "--dangerously-skip-permissions" in argv:
        return True
    for index, word in enumerate(argv):
        if word == "--permission-mode" and argv[index + 1 : index + 2] == ["bypassPermissions"]:
            return True
        if word == "--permission-mode=bypassPermissions":
            return True
    return False


def root_refusal(
    argv: Sequence[str] | None,
    *,
    env: Mapping[str, str] | None = None,
    euid: int | None = None,
    sandbox: str | None = None,
) -> str | None:
    """Why Claude Code would refuse to start with ``argv`` here, or ``None``.

    In a sandbox (``sandbox``: its kind) ``env`` is the environment inside it, where the
    agent runs as the same user (bwrap) or as the image's root (docker)."""
    if not argv:
        return None
    if PurePath(argv[0]).name != "claude" or not _skips_permissions(list(argv)):
        return None
    if (os.geteuid() if euid is None else euid) != 0:
        return None
    if (os.environ if env is None else env).get("IS_SANDBOX"):
        return None
    if sandbox is not None:
        return (
            "Claude Code refuses --dangerously-skip-permissions (or --permission-mode "
            f"bypassPermissions) as root and would exit 1 on every iteration: the {sandbox} "
            "sandbox is the isolation, so say so to it with env: [IS_SANDBOX=1] in its "
            "sandbox: settings"
        )
    return (
        "Claude Code refuses --dangerously-skip-permissions (or --permission-mode "
        "bypassPermissions) as root and would exit 1 on every iteration: set IS_SANDBOX=1 "
        "in the environment when this runs in a container or CI sandbox, run it in a "
        "sandbox (`ooda help sandbox`), or as another user"
    )
