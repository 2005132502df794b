"""The tool names Claude Code knows, for checking ``allowed-tools:`` and ``tools:``.

Measured against Claude Code 2.1.197 in ``-p`` mode (docs/claude-code.md): the tools its
main loop offers, the ones it offers a subagent that names them, and the old names it
maps onto new ones. A name it does not know is kept in the listing and never offered —
the subagent simply lacks the tool — so a misspelt name fails silently there.
"""

from __future__ import annotations

import re

__all__ = ["LEGACY_TOOLS", "TOOLS", "check_tool"]

#: What 2.1.197 offers (the main loop's tools, and Glob and Grep, which it offers a
#: subagent without Bash), plus the two it offers only interactively.
TOOLS: frozenset[str] = frozenset(
    {
        "Agent",
        "Task",  # the Agent tool's older name, still accepted
        "Bash",
        "Edit",
        "Read",
        "Write",
        "Glob",
        "Grep",
        "NotebookEdit",
        "WebFetch",
        "WebSearch",
        "Skill",
        "SendMessage",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskOutput",
        "TaskStop",
        "TaskUpdate",
        "CronCreate",
        "CronDelete",
        "CronList",
        "EnterWorktree",
        "ExitWorktree",
        "ReportFindings",
        "ScheduleWakeup",
        "Workflow",
        "AskUserQuestion",
        "ExitPlanMode",
        "KillShell",  # mapped onto TaskStop
        "KillBash",
        "BashOutput",
    }
)

#: Names older releases had that 2.1.197 no longer offers: a subagent naming them gets
#: nothing for them.
LEGACY_TOOLS: dict[str, str] = {
    "MultiEdit": "Edit",
    "TodoWrite": "TaskCreate / TaskUpdate",
    "TodoRead": "TaskList",
    "LS": "Bash or Glob",
    "NotebookRead": "Read",
    "SlashCommand": "Skill",
}

# `Bash(git status:*)`, `Read(./src/**)`, `WebFetch(domain:example.com)`: a tool with
# a permission pattern; `mcp__server__tool` (or `mcp__server`): an MCP server's tool.
_RULE = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<pattern>.*)\))?\Z", re.S)
_MCP = re.compile(r"mcp__[A-Za-z0-9_-]+(?:__[A-Za-z0-9_*-]+)?\Z")


def check_tool(entry: str) -> tuple[str | None, str | None, str | None]:
    """``(tool name, problem, hint)`` for one entry of a tool list: the bare name it
    allows (``Bash`` for ``Bash(git:*)``), what is wrong with it (``None``: nothing) and
    a hint. A legacy name is a problem whose hint names its successor."""
    text = entry.strip()
    if _MCP.match(text):
        return text, None, None
    found = _RULE.match(text)
    if found is None:
        return None, f"{text!r} is not a tool name or a rule like Bash(git status:*)", None
    name = found.group("name")
    if name in TOOLS:
        return name, None, None
    if name in LEGACY_TOOLS:
        return (
            name,
            f"{name} is not a tool of Claude Code 2.1.197 (an older release had it)",
            f"use {LEGACY_TOOLS[name]}",
        )
    from pytest_ooda._util import did_you_mean

    return name, f"{name} is not a Claude Code tool", did_you_mean(name, TOOLS) or None
