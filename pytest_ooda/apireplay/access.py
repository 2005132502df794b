"""How one run's agent reaches the API proxy, wherever it runs.

The sandbox says how (:meth:`pytest_ooda.sandbox.Sandbox.proxy_access`); this module
wires each way, knowing no sandbox kind by name:

- ``loopback`` (no sandbox, or one sharing the host's network, such as ``network:
  host``): the agent's base URL is the proxy's loopback port;
- ``relay`` (a network namespace per process, a seccomp filter that refuses Unix
  sockets: ``bwrap`` with ``network: none``): the agent is started under the relay
  (:mod:`.relay`), which listens on the sandbox's loopback and gets each connection
  from the proxy's broker as a file descriptor over the one socket it inherits;
- ``netns`` (one network namespace for the whole run: a container's): the proxy
  listens inside it too (:mod:`.netns`), on the same port, so ``127.0.0.1:PORT``
  inside is the proxy. That takes root on the host.

The variables are the agents' (:class:`pytest_ooda.agents.ModelApi`): each model API's
base-URL variable, and its key for a placeholder.

:func:`sandbox_for_api` adds what the sandbox must let through before it starts (the
base-URL variables; for the relay, Python and the relay's own directory shown
read-only), and :func:`reach` wires a started run. In replay the agent also gets a
placeholder API key when the environment has none: most CLIs refuse to start without
one, and nothing is sent anywhere.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda.agents import agent_for, model_apis
from pytest_ooda.errors import SandboxError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import ApiMode, ProxyAccess
    from pytest_ooda.apireplay.proxy import ApiProxy
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec

__all__ = ["Access", "reach", "sandbox_for_api"]

PLACEHOLDER_KEY = "ooda-replay"


@dataclass(frozen=True)
class Access:
    """What the agent's start needs: its command line (under the relay, where there is
    one), the variables to set, and the descriptors it inherits."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    pass_fds: tuple[int, ...] = ()


def _access(spec: SandboxSpec | None) -> ProxyAccess:
    """How an agent in ``spec``'s sandbox reaches the proxy, as the sandbox says."""
    if spec is None:
        return "loopback"
    from pytest_ooda.sandbox import load_kind

    return load_kind(spec.kind).proxy_access(spec.options)


def _placeholders(mode: ApiMode, env: Mapping[str, str]) -> dict[str, str]:
    if mode != "replay":
        return {}
    out: dict[str, str] = {}
    for api in model_apis().values():
        names = (api.key_env, *api.other_credentials)
        if not any(env.get(name) for name in names):
            out[api.key_env] = PLACEHOLDER_KEY
    return out


def sandbox_for_api(
    spec: SandboxSpec | None, mode: ApiMode, env: Mapping[str, str] | None = None
) -> SandboxSpec | None:
    """``spec`` letting through what the proxy needs: the base-URL variables (and the
    placeholder keys of a replay); under the relay, Python's installation and the
    relay's directory shown read-only. The names only: the values vary per run, the
    spec (and so its prepared sandbox) does not."""
    if spec is None:
        return spec
    from pytest_ooda.sandbox import load_kind

    if "env" not in load_kind(spec.kind).options:
        return spec  # no allow-list: the sandbox passes what it passes
    source = os.environ if env is None else env
    names = [api.base_url_env for api in model_apis().values()]
    names += sorted(_placeholders(mode, source))
    options = dict(spec.options)
    listed = tuple(options.get("env", ()))
    options["env"] = (*listed, *(name for name in names if name not in listed))
    if _access(spec) == "relay":
        shown = tuple(options.get("expose", ()))
        needed = (sys.base_prefix, str(Path(__file__).resolve().parent))
        options["expose"] = (*shown, *(path for path in needed if path not in shown))
    return replace(spec, options=MappingProxyType(options))


def reach(
    proxy: ApiProxy,
    argv: Sequence[str],
    *,
    mode: ApiMode,
    spec: SandboxSpec | None,
    run: SandboxRun | None,
    env: Mapping[str, str] | None = None,
) -> Access:
    """Wire the started ``run`` (``None``: no sandbox) to ``proxy`` for the agent
    ``argv``; a ``SandboxError`` naming what to do when it cannot be reached."""
    source = os.environ if env is None else env
    values = {**proxy.env(), **_placeholders(mode, source)}
    access = _access(spec)
    if access != "relay":
        # An agent that reads no base-URL variable is pointed at the proxy on its
        # command line (the relay's own port is not known here: variables only there).
        urls = {name: proxy.url(name) for name in model_apis()}
        argv = agent_for(argv).pointed_at(argv, urls)
    if run is None or access == "loopback":
        return Access(tuple(argv), values)
    kind = spec.kind if spec is not None else "none"
    network = spec.options.get("network") if spec is not None else None
    if access == "relay":
        theirs = proxy.broker()
        names = [
            f"{api.base_url_env}=/{name}{api.url_suffix}" for name, api in model_apis().items()
        ]
        relay = str(Path(__file__).resolve().parent / "relay.py")
        wrapped = (sys.executable, "-I", "-S", relay, f"fd:{theirs.fileno()}", *names, "--")
        return Access((*wrapped, *argv), values, (theirs.fileno(),))
    pid = run.network_pid()
    if pid is None:
        raise SandboxError(
            f"sandbox {kind}: network: {network} has no network namespace the API proxy "
            "can listen in",
            hint="use network: host (or none with bwrap) for agent record and replay",
        )
    from pytest_ooda.apireplay.netns import listen_in_netns

    assert proxy.port is not None
    try:
        listener = listen_in_netns(pid, port=proxy.port)
    except OSError as exc:
        raise SandboxError(
            f"sandbox {kind}: network: {network}: the API proxy cannot listen inside the "
            f"run's network ({exc.strerror or exc})",
            hint="entering a container's network namespace takes root with a local "
            "engine; or use network: host, or bwrap with network: none",
        ) from None
    proxy.listen_on(listener)
    return Access(tuple(argv), values)
