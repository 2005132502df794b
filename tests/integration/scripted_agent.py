"""A scripted agent for live-run tests: a tiny real executable (``sh``) whose success
depends on the prompt's text, reporting its cost as Claude Code's ``--output-format
json`` does, so budgets and cost deltas have something to count.

It succeeds (``<promise>SUCCESS</promise>``) when the prompt holds ``KEY-STEP`` and
fails (``<promise>FAILURE</promise>``) otherwise, costs ``$0.01`` a run and reports the
prompt's words as its input tokens. A prompt that also holds ``MAYBE`` fails every other
time it is sent (a flaky scenario; the count is kept in a file beside the agent).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

#: What the prompt must hold for the agent to succeed; and to fail every other time.
KEY = "KEY-STEP"
FLAKY = "MAYBE"
COST = 0.01

AGENT = r"""#!/bin/sh
here=$(dirname "$0")
prompt=$(cat)
case "$prompt" in
  *KEY-STEP*) text='done\n<promise>SUCCESS</promise>' ;;
  *) text='lost\n<promise>FAILURE</promise>' ;;
esac
case "$prompt" in
  *MAYBE*)
    count=$(cat "$here/maybe.count" 2>/dev/null || echo 0)
    echo $((count + 1)) > "$here/maybe.count"
    if [ $((count % 2)) -eq 1 ]; then text='tired\n<promise>FAILURE</promise>'; fi ;;
esac
words=$(printf '%s' "$prompt" | wc -w)
head='{"type":"result","result":"%s","total_cost_usd":0.01,'
tail='"usage":{"input_tokens":%d,"output_tokens":5}}\n'
printf "$head$tail" "$text" "$words"
"""


def write_agent(directory: Path) -> str:
    """Write the agent into ``directory``; returns the ``ai_cmd`` that runs it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "agent.sh"
    path.write_text(AGENT, encoding="utf-8")
    path.chmod(0o755)
    return shlex.quote(str(path))


def loop_lines(directory: Path) -> str:
    """The config's ``loop:`` section that runs the agent and reads its cost."""
    return f"loop:\n  ai_cmd: {write_agent(directory)}\n  ai_output: claude-json\n"
