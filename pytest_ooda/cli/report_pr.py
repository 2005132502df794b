"""``ooda report --pr BASE NEW``: the Markdown of one pull-request comment — per
scenario the change touched, its verdict with the interval of the difference and what
the runs could detect, cost and token deltas, the prompt diff by fragment, the
history's word on it and a link to the HTML report; exit 1 on a significant
regression, as ``ooda compare`` does. Where the two sides' runs were made by different
agents (their fingerprints), the comment says so beside the scenario instead of
refusing as ``ooda compare`` does: the comment is what a reviewer sees."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.cli.common import EXIT_OK, append_step_summary, note, read_results_noting

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    from pytest_ooda.impact import Impact
    from pytest_ooda.results import RunRecord
    from pytest_ooda.stats import Comparison, ScenarioDrift

#: A touched scenario regressed significantly.
EXIT_REGRESSED = 1


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.report import pr_markdown
    from pytest_ooda.stats import compare, drop_duplicates, fingerprint_drift, history

    selection = _selection(Path(args.changed)) if args.changed else None
    base_path, new_path = args.pr
    base_records, whole_base = _side(base_path, empty_ok=selection is not None)
    new_records, whole_new = _side(new_path, empty_ok=selection is not None)
    comparison = compare(base_records, new_records, alpha=args.alpha)
    past: list[RunRecord] = list(base_records)
    earlier = _earlier(args.history or ())
    if earlier:
        past += drop_duplicates(read_results_noting(earlier, summary=True).records)[0]
    histories = {item.label: item for item in history(past)}
    markdown = pr_markdown(
        comparison,
        touched=None if selection is None else [item.label for item in selection.touched],
        untouched=() if selection is None else [item.label for item in selection.untouched],
        reasons={}
        if selection is None
        else {item.label: "; ".join(item.reasons) for item in selection.touched},
        histories=histories,
        drift=_drift(fingerprint_drift(base_records, new_records)),
        report_url=args.report_url,
        whole_base=whole_base,
        whole_new=whole_new,
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
        _write_html(Path(args.html), comparison, whole_base, whole_new)
    regressed = [
        item.label
        for item in comparison.regressed
        if selection is None or item.label in {each.label for each in selection.touched}
    ]
    if regressed:
        note(
            f"ooda report: {len(regressed)} scenario(s) regressed significantly: "
            + ", ".join(regressed)
        )
        return EXIT_REGRESSED
    return EXIT_OK


def _selection(path: Path) -> Impact:
    """The selection ``ooda changed --format json`` wrote to ``path``."""
    from pytest_ooda.errors import UsageError
    from pytest_ooda.impact import Impact

    try:
        return Impact.from_json(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise UsageError(f"--changed {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"--changed {path}: not a selection ({type(exc).__name__}: {exc})",
            hint="write it with: ooda changed REF --format json > FILE",
        ) from None


def _side(path: str, *, empty_ok: bool) -> tuple[list[RunRecord], Callable[[RunRecord], RunRecord]]:
    """One side's records (duplicates dropped) and how to read one whole. With a
    selection, a side with no results (no directory, or none in it) is empty: when
    nothing was touched nothing ran, and a touched scenario says it has no runs."""
    from pytest_ooda.stats import drop_duplicates

    given = Path(path)
    if empty_ok and not (given.is_file() or (given.is_dir() and any(given.rglob("*.jsonl")))):
        note(f"ooda report: no results in {path}: nothing ran on that side")
        return [], _same
    results = read_results_noting([path], summary=True)
    return drop_duplicates(results.records)[0], results.whole


def _same(record: RunRecord) -> RunRecord:
    return record


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


def _write_html(
    path: Path,
    comparison: Comparison,
    whole_base: Callable[[RunRecord], RunRecord],
    whole_new: Callable[[RunRecord], RunRecord],
) -> None:
    from pytest_ooda._util import atomic_write_text
    from pytest_ooda.report import render_compare_html

    html = render_compare_html(
        comparison,
        title="base against this change",
        whole_base=whole_base,
        whole_new=whole_new,
    )
    atomic_write_text(path, html)
    note(f"ooda report: wrote {path}")
