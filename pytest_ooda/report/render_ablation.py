"""An ablation's verdicts (``ooda ablate``, the report page and the viewer's
``/ablation/KEY``): per fragment the tokens it adds per iteration, the change in success
rate without it with its interval, the Holm-adjusted p-value and keep / cut / can't
tell yet."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.report.html_report import render_page

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.stats import Ablation, ArmEffect

__all__ = ["ablation_lines", "ablation_markdown", "ablation_view", "render_ablation_html"]

_HEADS = ["fragment", "tokens/iter", "full", "without", "change", "interval", "adj. p", "verdict"]


def _tokens(arm: ArmEffect) -> str:
    if arm.tokens is None:
        return "-"
    return ("~" if arm.tokens_estimated else "") + f"{arm.tokens:+,.0f}"


def _cells(arm: ArmEffect) -> list[str]:
    low, high = arm.interval
    return [
        arm.label,
        _tokens(arm),
        f"{arm.full_successes}/{arm.pairs}",
        f"{arm.without_successes}/{arm.pairs}",
        f"{arm.difference * 100:+.0f} pp",
        f"{low * 100:+.0f} … {high * 100:+.0f} pp",
        f"{arm.adjusted:.3g}",
        arm.verdict_text(),
    ]


def _method(ablation: Ablation) -> str:
    from pytest_ooda.stats import looks

    rounds = ", ".join(str(look) for look in looks(ablation.planned))
    return (
        f"full prompt {ablation.full_successes}/{ablation.full_runs}; looks after rounds "
        f"{rounds} (alpha {ablation.alpha:g} shared over them); McNemar's exact test "
        f"Holm-corrected over {len(ablation.arms)} arm(s); intervals of full minus without "
        f"at {ablation.confidence:.1%}; cut when the interval's top is below "
        f"{ablation.margin * 100:.0f} pp"
    )


def ablation_lines(ablation: Ablation) -> list[str]:
    """The terminal table, with how it was judged above it."""
    rows = [_HEADS, *(_cells(arm) for arm in ablation.arms)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADS))]
    numeric = {1, 2, 3, 4, 6}
    out = [f"ablation of {ablation.label}: {_method(ablation)}", ""]
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        out.append("  ".join(cells).rstrip())
    return out


def ablation_markdown(ablation: Ablation) -> str:
    lines = [f"## ablation of {ablation.label}", "", _method(ablation), ""]
    lines.append("| " + " | ".join(_HEADS) + " |")
    lines.append("| --- | ---: | ---: | ---: | ---: | --- | ---: | --- |")
    lines += ["| " + " | ".join(_cells(arm)) + " |" for arm in ablation.arms]
    return "\n".join(lines) + "\n"


def ablation_view(ablation: Ablation) -> dict[str, Any]:
    """What a page shows of one ablation."""
    return {
        "label": ablation.label,
        "method": _method(ablation),
        "heads": _HEADS,
        "rows": [
            {"css": arm.verdict.replace("'", "").replace(" ", "-"), "cells": _cells(arm)}
            for arm in ablation.arms
        ],
    }


def render_ablation_html(ablations: Sequence[Ablation], *, title: str, **page: Any) -> str:
    """The ablations as a page (``page``: ``csp``, ``crumbs``, ``generated`` …)."""
    return render_page(
        "ablation.html.j2",
        title=title,
        ablations=[ablation_view(item) for item in ablations],
        **page,
    )
