"""A live run's fingerprint: which agent ran, configured how (docs/evaluating.md).

Taken once the run's workspace is ready and its sandbox started, just before the
agent's first iteration, from where the agent will read it: the sandbox's fresh
``HOME`` (a ``bwrap`` or ``docker`` run sees nothing of the user's own ``~/.claude``),
else the user's. The agent is asked, never named: its version
(:func:`pytest_ooda.agents.agent_version`, once per process and command, inside the
sandbox when there is one) and what it loads (:meth:`pytest_ooda.agents.Agent.configuration`).
The model is the one its API reported, added when the run is over.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.facts import Fingerprint
    from pytest_ooda.live.plan import RunPlan
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec

__all__ = ["allow_list", "take_fingerprint"]


def allow_list(spec: SandboxSpec | None) -> tuple[str, ...]:
    """The environment an agent in ``spec``'s sandbox is given, by name: the variables
    every isolating sandbox passes and its ``env:`` (a ``NAME=value`` entry by its name;
    the value is the sandbox's business); ``("*",)`` with no sandbox, or one that
    isolates nothing."""
    from pytest_ooda.facts import WHOLE_ENVIRONMENT
    from pytest_ooda.sandbox import BASE_ENV, load_kind

    if spec is None or not load_kind(spec.kind).isolates:
        return WHOLE_ENVIRONMENT
    listed = (str(entry).partition("=")[0] for entry in spec.options.get("env", ()))
    return tuple(sorted({*BASE_ENV, *listed}))


def take_fingerprint(
    plan: RunPlan, workdir: Path, sandbox: SandboxRun | None
) -> Fingerprint | None:
    """The fingerprint of ``plan``'s agent about to run in ``workdir`` (inside
    ``sandbox``); ``None`` for an HTTP API (no agent CLI)."""
    from pytest_ooda.agents import agent_for, agent_version
    from pytest_ooda.facts import Fingerprint
    from pytest_ooda.sandbox import allowed_env, load_kind

    argv = plan.settings.ai_cmd
    if not argv:
        return None
    agent = agent_for(argv)
    spec = plan.settings.sandbox
    env: Mapping[str, str] = os.environ
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    if sandbox is not None:
        # What the agent sees there: the allow-list of the environment, a fresh HOME.
        if spec is not None and "env" in load_kind(spec.kind).options:
            env = allowed_env(os.environ, spec.options.get("env", ()))
        home = sandbox.home or home

    def launch(words: Sequence[str]) -> tuple[Sequence[str], Mapping[str, str] | None]:
        assert sandbox is not None
        started = sandbox.launch(words, None, workdir)
        return started.argv, started.env

    where = tuple(sorted(sandbox.identity.items(), key=str)) if sandbox is not None else None
    version = agent_version(
        agent, argv, where=where, launch=launch if sandbox is not None else None
    )
    configuration = agent.configuration(argv, home=home, workspace=workdir, env=env)
    return Fingerprint(
        agent=agent.name,
        version=version,
        settings=configuration.settings,
        env=allow_list(spec),
        loaded=configuration.loaded,
    )
