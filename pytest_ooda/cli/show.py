"""``ooda show``: the assembled prompt, one phase, or every setting's provenance."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import PHASES
from pytest_ooda.cli.common import (
    EXIT_OK,
    add_config_option,
    add_prompt_format_option,
    check_context,
    load_from_args,
    positive_int,
    write_prompt,
)

if TYPE_CHECKING:
    import argparse

    from pytest_ooda.config import Config


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "show",
        help="print a procedure's assembled prompt",
        description="Print the exact prompt a procedure sends to the AI command in "
        "iteration 1 (or --iteration N) under its resolved iteration limit, byte for byte "
        "what `ooda run` pipes to it; or one phase of it; or where each setting comes from.",
    )
    parser.add_argument("procedure", metavar="PROCEDURE", help="procedure name (see `ooda list`)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--phase",
        "-p",
        choices=PHASES,
        help="print only this phase's composed text",
    )
    parser.add_argument(
        "--context",
        "-x",
        action="append",
        default=[],
        metavar="X",
        help="context text, or a file whose content is included (repeatable)",
    )
    parser.add_argument(
        "--iteration",
        type=positive_int,
        default=1,
        metavar="N",
        help="show the prompt of iteration N (default 1); only its `Iteration:` line differs",
    )
    add_config_option(parser)
    add_prompt_format_option(parser)
    what.add_argument(
        "--provenance",
        action="store_true",
        help="print each resolved setting and the tier/file:line it came from "
        "instead of the prompt",
    )
    parser.set_defaults(func=command)


def format_provenance(config: Config, procedure: str) -> str:
    """The resolved run settings of ``procedure`` and each one's source, one per line."""
    from pytest_ooda.config import (
        ROODA_CONFIG_FILENAME,
        Provenance,
        display_path,
        resolve_run_settings,
    )
    from pytest_ooda.loop import format_rows, run_settings_rows

    proc = config.procedure(procedure)
    run = resolve_run_settings(config, procedure, require_ai=False)
    values = run_settings_rows(run)
    for key in ("log_level", "log_timestamp_format"):
        values.append(
            (key, str(getattr(config.loop, key)), str(config.provenance.get(f"loop.{key}", "")))
        )
    default = Provenance("default")
    for phase, actions in proc.phases().items():
        where = str(config.provenance.get(f"procedures.{procedure}.{phase}", default))
        values.append((phase, f"{len(actions)} fragment(s)", where))
    lines = [f"procedure {procedure} ({proc.title})"]
    for file in config.files:
        if file.name == ROODA_CONFIG_FILENAME:
            # Found under rooda's name: say so, since nothing else would.
            lines.append(f"  config file {display_path(file)} (rooda's name for ooda-config.yml)")
    lines.append(format_rows(values))
    for phase, actions in proc.phases().items():
        for index, action in enumerate(actions):
            loc = action.location
            lines.append(f"  {phase}[{index}]  {action.source_label()}  ({loc})")
    return "\n".join(lines) + "\n"


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.compose import assemble_prompt, compose_phase

    check_context(args.context)
    config = load_from_args(args)
    proc = config.procedure(args.procedure)
    if args.provenance:
        sys.stdout.write(format_provenance(config, args.procedure))
    elif args.phase:
        text = compose_phase(proc.phases()[args.phase], procedure=proc.name, phase=args.phase)
        write_prompt(text + "\n" if text else "")
    else:
        from pytest_ooda.config import resolve_run_settings

        # The iteration limit `ooda run` would use, so the `Iteration: 1 of 5` line matches.
        # In rooda's layout the prompt is what rooda's --dry-run prints: no iteration line.
        limit = resolve_run_settings(
            config, args.procedure, require_ai=False, agent=False
        ).max_iterations
        rooda = proc.prompt_format == "rooda"
        prompt = assemble_prompt(
            proc,
            iteration=None if rooda else args.iteration,
            max_iterations=limit,
            context=args.context,
            cwd=Path.cwd(),
        )
        write_prompt(prompt)
    return EXIT_OK
