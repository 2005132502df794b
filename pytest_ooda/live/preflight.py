"""Checks made before an agent is started, so a run that cannot work costs no
iteration and is never scored as the prompt's failure. The agent says when it refuses
to start (:meth:`pytest_ooda.agents.Agent.refusal`, e.g. a CLI that will not skip its
permission prompts as root without a variable saying it is sandboxed); the sandbox
says what it cannot show (:meth:`~pytest_ooda.sandbox.Sandbox.agent_problem`: an
agent installed under a hidden home, a name not on the ``PATH`` inside, missing from
the image). Inside a sandbox what counts is the uid there (bwrap and docker give the
agent an ordinary one) and the environment its ``env:`` gives it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pytest_ooda.agents import agent_for

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.sandbox import SandboxSpec

__all__ = ["agent_refusal", "missing_credentials", "root_refusal", "sandbox_env"]


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


def root_refusal(
    argv: Sequence[str] | None,
    *,
    env: Mapping[str, str] | None = None,
    euid: int | None = None,
    sandbox: str | None = None,
) -> str | None:
    """Why the agent ``argv`` would refuse to start here, by its own rules, or ``None``.

    In a sandbox (``sandbox``: its kind) ``env`` is the environment inside it and
    ``euid`` the uid the agent has there."""
    if not argv:
        return None
    return agent_for(argv).refusal(
        argv,
        env=os.environ if env is None else env,
        euid=os.geteuid() if euid is None else euid,
        sandbox=sandbox,
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


def missing_credentials(
    argv: Sequence[str] | None,
    spec: SandboxSpec | None,
    *,
    replaying: bool = False,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Why the agent ``argv`` could not authenticate inside ``spec``'s sandbox — none of
    the credentials it reads (its variables, a login file in ``home_files:``) reaches it
    — naming them, or ``None``. Only an isolating sandbox is judged: with none, the agent
    may hold a login of its own (a keychain, its home). An agent replay needs none: the
    proxy answers, and the agent is given a placeholder key."""
    from pytest_ooda.sandbox import OptionError, load_kind

    if not argv or replaying or spec is None or spec.kind == "none":
        return None
    try:
        if not load_kind(spec.kind).isolates:
            return None
    except OptionError:
        return None
    outside = os.environ if env is None else env
    home = outside.get("HOME") or os.path.expanduser("~")
    listed = spec.options.get("home_files") or ()
    files = [
        os.path.relpath(str(entry), home) if os.path.isabs(str(entry)) else str(entry)
        for entry in (listed if isinstance(listed, list | tuple) else ())
    ]
    problem = agent_for(argv).missing_credentials(sandbox_env(spec.options, outside), files)
    if problem is None:
        return None
    return (
        f"{problem}: the {spec.kind} sandbox passes the agent none of them (its env: and "
        "home_files: options), so it could not log in on any iteration"
    )
