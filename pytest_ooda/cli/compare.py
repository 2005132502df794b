"""``ooda compare BASE NEW``: did a prompt change make each scenario better or worse?
Per scenario the change in success rate with the two-sided p-value of Fisher's exact
test (infrastructure errors left out), what the samples could detect, and the change in
mean iterations and cost; exit 1 on a significant regression. Runs made by another
agent, version, model or configuration than the other side's (their fingerprints) are
not compared: the command refuses, naming the difference (``--allow-drift FIELD``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import FINGERPRINT_FIELDS
from pytest_ooda.cli.common import (
    EXIT_OK,
    append_step_summary,
    fraction,
    note,
    positive_int,
    rate_difference,
    read_results_noting,
)
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from pytest_ooda.stats import ScenarioDrift

#: A scenario's success rate fell significantly.
EXIT_REGRESSED = 1
#: The comparison cannot be made: its runs were made by different agents (fingerprints),
#: or a positive control failed (the harness could not observe the behaviour).
EXIT_CANNOT_COMPARE = 2


def refused(drifted: list[ScenarioDrift]) -> bool:
    """Say why runs cannot be compared (stderr); whether the comparison is refused (a
    scenario whose runs differ in their fingerprints), not merely unchecked (runs
    recorded before fingerprints, which are compared, said as a warning)."""
    for item in drifted:
        if item.unchecked is not None:
            note("warning: " + item.lines()[0] + ": the agents cannot be compared")
    drifts = [item for item in drifted if item.unchecked is None]
    if not drifts:
        return False
    note(
        "ooda compare: refused: the runs compared were not made by the same agent, "
        "configured the same way"
    )
    for item in drifts:
        for line in item.lines():
            note(line)
    fields = sorted({each.field for item in drifts for each in item.drifts})
    note(
        "compare what you meant to compare, or name the fields to let differ: "
        + " ".join(f"--allow-drift {field}" for field in fields)
    )
    return True


def add_parser(subparsers: Any) -> None:
    from pytest_ooda.stats import DEFAULT_ALPHA, DEFAULT_K

    parser = subparsers.add_parser(
        "compare",
        help="compare two sets of live-run results (before/after a prompt change)",
        description="Compare the runs in BASE with the runs in NEW, scenario by scenario: "
        "the success rates with the two-sided p-value of Fisher's exact test, mean "
        "iterations and mean cost, and the fragments whose text differs. Each side is a "
        "results file or a directory of them; --base/--new add more files to a side (CI "
        "shards, several machines). With $GITHUB_STEP_SUMMARY set, a Markdown summary is "
        "appended to it.",
        epilog="exit codes: 0 no scenario regressed significantly, 1 at least one did (or "
        "a usage error), 2 a results file cannot be read, or the comparison cannot be made "
        "(the runs' agents differ in their fingerprints, or a positive control failed).",
    )
    parser.add_argument("base", metavar="BASE", help="results before the change")
    parser.add_argument(
        "new", metavar="NEW", nargs="?", help="results after the change (not with --by)"
    )
    parser.add_argument(
        "--base",
        dest="more_base",
        action="append",
        default=[],
        metavar="PATH",
        help="another results file or directory for the BASE side (repeatable)",
    )
    parser.add_argument(
        "--new",
        dest="more_new",
        action="append",
        default=[],
        metavar="PATH",
        help="another results file or directory for the NEW side (repeatable)",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=DEFAULT_ALPHA,
        metavar="A",
        help=f"significance level of the two-sided test (default {DEFAULT_ALPHA})",
    )
    parser.add_argument(
        "--detect",
        type=rate_difference,
        default=None,
        metavar="D",
        help="also say how many valid runs per side a two-sided test needs to detect a "
        "change of D in success rate (0.2 or 20%%) with 80%% power (not with --by variant)",
    )
    parser.add_argument(
        "--k",
        type=positive_int,
        default=DEFAULT_K,
        metavar="K",
        help=f"the k of pass^k and pass@k (default {DEFAULT_K})",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print Markdown instead of the terminal table"
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="also write the comparison as one self-contained HTML file (with --by variant: "
        "the ranking, the pairwise tests and each variant's runs)",
    )
    parser.add_argument("--title", default="ooda compare", help="heading of the Markdown summary")
    add_by_variant_option(parser)
    parser.add_argument(
        "--allow-drift",
        action="append",
        default=[],
        choices=FINGERPRINT_FIELDS,
        metavar="FIELD",
        help="let the runs compared differ in this field of their agent's fingerprint "
        f"(repeatable: {', '.join(FINGERPRINT_FIELDS)}); without it a comparison whose "
        "runs were made by another agent, version, model or configuration is refused",
    )
    parser.set_defaults(func=command)


def add_by_variant_option(parser: argparse.ArgumentParser) -> None:
    """``--by variant``: one set of results, every pair of variants compared."""
    parser.add_argument(
        "--by",
        choices=("variant",),
        help="compare the variants inside BASE (and NEW, --base: all one set of results) "
        "pairwise per scenario, Holm-corrected, and rank them",
    )


def command_by_variant(args: argparse.Namespace) -> int:
    """``ooda compare --by variant RESULTS...``: the ranking and the pairwise tests."""
    from pytest_ooda.report import render_variants_html, variant_markdown, variant_table
    from pytest_ooda.stats import compare_variants, variant_drift

    if args.detect is not None:
        raise UsageError(
            "--detect is for two sides (BASE NEW): with --by variant every pair is tested "
            "Holm-corrected, and no one sample size answers for all of them; compare two "
            "variants' results as BASE and NEW to ask what a difference needs"
        )
    _check_html_path(args.html)
    paths = [args.base, *([args.new] if args.new else []), *args.more_base, *args.more_new]
    results = read_results_noting(paths, summary=True)
    if refused(variant_drift(results.records, allowed=args.allow_drift)):
        return EXIT_CANNOT_COMPARE
    comparison = compare_variants(results.records, alpha=args.alpha)
    markdown = variant_markdown(comparison, title=args.title)
    if args.markdown:
        sys.stdout.write(markdown)
    else:
        print(f"{len(results.records)} run(s) from {len(results.files)} file(s)")
        print()
        print("\n".join(variant_table(comparison)))
    append_step_summary(markdown)
    if args.html:
        _write_html(
            Path(args.html),
            lambda generated: render_variants_html(
                comparison, results.records, title=args.title, generated=generated
            ),
        )
    return EXIT_CANNOT_COMPARE if any(pair.blind for pair in comparison.pairs) else EXIT_OK


def command(args: argparse.Namespace) -> int:
    if args.by == "variant":
        return command_by_variant(args)
    if args.new is None:
        raise UsageError("ooda compare: give BASE and NEW (or --by variant RESULTS)")
    from pytest_ooda.report import compare_markdown, compare_table, render_compare_html
    from pytest_ooda.stats import compare, drop_duplicates, fingerprint_drift

    _check_html_path(args.html)
    base = read_results_noting([args.base, *args.more_base], summary=True)
    new = read_results_noting([args.new, *args.more_new], summary=True)
    base_records, _ = drop_duplicates(base.records)
    new_records, _ = drop_duplicates(new.records)
    if refused(fingerprint_drift(base_records, new_records, allowed=args.allow_drift)):
        return EXIT_CANNOT_COMPARE
    comparison = compare(base_records, new_records, alpha=args.alpha, k=args.k, detect=args.detect)
    markdown = compare_markdown(comparison, title=args.title)
    if args.markdown:
        sys.stdout.write(markdown)
    else:
        print(
            f"base: {len(base_records)} run(s) from {len(base.files)} file(s); "
            f"new: {len(new_records)} run(s) from {len(new.files)} file(s)"
        )
        print()
        print("\n".join(compare_table(comparison)))
    append_step_summary(markdown)
    if args.html:
        _write_html(
            Path(args.html),
            lambda generated: render_compare_html(
                comparison,
                title=args.title,
                generated=generated,
                whole_base=base.whole,
                whole_new=new.whole,
            ),
        )
    if comparison.blind:
        return EXIT_CANNOT_COMPARE
    return EXIT_REGRESSED if comparison.regressed else EXIT_OK


def _check_html_path(given: str | None) -> None:
    if given is not None and Path(given).is_dir():
        raise UsageError(f"--html {given}: is a directory; give the path of an .html file")


def _write_html(path: Path, render: Callable[[str], str]) -> None:
    """The page ``render`` makes (given when it was generated), written atomically."""
    import time

    from pytest_ooda._util import atomic_write_text

    html = render(time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    try:
        atomic_write_text(path, html)
    except OSError as exc:
        raise UsageError(f"--html {path}: cannot write it: {exc.strerror or exc}") from None
    note(f"ooda compare: wrote {path}")
