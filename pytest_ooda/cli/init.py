"""``ooda init``: a starting point in an empty or existing repository — a commented
``ooda-config.yml`` with one procedure built from built-in fragments, its prompt
snapshots, a hand-written scenario that replays green at once, a scenario to record
live (skipped by plain ``pytest`` until it is recorded), the next commands and the
steps of a CI job — so plain ``pytest`` is green from the first minute.

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

PROCEDURE = "hello"
REPLAY_SCENARIO = "hand-written"
LIVE_SCENARIO = "first-live"


def agent_choices() -> tuple[str, ...]:
    """``--agent`` choices: every agent with ``ooda init`` lines, the default first."""
    from pytest_ooda.agents import DEFAULT_AGENT, all_agents

    offered = [agent.name for agent in all_agents() if agent.init_lines]
    return (DEFAULT_AGENT, *(name for name in offered if name != DEFAULT_AGENT))


def _agent_lines(name: str) -> str:
    """The ``loop:`` lines of agent ``name`` (its own, from its module)."""
    from pytest_ooda.agents import load_agent

    return load_agent(name).init_lines


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
    from pytest_ooda.agents import DEFAULT_AGENT

    parser.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        metavar="AGENT",
        help=f"the agent set-up written into the config (default: {DEFAULT_AGENT}): an agent "
        "with ooda init lines (`ooda help agents`), or command (your own CLI, left for you "
        "to fill in)",
    )
    from pytest_ooda.agents import MATERIAL_SECTIONS

    for section in MATERIAL_SECTIONS:
        parser.add_argument(
            f"--{section}-plugin",
            dest=f"material_{section}",
            metavar="DIR",
            help=f"set up the testing of a {section} plugin or .{section} directory instead: "
            "a procedure and a scenario per command and skill, every prompt snapshot",
        )
    parser.add_argument(
        "--dir",
        default=".",
        metavar="DIR",
        help="the repository to write into (default: the current directory)",
    )
    parser.set_defaults(func=command)


#: Where the procedure's prompt snapshots go (the plugin's layout for ooda-config.yml).
SNAPSHOTS = f"__snapshots__/ooda-config/{PROCEDURE}"


def planned_files(agent: str) -> dict[str, str]:
    """What ``ooda init --agent AGENT`` writes, by path relative to the repository
    (the prompt snapshots, written from the config once it is there, are
    :func:`snapshot_files`)."""
    scenarios = f"scenarios/{PROCEDURE}"
    return {
        "ooda-config.yml": CONFIG.format(agent=_agent_lines(agent), procedure=PROCEDURE),
        f"{scenarios}/{REPLAY_SCENARIO}.yml": REPLAY.format(procedure=PROCEDURE),
        f"{scenarios}/{LIVE_SCENARIO}.yml": LIVE.format(procedure=PROCEDURE, name=LIVE_SCENARIO),
    }


def snapshot_files(config_file: Path) -> dict[str, str]:
    """The prompt snapshots of the generated procedure, as ``pytest --snapshot-update``
    would write them (each phase, then the assembled prompt of iteration 1), so plain
    ``pytest`` is green straight after ``ooda init``. Read as the plugin reads the file:
    over the built-ins, without the environment or a global config."""
    from pytest_ooda._types import PHASES
    from pytest_ooda.compose import assemble_prompt, compose_phase
    from pytest_ooda.config import load_config, resolve_run_settings

    config = load_config(config_file, cwd=config_file.parent, env={}, global_config=False)
    procedure = config.procedure(PROCEDURE)
    files: dict[str, str] = {}
    for phase in PHASES:
        text = compose_phase(procedure.phases()[phase])
        files[f"{SNAPSHOTS}/{phase}.md"] = text + "\n" if text else ""
    limit = resolve_run_settings(config, PROCEDURE, require_ai=False, agent=False).max_iterations
    files[f"{SNAPSHOTS}/assembled.md"] = assemble_prompt(
        procedure, iteration=1, max_iterations=limit
    )
    return files


def next_commands(agent: str) -> list[tuple[str, str]]:
    """The three commands to run next, each with what it does."""
    from pytest_ooda.agents import load_agent

    live = f"pytest -m live -k {LIVE_SCENARIO} --ooda-record-mode=once"
    live += load_agent(agent).init_run_options
    return [
        (f"ooda show {PROCEDURE}", "the exact prompt the agent receives"),
        (
            "pytest",
            "green already: the prompt snapshots match, the hand-written scenario "
            f"replays, {LIVE_SCENARIO} is skipped until it is recorded",
        ),
        (live, "run the agent for real and record its transcript (then `pytest` replays it)"),
    ]


#: The CI job's steps (GitHub Actions): plain pytest, which needs no agent, no network
#: and no API key. The last line is the command CI runs.
CI_STEPS = (
    "- uses: actions/setup-python@v5",
    "- run: pip install 'pytest-ooda[xdist]'",
    "- run: pytest",
)


def command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        raise UsageError(f"--dir {args.dir}: not a directory")
    from pytest_ooda.agents import MATERIAL_SECTIONS

    for section in MATERIAL_SECTIONS:
        directory = getattr(args, f"material_{section}", None)
        if directory is not None:
            from pytest_ooda.cli.init_material import init_material

            return init_material(section, directory, root)
    choices = agent_choices()
    if args.agent not in choices:
        from pytest_ooda._util import did_you_mean

        raise UsageError(
            f"--agent {args.agent}: not an agent with ooda init lines",
            hint=did_you_mean(args.agent, choices, label="agents"),
        )
    files = planned_files(args.agent)
    snapshots = [f"{SNAPSHOTS}/{part}.md" for part in ("observe", "orient", "decide", "act")]
    snapshots.append(f"{SNAPSHOTS}/assembled.md")
    # A rooda-config.yml is read when there is no ooda-config.yml: a new one would hide it.
    existing = [
        name for name in [*files, *snapshots, "rooda-config.yml"] if os.path.lexists(root / name)
    ]
    if existing:
        raise UsageError(
            "ooda init writes nothing over existing files: "
            + ", ".join(existing)
            + " (remove or rename them, or run it in another directory with --dir)"
        )
    written: list[Path] = []
    try:
        _write(root, files, written)
        snapshot_texts = snapshot_files(root / "ooda-config.yml")
        _write(root, snapshot_texts, written)
    except FileExistsError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise UsageError(f"ooda init writes nothing over existing files: {exc.filename}") from None
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    for name in files:
        print(f"wrote {name}")
    print(f"wrote {len(snapshot_texts)} prompt snapshots in {SNAPSHOTS}/")
    print("\nnext:")
    for text, why in next_commands(args.agent):
        print(f"  {text}\n      # {why}")
    print("\nin CI (a GitHub Actions job's steps; plain pytest needs no agent, network or key):")
    for step in CI_STEPS:
        print(f"    {step}")
    return EXIT_OK


def _write(root: Path, files: dict[str, str], written: list[Path]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        # "x": created here or not at all, even if another process races us.
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
        written.append(path)
