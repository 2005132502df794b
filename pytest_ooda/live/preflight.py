"""Checks made before an agent is started, so a run that cannot work costs no
iteration and is never scored as the prompt's failure:

- Claude Code refuses ``--dangerously-skip-permissions`` (and ``--permission-mode
  bypassPermissions``) as root unless ``IS_SANDBOX=1`` — exactly ``1``: ``true`` or
  ``yes`` do not count (2.1.197) — and would exit 1 on every iteration, three times per
  run. Inside a sandbox what counts is the uid there (bwrap and docker give the agent an
  ordinary one) and the environment its ``env:`` gives it.
- An agent the sandbox cannot see (installed under a hidden home, a name not on the
  ``PATH`` inside, missing from the image) would fail to start every time: the sandbox
  says why, naming the path (:meth:`~pytest_ooda.sandbox.Sandbox.agent_problem`).
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.sandbox import SandboxSpec

__all__ = ["agent_refusal", "root_refusal", "sandbox_env"]

#: The one value of ``IS_SANDBOX`` Claude Code accepts.
IS_SANDBOX = "1"


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

    In a sandbox (``sandbox``: its kind) ``env`` is the environment inside it and
    ``euid`` the uid the agent has there."""
    if not argv:
        return None
    if PurePath(argv[0]).name != "claude" or not _skips_permissions(list(argv)):
        return None
    if (os.geteuid() if euid is None else euid) != 0:
        return None
    seen = (os.environ if env is None else env).get("IS_SANDBOX")
    if seen == IS_SANDBOX:
        return None
    refused = (
        "Claude Code refuses --dangerously-skip-permissions (or --permission-mode "
        "bypassPermissions) as root and would exit 1 on every iteration"
    )
    if seen is not None:
        where = f"the {sandbox} sandbox's env: gives" if sandbox else "the environment has"
        return (
            f"{refused}: {where} IS_SANDBOX={seen!r}, but Claude Code accepts only "
            f"IS_SANDBOX={IS_SANDBOX} (not true, yes or anything else): set it to {IS_SANDBOX}"
        )
    if sandbox is not None:
        return (
            f"{refused}: the {sandbox} sandbox is the isolation, so say so to it with "
            "env: [IS_SANDBOX=1] in its sandbox: settings"
        )
    return (
        f"{refused}: set IS_SANDBOX=1 in the environment when this runs in a container or "
        "CI sandbox, run it in a sandbox (`ooda help sandbox`), or as another user"
    )


def agent_refusal(
    argv: Sequence[str] | None,
    spec: SandboxSpec | None,
    *,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Why the agent ``argv`` cannot start where its runs will start it (here, or inside
    ``spec``'s sandbox), or ``None``. A sandbox that cannot be prepared is not this
    check's to report: starting it says so, as an infrastructure error."""
    from pytest_ooda.errors import SandboxError
    from pytest_ooda.sandbox import open_sandbox

    outside = os.environ if env is None else env
    if spec is None or spec.kind == "none" or not argv:
        return root_refusal(argv, env=outside)
    try:
        sandbox = open_sandbox(spec)
    except SandboxError:
        return None
    inside = sandbox_env(spec.options, outside)
    problem = root_refusal(argv, env=inside, euid=sandbox.inside_uid(), sandbox=spec.kind)
    if problem is not None:
        return problem
    hidden = sandbox.agent_problem(argv, outside)
    if hidden is None:
        return None
    return f"the agent {argv[0]} cannot start inside the {spec.kind} sandbox: {hidden}"
