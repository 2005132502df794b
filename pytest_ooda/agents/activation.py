"""What an agent reports as having fired in an iteration, besides its tool calls: a skill
it loaded, a subagent it started, the slash command its prompt ran, an MCP server's tool
it called, a hook that ran. Each agent derives them from its own output (Claude Code's:
``claude_code/fired.py``); scenarios check them (``expect.activation``), recordings and
results keep them as ``kind:name`` labels."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ooda._types import ACTIVATION_KINDS, ActivationKind

__all__ = ["Activation"]


@dataclass(frozen=True)
class Activation:
    """One thing that fired: its kind and its name as the agent names it
    (``myplug:greet``, ``PreToolUse:Write``)."""

    kind: ActivationKind
    name: str

    @property
    def label(self) -> str:
        """``skill:greet``: how recordings and results write it."""
        return f"{self.kind}:{self.name}"

    @classmethod
    def parse(cls, label: str) -> Activation | None:
        """The activation ``label`` writes, ``None`` when it is not one."""
        kind, _, name = label.partition(":")
        if kind not in ACTIVATION_KINDS or not name:
            return None
        return cls(kind, name)

    def is_named(self, name: str) -> bool:
        """Whether ``name`` (as a scenario writes it) names this activation: the same
        name, the name without its plugin's prefix (``greet`` for ``myplug:greet``), a
        hook's event without its matcher (``PreToolUse`` for ``PreToolUse:Write``), an
        MCP tool without its ``mcp__`` head or by its server alone."""
        own = self.name
        if name == own:
            return True
        if self.kind == "hook":
            return own.partition(":")[0] == name
        if self.kind == "mcp_tool":
            bare = own.removeprefix("mcp__")
            return name in (bare, bare.partition("__")[0]) or own.startswith(f"mcp__{name}__")
        return own.endswith(":" + name)
