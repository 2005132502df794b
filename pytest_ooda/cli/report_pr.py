"""``ooda report --pr BASE NEW``: the Markdown of one pull-request comment — per
scenario the change touched, its verdict with the interval of the difference and what
the runs could detect, cost and token deltas, the prompt diff by fragment, the
history's word on it and a link to the HTML report; exit 1 on a significant
regression, as ``ooda compare`` does. Where the two sides' runs were made by different
agents (their fingerprints), the comment says so beside the scenario instead of
refusing as ``ooda compare`` does: the comment is what a reviewer sees."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.cli.common import EXIT_OK, append_step_summary, note, read_results_noting

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from pytest_ooda.results import Results, RunRecord
    from pytest_ooda.stats import Comparison, ScenarioDrift

#: A touched scenario regressed significantly.
EXIT_REGRESSED = 1


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.report import pr_markdown
    from pytest_ooda.stats import compare, drop_duplicates, fingerprint_drift, history

    base_path, new_path = args.pr
    base = read_results_noting([base_path], summary=True)
    new = read_results_noting([new_path], summary=True)
    base_records = drop_duplicates(base.records)[0]
    new_records = drop_duplicates(new.records)[0]
    comparison = compare(base_records, new_records, alpha=args.alpha)
    past: list[RunRecord] = list(base_records)
    earlier = _earlier(args.history or ())
    if earlier:
        past += drop_duplicates(read_results_noting(earlier, summary=True).records)[0]
    histories = {item.label: item for item in history(past)}
    markdown = pr_markdown(
        comparison,
        histories=histories,
        drift=_drift(fingerprint_drift(base_records, new_records)),
        report_url=args.report_url,
        whole_base=base.whole,
        whole_new=new.whole,
        title=args.title if args.title != "ooda report" else "pytest-ooda: prompt changes measured",
    )
    if args.output:
        from pytest_ooda._util import atomic_write_text

        atomic_write_text(Path(args.output), markdown)
        note(f"ooda report: wrote {args.output}")
    else:
        sys.stdout.write(markdown)
    append_step_summary(markdown)
    if args.html:
        _write_html(Path(args.html), comparison, base, new)
    regressed = [item.label for item in comparison.regressed]
    if regressed:
        note(
            f"ooda report: {len(regressed)} scenario(s) regressed significantly: "
            + ", ".join(regressed)
        )
        return EXIT_REGRESSED
    return EXIT_OK


def _earlier(paths: Sequence[str]) -> list[str]:
    """The ``--history`` paths that hold results. One that is missing, or a directory
    with none, is said and left out: a history is kept in a CI cache that a first run
    has not filled yet, and the comment must still be written (the history is then the
    base side alone). A file that is there but unreadable is still an error."""
    kept = []
    for path in paths:
        given = Path(path)
        if not given.exists():
            note(f"ooda report: no history from {path}: not found")
        elif given.is_dir() and not any(given.rglob("*.jsonl")):
            note(f"ooda report: no history from {path}: no results files (*.jsonl) in it")
        else:
            kept.append(path)
    return kept


def _drift(found: list[ScenarioDrift]) -> dict[str, str]:
    """By scenario, how its two sides' agents differ, in words."""
    return {
        item.label: "; ".join(each.describe(item.names) for each in item.drifts)
        for item in found
        if item.drifts
    }


def _write_html(path: Path, comparison: Comparison, base: Results, new: Results) -> None:
    from pytest_ooda._util import atomic_write_text
    from pytest_ooda.report import render_compare_html

    html = render_compare_html(
        comparison,
        title="base against this change",
        whole_base=base.whole,
        whole_new=new.whole,
    )
    atomic_write_text(path, html)
    note(f"ooda report: wrote {path}")
