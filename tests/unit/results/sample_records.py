"""Results records for the results, stats, report and view tests, as a session logs them."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from pytest_ooda.backends import Usage
from pytest_ooda.results import FragmentHash, IterationEntry, RunRecord

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

_ids = itertools.count(1)


def record(
    success: bool,
    *,
    procedure: str = "build",
    scenario: str = "happy",
    iterations: int = 1,
    status: str | None = None,
    cost: float | None = None,
    tokens: int | None = None,
    run: int = 1,
    runs: int = 1,
    elapsed: float = 1.0,
    gates: dict[str, Any] | None = None,
    fragment: str = "a" * 64,
    prompt: str = "p" * 64,
    finished_at: str = "2025-01-01T00:00:00+00:00",
    outcome: str | None = None,
    error_reason: str | None = None,
    session: str | None = None,
    series: str | None = None,
) -> RunRecord:
    usage = None
    if tokens is not None or cost is not None:
        usage = Usage(input_tokens=tokens or 0, cost=cost)
    ended = status or ("success" if success else "max-iters")
    return RunRecord(
        id=f"id-{next(_ids)}",
        procedure=procedure,
        scenario=scenario,
        run=run,
        runs=runs,
        status=ended,
        outcome=outcome or ("success" if success else "failure"),  # type: ignore[arg-type]
        elapsed_s=elapsed,
        started_at=finished_at,
        finished_at=finished_at,
        prompt_sha256=prompt,
        fragments=(FragmentHash("observe", 0, "prompts/look.md", fragment),),
        usage=usage,
        iterations=tuple(
            IterationEntry(
                number=number,
                outcome="success" if success and number == iterations else "ok",
                signal="SUCCESS" if success and number == iterations else None,
                exit_code=0,
                duration_s=elapsed / iterations,
                output_tail=f"iteration {number}\n",
            )
            for number in range(1, iterations + 1)
        ),
        aggregate_expect=gates,
        error_reason=error_reason,
        session=session,
        series=series,
    )


def write(path: Path, records: Iterable[RunRecord]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(item.to_line() for item in records), encoding="ascii")
    return path


def sample(successes: int, runs: int, **options: Any) -> list[RunRecord]:
    """``runs`` records of one scenario, the first ``successes`` of them successes."""
    return [record(index < successes, run=index + 1, runs=runs, **options) for index in range(runs)]
