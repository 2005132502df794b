"""Which earlier run a run would make again: the rule of ``--ooda-resume``, over the
records a results directory holds.

Two runs are the same run when they share a procedure, a scenario, a variant, the
sha256 of their first prompt and their run number (:data:`RunKey`). Of the records of
one run, the first valid one stands for it (the run is not made again); without one,
the latest ``error`` (the run is made again, its new record naming the one it
replaces, so reports count the two once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pytest_ooda.results.schema import RunRecord

__all__ = ["RunKey", "finished_runs"]

#: What makes two runs the same run: procedure, scenario, variant, prompt sha256, run k.
RunKey = tuple[str, str, str | None, str, int]


def finished_runs(records: Iterable[RunRecord]) -> dict[RunKey, RunRecord]:
    """``records`` by the run each is of: its first valid record, else its latest
    ``error``. A record without a prompt hash (made before it was kept) is no run a
    session can be said to repeat."""
    found: dict[RunKey, RunRecord] = {}
    for record in sorted(records, key=lambda item: item.finished_at):
        if record.prompt_sha256 is None:
            continue
        key = (
            record.head.procedure,
            record.head.scenario,
            record.head.variant,
            record.prompt_sha256,
            record.head.run,
        )
        held = found.get(key)
        if held is None or not held.valid:
            found[key] = record
    return found
