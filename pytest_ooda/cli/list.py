"""``ooda list``: every procedure with its display name and summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK, add_config_option, load_from_args, note

if TYPE_CHECKING:
    import argparse

    pass


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list the available procedures",
        description="List every procedure (built-in plus workspace and global config) "
        "with its display name and summary.",
    )
    add_config_option(parser)
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    config = load_from_args(args)
    rows = [(name, proc.title, proc.summary) for name, proc in config.procedures.items()]
    # A procedure that does not load is listed, marked, and its error shown on stderr.
    rows += [(name, "(does not load)", "") for name in config.broken]
    rows.sort()
    for broken in config.broken.values():
        note(f"warning: procedure {broken.name} does not load: {broken.error.format(Path.cwd())}")
    if not rows:
        print("no procedures defined")
        return EXIT_OK
    name_width = max(len(row[0]) for row in rows)
    title_width = max(len(row[1]) for row in rows)
    for name, title, summary in rows:
        print(f"{name:<{name_width}}  {title:<{title_width}}  {summary}".rstrip())
    return EXIT_OK
