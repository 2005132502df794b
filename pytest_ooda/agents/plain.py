"""Agent CLIs pytest-ooda knows only by their built-in alias: each prints plain text, so
nothing of cost, tokens or tool calls is read; what they add is the command line that
runs them unattended, the flags that say so, and the variables they authenticate with
where documented. None of them is installed or run by the test suite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.agents.base import Agent
from pytest_ooda.agents.command import CommandAgent

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["CopilotAgent", "CursorAgent", "KiroAgent"]


class _PlainAgent(CommandAgent):
    """A plain-text CLI claimed by its program name."""

    def claims(self, argv: Sequence[str]) -> bool:
        return super(CommandAgent, self).claims(argv)

    #: A named CLI answers ``--version`` (the catch-all ``command`` is never asked).
    version = Agent.version


class KiroAgent(_PlainAgent):
    name = "kiro-cli"
    display = "Kiro CLI"
    programs = ("kiro-cli",)
    alias = "kiro-cli"
    default_command = "kiro-cli chat --no-interactive --trust-all-tools"
    init_lines = ""


class CopilotAgent(_PlainAgent):
    name = "copilot"
    display = "GitHub Copilot CLI"
    programs = ("copilot",)
    alias = "copilot"
    default_command = "copilot --yolo"
    init_lines = ""


class CursorAgent(_PlainAgent):
    name = "cursor-agent"
    display = "Cursor Agent"
    programs = ("cursor-agent",)
    alias = "cursor-agent"
    default_command = "cursor-agent -p -f --output-format text"
    unattended_flags = (*CommandAgent.unattended_flags, "-f")
    init_lines = ""
