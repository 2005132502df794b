"""``ooda init``: a starting point in an empty or existing repository — a commented
``ooda-config.yml`` with one procedure built from built-in fragments, a hand-written
scenario that replays green at once, a scenario to record live, and the next commands.

It never overwrites: when any file it would write exists, it writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    import argparse

#: ``--agent`` choices, the first the default.
AGENTS = ("claude", "codex", "command")
PROCEDURE = "hello"
REPLAY_SCENARIO = "hand-written"
LIVE_SCENARIO = "first-live"

_AGENT_LINES = {
    "claude": """\
  # Claude Code, read as stream-json (cost, tokens, tool calls). As root it runs
  # unattended only with IS_SANDBOX=1 in the environment (or inside a sandbox).
  ai_cmd_alias: claude
""",
    "codex": """\
  # Codex: `-` reads the prompt on stdin; workspace-write lets it edit files.
  ai_cmd: "codex exec --json --sandbox workspace-write -"
  ai_output: codex-json
""",
    "command": """\
  # Your agent CLI: it reads the prompt on stdin and prints its answer. Uncomment and
  # edit, or pass it at run time: pytest -m live --ooda-ai-cmd='my-agent --print'
  # ai_cmd: "my-agent --print"
""",
}

CONFIG = """\
# pytest-ooda configuration (written by `ooda init`). Reference:
# `ooda help configuration` (every setting), `ooda help pytest-plugin` (options, items).
# `ooda show {procedure}` prints the exact prompt; `ooda lint` checks this file.

loop:
  default_max_iterations: 3   # each iteration starts the agent afresh on the composed prompt
{agent}
procedures:
  {procedure}:
    display: "Say hello"
    summary: "Writes HELLO.md greeting the repository's readers"
    # Each phase lists fragments: built-in ones (`builtin:fragments/...`, see
    # `ooda help procedures`), your own Markdown files (paths relative to this file),
    # or inline `content`. A fragment with `parameters` is a Go text/template.
    observe:
      - path: builtin:fragments/observe/read_agents_md.md
    orient:
      - content: "Decide what a newcomer to this repository should read first."
    decide:
      - path: builtin:fragments/decide/check_if_blocked.md   # when to signal FAILURE
    act:
      - content: |
          Write HELLO.md: one short paragraph greeting the reader and naming that first
          thing to read. The procedure succeeds once HELLO.md exists.
      - path: builtin:fragments/act/emit_success.md          # when to signal SUCCESS
"""

REPLAY = """\
# A hand-written transcript: `pytest` serves these outputs through the real loop
# runner (the agent never starts) and checks `expect`. It passes as written.
procedure: {procedure}
expect:
  status: success
  iterations: 1
  files:
    HELLO.md: {{contains: Hello}}
iterations:
  - output: |
      Read AGENTS.md; wrote HELLO.md.
      <promise>SUCCESS</promise>
    files:
      HELLO.md: |
        Hello! Start with the README.
"""

LIVE = """\
# Recorded from a real agent run: `pytest -m live -k {name} --ooda-record-mode=once`
# runs the agent in a throw-away copy of the repository and writes its transcript below
# `iterations:` (redacted); afterwards plain `pytest` replays it.
procedure: {procedure}
expect:
  status: success
  files:
    HELLO.md: exists
iterations: []
"""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write a starting ooda-config.yml and two scenarios",
        description="Write a commented ooda-config.yml with one procedure built from "
        "built-in fragments, a hand-written scenario that replays green at once and a "
        "scenario to record with the real agent, then print the next commands. Nothing "
        "is overwritten: when a file exists, nothing is written.",
    )
    parser.add_argument(
        "--agent",
        choices=AGENTS,
        default=AGENTS[0],
        help="the agent set-up written into the config: claude (Claude Code, the default), "
        "codex (Codex CLI) or command (your own CLI, left for you to fill in)",
    )
    parser.add_argument(
        "--dir",
        default=".",
        metavar="DIR",
        help="the repository to write into (default: the current directory)",
    )
    parser.set_defaults(func=command)


def planned_files(agent: str) -> dict[str, str]:
    """What ``ooda init --agent AGENT`` writes, by path relative to the repository."""
    scenarios = f"scenarios/{PROCEDURE}"
    return {
        "ooda-config.yml": CONFIG.format(agent=_AGENT_LINES[agent], procedure=PROCEDURE),
        f"{scenarios}/{REPLAY_SCENARIO}.yml": REPLAY.format(procedure=PROCEDURE),
        f"{scenarios}/{LIVE_SCENARIO}.yml": LIVE.format(procedure=PROCEDURE, name=LIVE_SCENARIO),
    }


def next_commands(agent: str) -> list[tuple[str, str]]:
    """The three commands to run next, each with what it does."""
    live = f"pytest -m live -k {LIVE_SCENARIO} --ooda-record-mode=once"
    if agent == "command":
        live += " --ooda-ai-cmd='my-agent --print'"
    return [
        (f"ooda show {PROCEDURE}", "the exact prompt the agent receives"),
        (
            f'pytest --snapshot-update -k "not {LIVE_SCENARIO}"',
            "accept the prompt snapshots and replay the hand-written scenario",
        ),
        (live, "run the agent for real and record its transcript (then `pytest` replays it)"),
    ]


def command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        raise UsageError(f"--dir {args.dir}: not a directory")
    files = planned_files(args.agent)
    # A rooda-config.yml is read when there is no ooda-config.yml: a new one would hide it.
    existing = [name for name in [*files, "rooda-config.yml"] if os.path.lexists(root / name)]
    if existing:
        raise UsageError(
            "ooda init writes nothing over existing files: "
            + ", ".join(existing)
            + " (remove or rename them, or run it in another directory with --dir)"
        )
    written: list[Path] = []
    try:
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            # "x": created here or not at all, even if another process races us.
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(text)
            written.append(path)
    except FileExistsError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise UsageError(f"ooda init writes nothing over existing files: {exc.filename}") from None
    for name in files:
        print(f"wrote {name}")
    print("\nnext:")
    for text, why in next_commands(args.agent):
        print(f"  {text}\n      # {why}")
    return EXIT_OK
