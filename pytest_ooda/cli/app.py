"""The ``ooda`` command: a thin argparse front end over the library.

Each subcommand is a module of this package with ``add_parser(subparsers)`` and
``command(args) -> int``, registered once in ``COMMANDS``; each imports the library only
when it runs, so ``ooda --help`` and a quick ``ooda show`` load little. Exit codes: 0
success, 1 usage error (bad options), 2 configuration error (any ``OodaError``), 130
interrupted.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda import __version__
from pytest_ooda.cli.common import (
    _EPILOG,
    EXIT_CONFIG,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Parser,
    RawDescriptionHelpFormatter,
)
from pytest_ooda.errors import OodaError, UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import ModuleType

#: Subcommands in the order `ooda --help` lists them, each with the module that has its
#: ``add_parser(subparsers)`` and ``command(args)``. A module is imported only when its
#: command is named (or `ooda --help` lists them all): `ooda show` loads no other.
COMMANDS: dict[str, str] = {
    "init": "pytest_ooda.cli.init",
    "list": "pytest_ooda.cli.list",
    "show": "pytest_ooda.cli.show",
    "run": "pytest_ooda.cli.run",
    "lint": "pytest_ooda.cli.lint",
    "changed": "pytest_ooda.cli.changed",
    "report": "pytest_ooda.cli.report",
    "compare": "pytest_ooda.cli.compare",
    "history": "pytest_ooda.cli.history",
    "plan-runs": "pytest_ooda.cli.plan_runs",
    "ablate": "pytest_ooda.cli.ablate",
    "canary": "pytest_ooda.cli.canary",
    "view": "pytest_ooda.cli.view",
    "judge": "pytest_ooda.cli.judge",
    "sandbox": "pytest_ooda.cli.sandbox",
    "help": "pytest_ooda.cli.help",
}


def command_module(name: str) -> ModuleType:
    """The module of subcommand ``name`` (a key of ``COMMANDS``)."""
    import importlib

    return importlib.import_module(COMMANDS[name])


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``ooda`` argument parser: with every registered subcommand, or only with
    ``command`` (what a command line naming it needs; building every subcommand's
    arguments costs a quick ``ooda show`` a noticeable part of its time)."""
    parser = Parser(
        prog="ooda",
        description="Compose, inspect and run OODA prompt procedures for AI coding agents.",
        epilog=_EPILOG,
        formatter_class=RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", parser_class=Parser
    )
    for name in COMMANDS:
        if command is None or name == command:
            command_module(name).add_parser(subparsers)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word, when no option comes before it)."""
    if argv and argv[0] in COMMANDS:
        return argv[0]
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ooda`` command line ``argv`` (default: ``sys.argv[1:]``); returns the
    exit code. The ``ooda`` console script and ``python -m pytest_ooda`` call this."""
    # Started with stdout or stderr closed (`ooda show build >&-`), Python leaves them
    # None; write into the void rather than fail on it.
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    # A display name or path the terminal's encoding cannot show is escaped, not a crash.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            with contextlib.suppress(ValueError):
                reconfigure(errors="backslashreplace")
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_named(words))
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:
        # --help/--version (0) and usage errors (1) end here; return like every other path.
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        os.getcwd()
    except OSError as exc:
        print(
            f"ooda: error: cannot use the current directory: {exc.strerror or exc} "
            "(was it deleted?)",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"ooda: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OodaError as exc:
        from pytest_ooda.diagnostics import format_error

        # The same located excerpt (lines, caret, hint) the plugin's reports show.
        print(f"ooda: error: {format_error(exc, root=Path.cwd())}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("ooda: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `ooda show build | head` closes the pipe early; that is not an error.
        return EXIT_OK
    except OSError as exc:
        # The last line of defence against a traceback: a file or directory the user named
        # that the library did not expect to be unusable.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"ooda: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_CONFIG


if __name__ == "__main__":
    sys.exit(main())
