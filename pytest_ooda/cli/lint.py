"""``ooda lint``: lint findings as text or JSON."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import add_config_option
from pytest_ooda.errors import OodaError, UsageError

if TYPE_CHECKING:
    import argparse

    pass


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lint",
        help="check procedures, fragments and scenarios against the lint rules",
        description="Check the procedures declared in the workspace config (the built-ins "
        "when there is none) and its scenarios (every file under the config's scenarios/ "
        "folder, or the SCENARIO files named) against the rules in `ooda help lint-rules`. "
        "Prints one `file:line:col: ID severity: message` line per finding, every mistake "
        "of a file at once, and a summary; exits 1 when any error-severity finding remains.",
    )
    parser.add_argument(
        "scenarios",
        nargs="*",
        metavar="SCENARIO",
        help="scenario files to check (default: every one under the config's scenarios/)",
    )
    add_config_option(parser)
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (text)"
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="IDS",
        help="only these rules: ids, id prefixes (OODA2) or names, comma-separated",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="IDS",
        help="skip these rules: ids, id prefixes or names, comma-separated",
    )
    parser.add_argument(
        "--severity",
        action="append",
        default=[],
        metavar="RULE=LEVEL",
        help="override a rule's severity (error, warning, info, off); beats the config's "
        "lint: section",
    )
    parser.add_argument(
        "--builtin",
        action="store_true",
        help="also lint the built-in procedures",
    )
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from pytest_ooda import lint

    try:
        severities = lint.parse_severity_overrides(args.severity, source="--severity")
        lint.parse_rule_list(args.select, source="--select")
        lint.parse_rule_list(args.ignore, source="--ignore")
    except OodaError as exc:
        raise UsageError(str(exc)) from None
    if args.config is not None:
        from pytest_ooda.config import check_config_file

        check_config_file(args.config)
    report = lint.lint_path(
        args.config,
        builtin=args.builtin,
        severities=severities,
        select=args.select,
        ignore=args.ignore,
        scenarios=args.scenarios,
    )
    formatter = lint.format_json if args.format == "json" else lint.format_text
    sys.stdout.write(formatter(report))
    return report.exit_code
