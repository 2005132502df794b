"""Results records for the results, stats, report and view tests, as a session logs them."""

from __future__ import annotations

import itertools
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from pytest_ooda.backends import Usage
from pytest_ooda.results import FragmentHash, IterationEntry, RecordHead, RunRecord, SessionStamp

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
        head=RecordHead(
            procedure=procedure,
            scenario=scenario,
            run=run,
            runs=runs,
            fragments=(FragmentHash("observe", 0, "prompts/look.md", fragment),),
            aggregate_expect=gates,
            stamp=_stamp(session, series),
        ),
        status=ended,
        outcome=outcome or ("success" if success else "failure"),  # type: ignore[arg-type]
        elapsed_s=elapsed,
        started_at=finished_at,
        finished_at=finished_at,
        prompt_sha256=prompt,
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
        error_reason=error_reason,
    )


def _stamp(
    session: str | None,
    series: str | None,
    git_commit: str | None = None,
    git_dirty: bool | None = None,
) -> SessionStamp | None:
    if session is None and series is None:
        return None
    return SessionStamp(session or series or "", series or session or "", git_commit, git_dirty)


#: The fields of a record's head (``procedure``, ``variant`` …), and those of the
#: head's session stamp.
HEAD = frozenset(item.name for item in fields(RecordHead))
STAMP = ("session", "series", "git_commit", "git_dirty")


def changed(item: RunRecord, **changes: Any) -> RunRecord:
    """``item`` with ``changes``, each made where the record keeps it: in its head
    (``variant=``, ``expect=`` …; ``session=``, ``series=``, ``git_commit=`` in the
    head's stamp, which one is made for when there was none) or its own
    (``transcript=`` …)."""
    head = {key: value for key, value in changes.items() if key in HEAD}
    if any(key in changes for key in STAMP):
        stamp = item.head.stamp
        now = {key: getattr(stamp, key) if stamp else None for key in STAMP}
        now.update({key: changes[key] for key in STAMP if key in changes})
        head["stamp"] = _stamp(
            now["session"] or "session", now["series"], now["git_commit"], now["git_dirty"]
        )
    own = {key: value for key, value in changes.items() if key not in HEAD | set(STAMP)}
    return replace(item, head=replace(item.head, **head), **own)


def write(path: Path, records: Iterable[RunRecord]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(item.to_line() for item in records), encoding="ascii")
    return path


def sample(successes: int, runs: int, **options: Any) -> list[RunRecord]:
    """``runs`` records of one scenario, the first ``successes`` of them successes."""
    return [record(index < successes, run=index + 1, runs=runs, **options) for index in range(runs)]
