"""The report of a scenario's run that missed its expectations, live or replayed: what
was missed, the per-iteration table, and each prompt drift with its diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda._util import display_path

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pytest_ooda.loop import LoopResult
    from pytest_ooda.scenario.drift import Drift
    from pytest_ooda.scenario.model import Scenario

__all__ = ["failure_text"]


def failure_text(
    scenario: Scenario,
    result: LoopResult,
    problems: Sequence[str],
    drifts: Sequence[Drift] = (),
    *,
    root: Path,
    mode: str,
    rerecord_hint: str | None = None,
) -> str:
    """The report of a run (``mode``: ``live`` or ``replay``) that missed expectations:
    what was missed, the per-iteration table, and each prompt drift with its diff."""
    from pytest_ooda.loop import iteration_table

    where = display_path(scenario.path, root) if scenario.path else scenario.label
    lines = [
        f"scenario {scenario.label} ({where}) {mode}: status={result.status}, "
        f"{result.iterations} iteration(s)"
    ]
    lines.extend(f"  - {problem}" for problem in problems)
    lines.append("")
    lines.extend(iteration_table(result))
    for drift in drifts:
        lines.append("")
        lines.append(drift.describe())
    if drifts:
        lines.append("")
        lines.append(
            rerecord_hint
            or "  re-record with `pytest -m live --ooda-record-mode=new`, drop prompt_sha256 "
            "from a hand-written scenario, or pass --ooda-drift=warn"
        )
    return "\n".join(lines)
