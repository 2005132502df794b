"""``command``: any CLI that reads the prompt on stdin and prints plain text — the agent
of every command line no other agent claims. Its one format, ``text``, is the output as
it is: nothing is known of cost, tokens or tool calls. What its failures mean is read
from generic words only (an HTTP status, "rate limit", "unauthorized") in its last
lines, and only when it exits non-zero."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pytest_ooda.agents.base import Agent, OutputFormat
from pytest_ooda.agents.faults import message_fault

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda.agents.faults import Fault

__all__ = ["TEXT", "CommandAgent"]

#: The plain-text format's name (``ai_output: text``, the default).
TEXT = "text"


class CommandAgent(Agent):
    """Any command line; see the module docstring."""

    name = "command"
    display = "your agent command"
    formats = (OutputFormat(TEXT),)
    #: Flags with which CLIs commonly act without asking anyone: a command no agent
    #: claims that carries one is taken to run unattended.
    unattended_flags: ClassVar[tuple[str, ...]] = (
        "--dangerously-skip-permissions",
        "bypassPermissions",
        "--yolo",
        "--trust-all-tools",
        "--dangerously-bypass-approvals-and-sandbox",
        "--full-auto",
        "--force",
    )
    init_lines = """\
  # Your agent CLI: it reads the prompt on stdin and prints its answer. Uncomment and
  # edit, or pass it at run time: pytest -m live --ooda-ai-cmd='my-agent --print'
  # ai_cmd: "my-agent --print"
"""
    init_run_options = " --ooda-ai-cmd='my-agent --print'"

    def claims(self, argv: Sequence[str]) -> bool:
        return bool(argv)

    def version(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        launch: Callable[[Sequence[str]], tuple[Sequence[str], Mapping[str, str] | None]]
        | None = None,
    ) -> str | None:
        """Never asked: a command no agent claims may not know ``--version`` and would
        do its work instead (in the directory it was started in)."""
        return None

    def fault(self, text: str) -> Fault | None:
        lines = [line for line in text.strip().splitlines()[-3:] if line.strip()]
        for line in reversed(lines):
            found = message_fault(line)
            if found is not None:
                return found
        return None
