"""Outputs side by side (``ooda view``'s ``/outputs`` page): one scenario's runs with a
column per variant, run k of each beside the others, each showing its verdict, the
agent's final output and the diffs of the files its iterations changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.report.pages import DEFAULT_VARIANT
from pytest_ooda.report.render_text import money, percent
from pytest_ooda.report.run_detail import diff_lines, reason

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda.report.pages import Links
    from pytest_ooda.results import RunRecord

__all__ = ["final_output", "output_columns"]


def final_output(record: RunRecord) -> str:
    """The agent's last output: the transcript's, else the record's output tail."""
    for item in reversed((record.transcript or {}).get("iterations") or ()):
        if isinstance(item, dict) and isinstance(item.get("output"), str):
            return str(item["output"])
    return record.iterations[-1].output_tail if record.iterations else ""


def _diffs(record: RunRecord) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each iteration's diffs, in order (``path (iteration n)`` when there were several)."""
    items = [
        item
        for item in (record.transcript or {}).get("iterations") or ()
        if isinstance(item, dict) and isinstance(item.get("diffs"), dict)
    ]
    out = []
    for item in items:
        for path, text in item["diffs"].items():
            label = f"{path} (iteration {item.get('number')})" if len(items) > 1 else str(path)
            out.append((label, diff_lines(str(text))))
    return out


def output_columns(
    records: Sequence[RunRecord],
    whole: Callable[[RunRecord], RunRecord],
    links: Links,
    *,
    page: int,
    size: int,
    compare: Callable[[str, str], str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """The page's columns (one per variant), its rows (``size`` run numbers of page
    ``page``, each run read whole) and how many run numbers there are in all."""
    names = sorted(
        {record.head.variant or DEFAULT_VARIANT for record in records},
        key=lambda name: (name != DEFAULT_VARIANT, name),
    )
    cells: dict[tuple[str, int], RunRecord] = {}
    for record in sorted(records, key=lambda item: item.finished_at):
        cells[(record.head.variant or DEFAULT_VARIANT, record.head.run)] = record
    numbers = sorted({run for _, run in cells})
    columns = []
    for name in names:
        mine = [record for (variant, _), record in cells.items() if variant == name]
        valid = [record for record in mine if record.valid]
        ok = sum(1 for record in valid if record.outcome == "success")
        costs = [record.cost for record in mine if record.cost is not None]
        summary = f"{ok}/{len(valid)} ok"
        if valid:
            summary += f" ({percent(ok / len(valid))})"
        if costs:
            summary += f" · {money(sum(costs) / len(costs))}/run"
        columns.append(
            {
                "name": name,
                "summary": summary,
                "compare_href": compare(names[0], name) if name != names[0] else None,
            }
        )
    rows = []
    for number in numbers[(page - 1) * size : page * size]:
        row: list[dict[str, Any] | None] = []
        for name in names:
            found = cells.get((name, number))
            if found is None:
                row.append(None)
                continue
            record = whole(found)
            row.append(
                {
                    "variant": name,
                    "verdict": record.outcome,
                    "href": links.run(record),
                    "reason": reason(record),
                    "output": final_output(record),
                    "diffs": _diffs(record),
                    "files": [f"{path} {change}" for path, change in record.files_changed.items()],
                }
            )
        rows.append({"run": number, "cells": row})
    return columns, rows, len(numbers)
