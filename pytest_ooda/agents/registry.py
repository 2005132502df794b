"""Which agents exist — the built-in ones and those of the ``pytest_ooda.agents``
entry-point group — and the questions the rest of pytest-ooda asks of them: which agent
a command line runs (:func:`agent_for`), an output format by name
(:func:`output_format`), the built-in aliases, the model APIs the replay proxy routes.

Built-in agents are imported when first asked for; the entry points are read only when
a question is not answered by a built-in one (a plugin's agent, format or model API)."""

from __future__ import annotations

import functools
import importlib
import sys
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import did_you_mean
from pytest_ooda.agents.base import Agent
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.agents.base import ModelApi, OutputFormat

__all__ = [
    "AGENT_ENTRY_POINT_GROUP",
    "DEFAULT_AGENT",
    "agent_for",
    "agent_names",
    "all_agents",
    "builtin_aliases",
    "infer_format",
    "load_agent",
    "model_apis",
    "output_format",
    "output_formats",
    "shell_tools",
    "tool_formats",
]

#: The entry-point group out-of-tree agents register under (name = the agent's name).
AGENT_ENTRY_POINT_GROUP = "pytest_ooda.agents"
#: The agent ``ooda init`` and ``ooda sandbox image`` take when none is named.
DEFAULT_AGENT = "claude"
#: Built-in agents, in the order they are asked (the catch-all ``command`` last).
_BUILTIN = {
    "claude": "pytest_ooda.agents.claude_code.agent:ClaudeAgent",
    "codex": "pytest_ooda.agents.codex_cli.agent:CodexAgent",
    "gemini": "pytest_ooda.agents.gemini_cli.agent:GeminiAgent",
    "qwen": "pytest_ooda.agents.qwen_code.agent:QwenAgent",
    "kiro-cli": "pytest_ooda.agents.plain:KiroAgent",
    "copilot": "pytest_ooda.agents.plain:CopilotAgent",
    "cursor-agent": "pytest_ooda.agents.plain:CursorAgent",
    "command": "pytest_ooda.agents.command:CommandAgent",
}
_CATCH_ALL = "command"
_loaded: dict[str, Agent] = {}


def _plugins() -> Mapping[str, Any]:
    """The group's entry points by name. Reading them walks every installed
    distribution's metadata (about 4 ms in a virtual environment of 50) and a live run
    asks the registry four times for an agent no built-in claims, so they are read once
    for each import path (``sys.path``): a path added since (a test's distribution) is
    read; a distribution installed into a path already read is seen by the next process,
    as pytest sees its own plugins."""
    return _plugins_on(tuple(sys.path))


@functools.cache
def _plugins_on(path: tuple[str, ...]) -> Mapping[str, Any]:
    # importlib.metadata is imported where it is used: it costs more than the built-in
    # agents together. ``path`` is the key: entry_points reads sys.path itself.
    from importlib.metadata import entry_points

    return MappingProxyType(
        {
            ep.name: ep
            for ep in entry_points(group=AGENT_ENTRY_POINT_GROUP)
            if ep.name not in _BUILTIN
        }
    )


def agent_names(*, plugins: bool = True) -> tuple[str, ...]:
    """Every agent that can be named: the built-in ones first, then installed plugins."""
    return (*_BUILTIN, *(sorted(_plugins()) if plugins else ()))


def load_agent(name: str) -> Agent:
    """The agent called ``name``; a ``ConfigError`` naming the known ones when there is
    none, or when a plugin's entry point does not load an :class:`Agent` subclass."""
    found = _loaded.get(name)
    if found is not None:
        return found
    cls: Any
    if name in _BUILTIN:
        module, _, attribute = _BUILTIN[name].partition(":")
        cls = getattr(importlib.import_module(module), attribute)
    else:
        plugin = _plugins().get(name)
        if plugin is None:
            raise ConfigError(
                f"unknown agent {name!r}", hint=did_you_mean(name, agent_names(), label="agents")
            )
        try:
            cls = plugin.load()
        except Exception as exc:  # a broken plugin is the user's to fix, not a crash
            raise ConfigError(
                f"agent {name!r} (entry point {plugin.value}) cannot be loaded: {exc}"
            ) from None
        if not (isinstance(cls, type) and issubclass(cls, Agent)):
            raise ConfigError(
                f"agent {name!r} (entry point {plugin.value}) is not a "
                "pytest_ooda.agents.Agent subclass"
            )
    agent: Agent = cls()
    _loaded[name] = agent
    return agent


