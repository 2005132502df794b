"""``ooda report RESULTS...``: the measured runs per scenario, as a terminal table, a
Markdown summary or a self-contained HTML report (its runs paged when there are many);
``--check`` gates on the scenarios' aggregate expectations; an incomplete measurement
is named with the command that goes on."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import (
    EXIT_OK,
    append_step_summary,
    fraction,
    note,
    open_in_browser,
    positive_int,
    read_results_noting,
)
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from pytest_ooda.results import Results, RunRecord
    from pytest_ooda.stats import ScenarioStats

#: ``--check`` found a scenario below its aggregate expectations.
EXIT_GATE_FAILED = 1
#: Where ``pytest -m live`` writes its results without ``--ooda-results`` (the plugin's
#: ``DEFAULT_RESULTS_DIR``), read when no RESULTS are named.
DEFAULT_RESULTS = ".ooda/results"


def add_parser(subparsers: Any) -> None:
    from pytest_ooda.stats import DEFAULT_ALPHA, DEFAULT_K

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
        "--html",
        metavar="FILE",
        help="also write the report as a self-contained HTML file (with more runs than "
        "one page holds, their details go to FILE-2.html, FILE-3.html, ... beside it)",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print Markdown instead of the terminal table"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a scenario misses its expect.success_rate / max_mean_iterations / "
        "max_mean_cost, or is inconclusive: more infrastructure errors among its runs than "
        "its max_error_rate (default 0.2). Judged per measurement: each session on its own "
        "(with the sessions that resumed it; a sharded measurement's shards together), so "
        "an older session in the same folder neither hides nor rescues a newer one",
    )
    parser.add_argument(
        "--pool",
        action="store_true",
        help="judge the gates over every run given, pooled, whatever session made it",
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
    parser.add_argument(
        "--open",
        action="store_true",
        help="with --html: open the written report in a web browser (when there is a display)",
    )
    parser.add_argument("--title", default="ooda report", help="heading of the report")
    pr = parser.add_argument_group(
        "a pull request's comment",
        "--pr BASE NEW prints the Markdown of one PR comment instead: per scenario the "
        "verdict with the interval of the difference and the smallest change the runs "
        "could detect, cost and token deltas, the prompt diff by fragment (folded), the "
        "base side's history; it exits 1 when a scenario regressed significantly",
    )
    pr.add_argument("--pr", nargs=2, metavar=("BASE", "NEW"), help="the two sides' results")
    pr.add_argument("--report-url", metavar="URL", help="with --pr: where the HTML report is")
    pr.add_argument(
        "--changed",
        metavar="FILE",
        help="with --pr: the selection `ooda changed REF --format json` wrote — the comment "
        "reports the touched scenarios with why, counts the untouched ones, and says so when "
        "nothing was touched (a side may then hold no results)",
    )
    pr.add_argument(
        "--history",
        action="append",
        metavar="PATH",
        help="with --pr: earlier results for the scenarios' history (repeatable; the base "
        "side's runs count too)",
    )
    pr.add_argument(
        "--alpha",
        type=fraction,
        default=DEFAULT_ALPHA,
        metavar="A",
        help=f"with --pr: significance level (default {DEFAULT_ALPHA})",
    )
    pr.add_argument("--output", metavar="FILE", help="with --pr: write the Markdown to FILE")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.report import (
        ablation_lines,
        ablation_markdown,
        ablation_view,
        fingerprint_lines,
        notes,
        report_markdown,
        stats_table,
    )
    from pytest_ooda.stats import ablation, drop_duplicates, summarize
    from pytest_ooda.view import unfinished

    if args.pr:
        if args.results or args.check or args.markdown:
            raise UsageError(
                "--pr BASE NEW reads its two sides: give no RESULTS, --check or --markdown"
            )
        from pytest_ooda.cli.report_pr import command as pr_command

        return pr_command(args)
    for flag in ("report_url", "history", "output", "changed"):
        if getattr(args, flag):
            raise UsageError(f"--{flag.replace('_', '-')} goes with --pr BASE NEW")
    html_path = Path(args.html) if args.html else None
    if html_path is not None and html_path.is_dir():
        raise UsageError(f"--html {args.html}: is a directory; give the path of an .html file")
    if args.open and html_path is None:
        raise UsageError("--open opens the --html file: give --html FILE too")
    results = read_results_noting(args.results or [default_results()], summary=True)
    records, dropped = drop_duplicates(results.records)
    if dropped:
        note(
            f"ooda report: {dropped} run(s) counted once: a resumed session ran them again "
            "(the valid run counts)"
        )
    stats = summarize(records, k=args.k)
    incomplete = unfinished(results)
    ablations = ablation(records)
    markdown = report_markdown(stats, k=args.k, title=args.title)
    markdown += "".join("\n" + ablation_markdown(item) for item in ablations)
    gates, failed, checked = _gates(records, stats, k=args.k, pool=args.pool)
    if args.markdown:
        sys.stdout.write(markdown)
    else:
        runs, files = len(records), len(results.files)
        print(f"{args.title}: {len(stats)} scenario(s), {runs} run(s) from {files} file(s)")
        print()
        print("\n".join(stats_table(stats, args.k)))
        for line in [*gates, *notes(stats), *fingerprint_lines(stats)]:
            print(line)
        for found in ablations:
            print("\n" + "\n".join(ablation_lines(found)))
        for item in incomplete:
            print(
                f"incomplete: {item['text']}; its gates were judged over the runs made. "
                f"To go on: {item['command']}"
            )
    append_step_summary(markdown)
    if html_path is not None:
        views = [ablation_view(item) for item in ablations]
        _write_html(html_path, stats, args, results, incomplete, views)
        if args.open:
            open_in_browser(html_path.resolve().as_uri())
    if args.check and not checked:
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


def measurements(records: Sequence[RunRecord]) -> dict[str, list[RunRecord]]:
    """The records by the measurement they belong to, oldest first: a session with the
    sessions that resumed it (its series), or the shards of one sharded measurement
    (``--ooda-shard K/N`` of one commit)."""
    groups: dict[str, list[RunRecord]] = {}
    for record in records:
        if record.head.shard:
            count = record.head.shard.partition("/")[2]
            commit = (record.git_commit or "an unknown commit")[:12]
            key = f"the {count} shards of {commit}"
        else:
            key = f"session {record.series or record.session or 'unnamed'}"
        groups.setdefault(key, []).append(record)
    return dict(sorted(groups.items()))


def _gates(
    records: Sequence[RunRecord], stats: Sequence[ScenarioStats], *, k: int, pool: bool
) -> tuple[list[str], int, bool]:
    """The gate lines, how many missed, and whether any gate was in scope: over every
    run pooled (``pool``, or one measurement given), else per measurement, each line
    naming its session."""
    from pytest_ooda.report import gate_lines
    from pytest_ooda.stats import summarize

    groups = measurements(records)
    if pool or len(groups) <= 1:
        lines, failed = gate_lines(stats)
        return lines, failed, any(item.gates is not None for item in stats)
    out: list[str] = []
    failed = 0
    checked = False
    for name, group in groups.items():
        own = summarize(group, k=k)
        lines, missed = gate_lines(own)
        failed += missed
        checked = checked or any(item.gates is not None for item in own)
        out.extend(f"{name}: {line}" for line in lines)
    return out, failed, checked


def default_results() -> str:
    """``.ooda/results`` when it exists; a usage error saying what to do when not."""
    if not Path(DEFAULT_RESULTS).is_dir():
        raise UsageError(
            f"no results to report: {DEFAULT_RESULTS} (the default results directory) does "
            "not exist here; run `pytest -m live` first, or name results files or directories"
        )
    return DEFAULT_RESULTS


def _write_html(
    path: Path,
    stats: Sequence[ScenarioStats],
    args: argparse.Namespace,
    results: Results,
    incomplete: list[dict[str, str]],
    ablations: list[dict[str, Any]],
) -> None:
    """The report's files: ``path``, and its run pages beside it when it has more runs
    than one page holds. A page of another report of ours is replaced; any other file
    of that name is left alone (the report is not written)."""
    import time

    from pytest_ooda._util import atomic_write_text
    from pytest_ooda.report import report_files, report_pages

    names = report_files(stats, path.name)
    stale = [item for item in _report_pages_beside(path) if item.name not in names]
    for name in names[1:]:
        target = path.with_name(name)
        if target.exists() and not _ours(target):
            raise UsageError(
                f"--html {args.html}: its run pages would replace {target}, which is not an "
                "ooda report page; move it or choose another name"
            )
    pages = report_pages(
        stats,
        k=args.k,
        title=args.title,
        name=path.name,
        sources=[str(item) for item in results.files],
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        notes=incomplete,
        ablations=ablations,
        whole=results.whole,
        size=lambda record: results.sources[record.id].length,
    )
    try:
        for page in pages:
            atomic_write_text(path.with_name(page.name), page.html)
        for item in stale:
            item.unlink(missing_ok=True)
    except OSError as exc:
        raise UsageError(f"--html {args.html}: cannot write it: {exc.strerror or exc}") from None
    more = f" and {len(names) - 1} page(s) of runs beside it" if len(names) > 1 else ""
    note(f"ooda report: wrote {path}{more}")


def _ours(path: Path) -> bool:
    """Whether ``path`` is a page an ooda report wrote (its generator says so)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(1024)
    except OSError:
        return False
    return '<meta name="generator" content="pytest-ooda ' in head


def _report_pages_beside(path: Path) -> list[Path]:
    """The run pages of an earlier report of the same name (``NAME-2.html`` …)."""
    stem = path.name.removesuffix(".html")
    found = []
    for item in path.parent.glob(f"{stem}-*.html"):
        number = item.name.removesuffix(".html")[len(stem) + 1 :]
        if number.isdigit() and _ours(item):
            found.append(item)
    return found
