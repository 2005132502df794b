"""How one run's agent reaches the API proxy, wherever it runs.

With no sandbox, and in a sandbox sharing the host's network (``network: host``), the
agent's base URL is the proxy's loopback port. A sandbox with a network of its own
reaches it another way:

- ``bwrap`` with ``network: none`` (a network namespace per process, a seccomp filter
  that refuses Unix sockets): the agent is started under the relay
  (:mod:`.relay`), which listens on the sandbox's loopback and gets each connection
  from the proxy's broker as a file descriptor over the one socket it inherits;
- ``docker`` with ``network: none`` or ``bridge`` (one network namespace for the whole
  run, the container's): the proxy listens inside it too (:mod:`.netns`), on the same
  port, so ``127.0.0.1:PORT`` inside is the proxy. That takes root on the host.

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

from pytest_ooda.apireplay.proxy import PROVIDERS
from pytest_ooda.errors import SandboxError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import ApiMode
    from pytest_ooda.apireplay.proxy import ApiProxy
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec

__all__ = ["Access", "reach", "sandbox_for_api"]

#: The key variables a replayed agent gets a placeholder for, when unset.
KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
#: Credentials that stand in for an API key (Claude Code's subscription login).
OTHER_CREDENTIALS = ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
PLACEHOLDER_KEY = "ooda-replay"


@dataclass(frozen=True)
class Access:
    """What the agent's start needs: its command line (under the relay, where there is
    one), the variables to set, and the descriptors it inherits."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    pass_fds: tuple[int, ...] = ()


def _network(spec: SandboxSpec | None) -> str | None:
    """The spec's network setting (``None``: no sandbox of the kinds we know)."""
    if spec is None or spec.kind not in ("bwrap", "docker"):
        return None
    default = "host" if spec.kind == "bwrap" else "bridge"
    return str(spec.options.get("network", default))


def _relayed(spec: SandboxSpec | None) -> bool:
    return spec is not None and spec.kind == "bwrap" and _network(spec) == "none"


def _placeholders(mode: ApiMode, env: Mapping[str, str]) -> dict[str, str]:
    if mode != "replay":
        return {}
    out: dict[str, str] = {}
    for provider, name in KEYS.items():
        others = OTHER_CREDENTIALS if provider == "anthropic" else ()
        if not env.get(name) and not any(env.get(other) for other in others):
            out[name] = PLACEHOLDER_KEY
    return out


def sandbox_for_api(
    spec: SandboxSpec | None, mode: ApiMode, env: Mapping[str, str] | None = None
) -> SandboxSpec | None:
    """``spec`` letting through what the proxy needs: the base-URL variables (and the
    placeholder keys of a replay); under the relay, Python's installation and the
    relay's directory shown read-only. The names only: the values vary per run, the
    spec (and so its prepared sandbox) does not."""
    if spec is None or spec.kind not in ("bwrap", "docker"):
        return spec
    source = os.environ if env is None else env
    names = [variable for variable, _ in PROVIDERS.values()]
    names += sorted(_placeholders(mode, source))
    options = dict(spec.options)
    listed = tuple(options.get("env", ()))
    options["env"] = (*listed, *(name for name in names if name not in listed))
    if _relayed(spec):
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
    network = _network(spec)
    if run is None or network in (None, "host"):
        return Access(tuple(argv), values)
    if _relayed(spec):
        theirs = proxy.broker()
        names = [f"{variable}=/{p}{suffix}" for p, (variable, suffix) in PROVIDERS.items()]
        relay = str(Path(__file__).resolve().parent / "relay.py")
        wrapped = (sys.executable, "-I", "-S", relay, f"fd:{theirs.fileno()}", *names, "--")
        return Access((*wrapped, *argv), values, (theirs.fileno(),))
    pid = run.network_pid()
    if pid is None:
        raise SandboxError(
            f"sandbox {spec.kind if spec else 'none'}: network: {network} has no network "
            "namespace the API proxy can listen in",
            hint="use network: host (or none with bwrap) for agent record and replay",
        )
    from pytest_ooda.apireplay.netns import listen_in_netns

    assert proxy.port is not None
    try:
        listener = listen_in_netns(pid, port=proxy.port)
    except OSError as exc:
        raise SandboxError(
            f"sandbox docker: network: {network}: the API proxy cannot listen inside the "
            f"container's network ({exc.strerror or exc})",
            hint="entering a container's network namespace takes root with a local "
            "engine; or use network: host, or bwrap with network: none",
        ) from None
    proxy.listen_on(listener)
    return Access(tuple(argv), values)
