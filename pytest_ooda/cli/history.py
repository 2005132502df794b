"""``ooda history [RESULTS...]``: each scenario across sessions — stable-pass, flaky or
stable-fail with its interval, and where an unchanged prompt's rate moved."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK, append_step_summary, fraction, read_results_noting

if TYPE_CHECKING:
    import argparse


def add_parser(subparsers: Any) -> None:
    from pytest_ooda.stats import DEFAULT_ALPHA, MIN_HISTORY_RUNS

    parser = subparsers.add_parser(
        "history",
        help="each scenario across sessions: stable-pass, flaky or stable-fail",
        description="Read every session of the results (one file each) and follow each "
        "scenario across them: per session its date, commit, agent, prompt version and "
        "success rate with its 95% interval; its state over the runs of its current prompt "
        f"(at least {MIN_HISTORY_RUNS} valid runs): stable-pass (every run succeeded), flaky "
        "(some did), stable-fail (none did); and a change point where the rate of an "
        "unchanged prompt moved (Fisher's exact test of before against after, "
        "Bonferroni-corrected over the possible splits) — the model or agent moved under it.",
        epilog="exit codes: 0 done, 1 a usage error, 2 a results file cannot be read.",
    )
    parser.add_argument(
        "results",
        nargs="*",
        metavar="RESULTS",
        help="results files (.jsonl) or directories holding them; default: .ooda/results",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        metavar="LABEL",
        help="only this scenario (procedure/scenario, @variant for a variant; repeatable)",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=DEFAULT_ALPHA,
        metavar="A",
        help=f"significance level of a change point (default {DEFAULT_ALPHA})",
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table instead")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.cli.report import default_results
    from pytest_ooda.report import history_lines, history_markdown
    from pytest_ooda.stats import drop_duplicates, history

    results = read_results_noting(args.results or [default_results()], summary=True)
    records, _ = drop_duplicates(results.records)
    histories = history(records, alpha=args.alpha)
    if args.scenario:
        wanted = set(args.scenario)
        histories = [item for item in histories if item.label in wanted]
    markdown = history_markdown(histories)
    if args.markdown:
        sys.stdout.write(markdown)
    else:
        print("\n".join(history_lines(histories)))
    append_step_summary(markdown)
    return EXIT_OK
