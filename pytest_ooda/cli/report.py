"""``ooda report RESULTS...``: the measured runs per scenario, as a terminal table, a
Markdown summary or one self-contained HTML file; ``--check`` gates on the scenarios'
aggregate expectations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import (
    EXIT_OK,
    append_step_summary,
    note,
    positive_int,
    read_results_noting,
)
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from pytest_ooda.evaluate import ScenarioStats

#: ``--check`` found a scenario below its aggregate expectations.
EXIT_GATE_FAILED = 1
#: Where ``pytest -m live`` writes its results without ``--ooda-results`` (the plugin's
#: ``DEFAULT_RESULTS_DIR``), read when no RESULTS are named.
DEFAULT_RESULTS = ".ooda/results"


def add_parser(subparsers: Any) -> None:
    from pytest_ooda.evaluate import DEFAULT_K

    parser = subparsers.add_parser(
        "report",
        help="summarise results of live runs (table, Markdown, HTML)",
        description="Merge the results files of live runs (written by `pytest -m live` to "
        ".ooda/results/, one per session; from any number of machines or CI shards) and "
        "report each scenario: runs, successes, success rate with its Wilson 95% interval, "
        "pass^k and pass@k, iterations, time, tokens, cost and how the runs ended. With "
        "$GITHUB_STEP_SUMMARY set, the Markdown summary is appended to it as well.",
        epilog="exit codes: 0 done, 1 --check found a scenario below its aggregate "
        "expectations, or --require-gates found none to check (or a usage error), 2 a "
        "results file cannot be read.",
    )
    parser.add_argument(
        "results",
        nargs="*",
        metavar="RESULTS",
        help="results files (.jsonl) or directories holding them (searched recursively); "
        f"default: {DEFAULT_RESULTS}, where `pytest -m live` writes them",
    )
    parser.add_argument(
        "--html", metavar="FILE", help="also write the report as one self-contained HTML file"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print Markdown instead of the terminal table"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a scenario misses its expect.success_rate / max_mean_iterations / "
        "max_mean_cost (judged over all the valid runs given)",
    )
    parser.add_argument(
        "--require-gates",
        action="store_true",
        help="with --check: exit 1 when no scenario in the results has an aggregate "
        "expectation at all (a check with nothing to check is no gate)",
    )
    parser.add_argument(
        "--k",
        type=positive_int,
        default=DEFAULT_K,
        metavar="K",
        help=f"the k of pass^k and pass@k (default {DEFAULT_K})",
    )
    parser.add_argument("--title", default="ooda report", help="heading of the report")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.evaluate import (
        drop_duplicates,
        gate_lines,
        notes,
        report_markdown,
        stats_table,
        summarize,
    )

    html_path = Path(args.html) if args.html else None
    if html_path is not None and html_path.is_dir():
        raise UsageError(f"--html {args.html}: is a directory; give the path of an .html file")
    results = read_results_noting(args.results or [default_results()], summary=html_path is None)
    records, dropped = drop_duplicates(results.records)
    if dropped:
        note(
            f"ooda report: {dropped} run(s) counted once: a resumed session ran them again "
            "(the valid run counts)"
        )
    stats = summarize(records, k=args.k)
    markdown = report_markdown(stats, k=args.k, title=args.title)
    gates, failed = gate_lines(stats)
    if args.markdown:
        sys.stdout.write(markdown)
    else:
        runs, files = len(records), len(results.files)
        print(f"{args.title}: {len(stats)} scenario(s), {runs} run(s) from {files} file(s)")
        print()
        print("\n".join(stats_table(stats, args.k)))
        for line in [*gates, *notes(stats)]:
            print(line)
    append_step_summary(markdown)
    if html_path is not None:
        _write_html(html_path, stats, args, [str(path) for path in results.files])
    if args.check and not any(item.gates is not None for item in stats):
        note(
            "ooda report: no aggregate expectation (expect.success_rate, max_mean_iterations, "
            "max_mean_cost) in scope: nothing was checked"
        )
        if args.require_gates:
            return EXIT_GATE_FAILED
    if args.check and failed:
        note(f"ooda report: {failed} scenario(s) missed their aggregate expectations")
        return EXIT_GATE_FAILED
    return EXIT_OK


def default_results() -> str:
    """``.ooda/results`` when it exists; a usage error saying what to do when not."""
    if not Path(DEFAULT_RESULTS).is_dir():
        raise UsageError(
            f"no results to report: {DEFAULT_RESULTS} (the default results directory) does "
            "not exist here; run `pytest -m live` first, or name results files or directories"
        )
    return DEFAULT_RESULTS


def _write_html(
    path: Path, stats: Sequence[ScenarioStats], args: argparse.Namespace, sources: list[str]
) -> None:
    import time

    from pytest_ooda._util import atomic_write_text
    from pytest_ooda.evaluate import render_html

    html = render_html(
        stats,
        k=args.k,
        title=args.title,
        sources=sources,
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    )
    try:
        atomic_write_text(path, html)
    except OSError as exc:
        raise UsageError(f"--html {args.html}: cannot write it: {exc.strerror or exc}") from None
    note(f"ooda report: wrote {path}")