def _builtin_agents() -> tuple[Agent, ...]:
    return tuple(load_agent(name) for name in _BUILTIN)


def all_agents() -> tuple[Agent, ...]:
    """Every agent: the built-in ones, then the plugins' (their entry points read)."""
    return (*_builtin_agents(), *(load_agent(name) for name in sorted(_plugins())))


def agent_for(argv: Sequence[str] | None) -> Agent:
    """The agent the command line ``argv`` runs: the first built-in agent that claims
    it, else a plugin's, else ``command`` (any plain-text CLI)."""
    words = tuple(argv or ())
    for agent in _builtin_agents():
        if agent.name != _CATCH_ALL and agent.claims(words):
            return agent
    if words:
        for name in sorted(_plugins()):
            agent = load_agent(name)
            if agent.claims(words):
                return agent
    return load_agent(_CATCH_ALL)


def infer_format(argv: Sequence[str]) -> str | None:
    """The output format the command line's own flags ask for (``claude …
    --output-format stream-json`` → ``claude-stream-json``), ``None`` when they say
    nothing."""
    return agent_for(argv).format_of(argv) if argv else None


def _formats(agents: Sequence[Agent]) -> dict[str, OutputFormat]:
    found: dict[str, OutputFormat] = {}
    for agent in agents:
        for fmt in agent.formats:
            found.setdefault(fmt.name, fmt)
    return found


def output_formats(*, plugins: bool = True) -> tuple[str, ...]:
    """The name of every output format (``ai_output`` values): ``text`` first, then the
    built-in agents', then the plugins'."""
    agents = all_agents() if plugins else _builtin_agents()
    names = list(_formats(agents))
    names.remove("text")
    return ("text", *names)


def output_format(name: str) -> OutputFormat:
    """The format called ``name``; a ``ConfigError`` naming the known ones otherwise."""
    found = _formats(_builtin_agents()).get(name)
    if found is None:
        found = _formats(all_agents()).get(name)
    if found is None:
        known = output_formats()
        raise ConfigError(
            f"ai_output: expected one of {', '.join(known)}, got {name!r}",
            hint=did_you_mean(name, known) or None,
        )
    return found


def tool_formats() -> tuple[str, ...]:
    """The output formats that list every tool call (``expect.tools`` needs one)."""
    return tuple(name for name in output_formats() if output_format(name).reports_tools)


def shell_tools() -> frozenset[str]:
    """The names every agent gives its shell tool (whose summary is the command line,
    what ``expect.tools.bash_matches`` searches)."""
    return frozenset(tool for agent in all_agents() for tool in agent.shell_tools)


def builtin_aliases() -> Mapping[str, str]:
    """Alias -> command line of every built-in agent that has one (the config's
    ``ai_cmd_aliases`` defaults)."""
    return MappingProxyType(
        {
            agent.alias: agent.default_command
            for agent in _builtin_agents()
            if agent.alias is not None and agent.default_command is not None
        }
    )


def model_apis() -> Mapping[str, ModelApi]:
    """Every model API an agent calls, by its route name (the built-in agents' first).
    Agents that call the same route (Codex and Qwen Code both call ``openai``) share the
    first one's definition, with every agent's replay rules and run-id fields."""
    found: dict[str, ModelApi] = {}
    for agent in all_agents():
        for api in agent.model_apis:
            first = found.setdefault(api.name, api)
            if first is not api:
                found[api.name] = replace(
                    first,
                    replay_rules=(*first.replay_rules, *api.replay_rules),
                    run_id_fields=tuple(dict.fromkeys((*first.run_id_fields, *api.run_id_fields))),
                )
    return MappingProxyType(found)
