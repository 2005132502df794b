"""``ooda canary --agent-cmd NEW``: may the agent CLI be upgraded? Every recorded
cassette replayed offline through the pinned agent and through ``NEW``; per scenario
what the new one sends otherwise (system prompt, tools, message roles, headers, the
other fields, by diff) and whether its replay still passes: "safe to unpin", or the
diff and why not (docs/agent-replay.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK, add_config_option, note

if TYPE_CHECKING:
    import argparse

    from pytest_ooda.live import CanaryResult

#: A scenario is not safe to unpin, or its cassette does not replay with the pinned agent.
EXIT_NOT_SAFE = 1


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "canary",
        help="replay the recorded cassettes through another version of the agent CLI, "
        "offline: what it sends otherwise, and whether it is safe to unpin",
        description="Replay each scenario's cassette (agent replay, `ooda help "
        "agent-replay`) through the pinned agent — the one the config names — and "
        "through NEW, offline: the new version's requests are answered with the "
        "recorded ones, the nearest where it asks otherwise. Per scenario: what NEW "
        "sends otherwise (system prompt, tool list, message roles, headers, other "
        "fields, by diff) and whether its replay still meets the scenario's "
        "expectations: safe to unpin, or not and why.",
        epilog="exit codes: 0 every scenario is safe to unpin, 1 one is not (or its "
        "cassette does not replay with the pinned agent either; also a usage error), 2 a "
        "configuration error or no scenario with a cassette.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="SCENARIO",
        help="scenario files or folders (default: every scenario under the config's "
        "scenarios/ folder that has a cassette)",
    )
    parser.add_argument(
        "--agent-cmd",
        required=True,
        metavar="NEW",
        help="the new agent: a command line, or a program alone (it then replaces the "
        "program of the pinned command line, whose flags are kept)",
    )
    parser.add_argument(
        "--pinned-cmd",
        metavar="CMD",
        help="the pinned agent's command line (default: the one the config names)",
    )
    add_config_option(parser)
    parser.set_defaults(func=command)


#: What a scenario file's name ends with.
_SUFFIXES = (".yml", ".yaml")


def _scenario_files(paths: list[str], config_file: Path | None) -> list[Path]:
    """The scenario files named (a folder: every one under it), else those of the
    config's ``scenarios/`` folder (one folder per procedure)."""
    if not paths:
        root = (config_file.parent if config_file is not None else Path.cwd()) / "scenarios"
        paths = [str(root)] if root.is_dir() else []
    files: list[Path] = []
    for given in map(Path, paths):
        if given.is_dir():
            files += sorted(
                path
                for path in given.rglob("*")
                if path.suffix in _SUFFIXES and path.is_file() and not path.name.startswith(".")
            )
        else:
            files.append(given)
    return files


def _print(result: CanaryResult) -> None:
    from pytest_ooda._util import display_path

    print(f"{result.label} ({display_path(result.cassette, Path.cwd())})")
    print(f"  pinned: {result.pinned.describe()}")
    print(f"  new:    {result.new.describe()}")
    if result.changes:
        print("  what it sends otherwise:")
        for change in result.changes:
            for line in change.lines():
                print(f"    {line}")
    else:
        print("  what it sends: the same as the pinned agent")
    print(f"  {result.verdict()}")
    print()


def command(args: argparse.Namespace) -> int:
    from pytest_ooda import live
    from pytest_ooda.apireplay import cassette_path
    from pytest_ooda.cli.common import load_from_args
    from pytest_ooda.config import workspace_config_file
    from pytest_ooda.errors import ScenarioError
    from pytest_ooda.scenario import load_scenario

    config = load_from_args(args)
    config_file = Path(args.config) if args.config else workspace_config_file(Path.cwd())
    found = [
        (path, cassette_path(path))
        for path in _scenario_files(args.paths, config_file)
        if cassette_path(path).is_file()
    ]
    if not found:
        raise ScenarioError(
            "ooda canary: no scenario has a cassette to replay",
            hint="record one: pytest -m live --ooda-record-api (`ooda help agent-replay`)",
        )
    settings: dict[str, Any] = {"config": Path(args.config).resolve() if args.config else None}
    if args.pinned_cmd:
        settings["ai_cmd"] = args.pinned_cmd
    results = []
    for path, cassette in found:
        scenario = load_scenario(path)
        note(f"ooda canary: {scenario.label}: replaying {cassette.name} through both agents")
        results.append(
            live.canary_scenario(
                Path.cwd(),
                scenario,
                cassette,
                config=config,
                new=args.agent_cmd,
                settings=settings,
            )
        )
    for result in results:
        _print(result)
    safe = sum(result.safe for result in results)
    print(f"{safe} of {len(results)} scenario(s) safe to unpin with {results[0].new.command}")
    sys.stdout.flush()
    return EXIT_OK if safe == len(results) else EXIT_NOT_SAFE
