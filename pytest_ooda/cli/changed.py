"""``ooda changed REF``: which scenarios a change since a git revision touched, and why
— the selection ``pytest -m live --ooda-changed=REF`` runs live (the others replay)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK, add_config_option, add_prompt_format_option

if TYPE_CHECKING:
    import argparse


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "changed",
        help="the scenarios a change since a git revision touched (the live-run selection)",
        description="Compose every scenario's prompts here and at the git revision REF "
        "(read from git's objects: the working tree is not touched) and print the "
        "scenarios whose prompts differ — any phase, iteration limit, fragment, template "
        "parameter, context, variant or installed agent material — or whose workspace "
        "files differ, each with why. `pytest -m live --ooda-changed=REF` runs exactly "
        "these live and replays the others.",
        epilog="exit codes: 0 done, 1 a usage error (REF names no commit), 2 a "
        "configuration error.",
    )
    parser.add_argument("ref", metavar="REF", help="a git revision: a branch, tag or commit")
    add_config_option(parser)
    add_prompt_format_option(parser)
    parser.add_argument(
        "--procedure-files",
        action="append",
        metavar="GLOB",
        help="config files to read, relative to the current directory (repeatable; "
        "default: the plugin's ooda_procedure_files, ooda-config.yml rooda-config.yml "
        "procedures/*.yml procedures/*.yaml)",
    )
    parser.add_argument(
        "--scenario-dir",
        metavar="DIR",
        help="the root of <procedure>/<name>.yml scenario folders (default: scenarios/ "
        "beside each config file; the plugin's ooda_scenario_dir)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default): a line per scenario, touched first; json: the selection",
    )
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_ooda.impact import changed_since
    from pytest_ooda.settings import Given, decide

    here = Path.cwd()
    flags = {
        "config": ("--config", args.config),
        "prompt_format": ("--prompt-format", args.prompt_format),
        "procedure_files": ("--procedure-files", args.procedure_files),
        "scenario_dir": ("--scenario-dir", args.scenario_dir),
    }
    given = {
        name: Given(tuple(value) if isinstance(value, list) else value, "cli", flag, here)
        for name, (flag, value) in flags.items()
        if value is not None
    }
    # The settings table checks each as it checks pytest's options of the same rows.
    session = decide(given, root=here, front="ooda")
    impact = changed_since(session, args.ref)
    if args.format == "json":
        sys.stdout.write(json.dumps(impact.to_json(), indent=2) + "\n")
    else:
        print("\n".join(impact.lines()))
    return EXIT_OK
