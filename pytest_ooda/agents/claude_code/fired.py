"""What fired in one ``claude -p`` invocation, read from what it reports (2.1.197,
``--output-format stream-json --verbose``; docs/claude-code.md):

- a **skill**: a ``Skill`` tool call (``{"skill": "greet", "args": …}``), answered
  ``Launching skill: greet``;
- a **subagent**: an ``Agent`` tool call (``Task`` in older releases) with its
  ``subagent_type`` (``general-purpose`` when it names none); its own calls follow with
  ``parent_tool_use_id`` set;
- an **MCP tool**: a call of a tool named ``mcp__server__tool``;
- a **hook**: a ``system`` event ``hook_response`` naming it ``Event:matcher``
  (``PreToolUse:Write``, ``SessionStart:startup``) — every hook with
  ``--include-hook-events``, the ``SessionStart`` ones without;
- the **slash command** the prompt ran: the stream does not echo the prompt, so it is
  read from the prompt itself — ``/name args`` ran unless the result says ``Unknown
  command: /name`` (then nothing was sent to the model at all); a skill invoked by its
  name (``/greet Bob``) fired as that skill too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pytest_ooda.agents.activation import Activation

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

__all__ = ["SUBAGENT_TOOLS", "call_activations", "hook_activation", "prompt_activations"]

#: The tool that starts a subagent (``Task`` is its older name).
SUBAGENT_TOOLS = ("Agent", "Task")
#: What ``claude -p`` prints for a slash command it does not know.
UNKNOWN_COMMAND = "Unknown command: /"


class ToolCallLike(Protocol):
    """What a tool call tells here: its name and decoded arguments."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> Any: ...


def call_activations(calls: Sequence[ToolCallLike]) -> list[Activation]:
    """The skills, subagents and MCP tools the calls fired, in call order."""
    found: list[Activation] = []
    for call in calls:
        arguments: Any = call.arguments if isinstance(call.arguments, dict) else {}
        if call.name == "Skill":
            name = arguments.get("skill")
            if isinstance(name, str) and name.strip():
                found.append(Activation("skill", name.strip().lstrip("/")))
        elif call.name in SUBAGENT_TOOLS:
            kind = arguments.get("subagent_type")
            name = kind.strip() if isinstance(kind, str) and kind.strip() else "general-purpose"
            found.append(Activation("subagent", name))
        elif call.name.startswith("mcp__"):
            found.append(Activation("mcp_tool", call.name))
    return found


def hook_activation(event: dict[str, Any]) -> Activation | None:
    """The hook a ``system``/``hook_response`` event says ran, else ``None``."""
    if event.get("type") != "system" or event.get("subtype") != "hook_response":
        return None
    name = event.get("hook_name") or event.get("hook_event")
    return Activation("hook", name) if isinstance(name, str) and name else None


def prompt_activations(
    prompt: str, result_text: str, skills: Collection[str] = ()
) -> list[Activation]:
    """The slash command ``prompt`` ran (and the skill, when ``skills`` — the init
    event's — lists its name), unless Claude Code answered that it knows no such
    command."""
    text = prompt.lstrip()
    if not text.startswith("/") or text.startswith("//"):
        return []
    name = text[1:].split(None, 1)[0] if text[1:].strip() else ""
    if not name or "/" in name:
        return []  # a path (/usr/bin/x …), not a command
    if result_text.strip().startswith(UNKNOWN_COMMAND + name):
        return []
    found = [Activation("command", name)]
    if name in skills:
        found.append(Activation("skill", name))
    return found


class FiredWatch:
    """What fired in one invocation, read from its stream-json events as they arrive
    (:meth:`event`, each decoded event): the tool calls' skills, subagents and MCP
    tools (from their whole input), the hooks, and the skills the ``init`` event lists
    (a prompt ``/name`` that names one fired it). :meth:`activations` adds the prompt's
    slash command once the result is known."""

    def __init__(self) -> None:
        self.fired: list[Activation] = []
        self.skills: frozenset[str] = frozenset()

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "assistant":
            message = event.get("message")
            blocks = message.get("content") if isinstance(message, dict) else None
            for block in blocks if isinstance(blocks, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    call = _Called(str(block.get("name", "?")), block.get("input"))
                    self.fired.extend(call_activations([call]))
        elif kind == "system":
            skills = event.get("skills")
            if event.get("subtype") == "init" and isinstance(skills, list):
                self.skills = frozenset(name for name in skills if isinstance(name, str))
            hook = hook_activation(event)
            if hook is not None:
                self.fired.append(hook)

    def activations(self, prompt: str, result_text: str) -> tuple[Activation, ...]:
        return (*prompt_activations(prompt, result_text, self.skills), *self.fired)


class _Called:
    """A tool call as it arrives: its name and whole input."""

    def __init__(self, name: str, arguments: Any) -> None:
        self.name = name
        self.arguments = arguments
