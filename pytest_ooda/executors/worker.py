"""What a worker runs: one attempt of one live run (:func:`run_attempt`), with the same
library code as a local run (:func:`pytest_ooda.live.run_live`: the agent, its sandbox,
the verification commands, the judge). (A run whose workers were all lost is recorded
by the controller: :func:`pytest_ooda.live.unmade_run`.)

On the worker, the plan made on the controller is moved onto the worker's copy of the
project (unpacked once per machine from the shipped source) and of pytest-ooda's
built-in procedures; what the run hands back is moved back, so the controller writes
the recording to its own scenario file. The worker's own environment is the agent's:
nothing of the controller's environment travels with a plan.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import OodaError, OodaWarning
from pytest_ooda.executors.base import NotRun, Raised, Ran
from pytest_ooda.executors.source import cache_dir, rebase, unpack_source

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from pytest_ooda.executors.base import Ledger
    from pytest_ooda.executors.source import Source
    from pytest_ooda.live import LiveRun, RunPlan

__all__ = ["Job", "Slot", "job_for", "run_attempt"]


@dataclass(frozen=True)
class Job:
    """What the controller submits for a run: its plan, and where the controller's
    pytest-ooda keeps its built-in procedures (a worker's are elsewhere)."""

    plan: RunPlan
    builtin: Path


def job_for(plan: RunPlan) -> Job:
    """What the controller submits for ``plan``: the plan as it travels
    (:meth:`RunPlan.travelling`: its config cut to what a run reads of it), and where
    this pytest-ooda keeps its built-in procedures."""
    from pytest_ooda.fragments import builtin_root

    return Job(plan.travelling(), builtin_root())


@dataclass(frozen=True)
class Slot:
    """The run's ``--ooda-max-concurrent`` slot, held across the cluster: how long it
    took to get (the record's ``queued_s``)."""

    waited: float


class _NotWanted(Exception):
    """The ledger refused the attempt (cancelled, or begun before on a lost worker)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def run_attempt(ticket: str, job: Job, source: Source, ledger: Ledger) -> Ran | NotRun | Raised:
    """Attempt ``ticket`` of ``job``'s run, on this worker."""
    from pytest_ooda.fragments import builtin_root
    from pytest_ooda.live import run_live

    where = ledger.where()
    plan = job.plan
    capped = plan.max_concurrent is not None
    if not capped:
        # Nothing to wait for: claim the attempt before making its workspace.
        why = ledger.begin(ticket, where)
        if why is not None:
            return NotRun(why, cancelled=why == "cancelled")
    root = unpack_source(source.digest, source.data)
    there = {plan.root: root, job.builtin: builtin_root()}
    here = {new: old for old, new in there.items()}
    local = _on_worker(rebase(plan, there))

    @contextlib.contextmanager
    def slot(run: RunPlan) -> Iterator[Slot | None]:
        if not capped:
            yield None
            return
        from pytest_ooda.results import ai_identity

        identity = ai_identity(run.settings)
        agent = identity.command or identity.api or "ai"
        assert run.max_concurrent is not None
        with ledger.hold(agent, run.max_concurrent, ticket) as waited:
            # Claimed only once it holds its slot: until then, early stopping may still
            # cancel it.
            why = ledger.begin(ticket, where)
            if why is not None:
                raise _NotWanted(why)
            yield Slot(waited)

    try:
        done = run_live(local, worker=where, slot=slot)
    except _NotWanted as refused:
        return NotRun(refused.reason, cancelled=refused.reason == "cancelled")
    except OodaError as error:
        return Raised(_error_back(error, here), where)
    return Ran(_back(done, here), where)


def _on_worker(plan: RunPlan) -> RunPlan:
    """The plan as it runs here: the run's temporary directory and the judge's cache on
    this machine; no session directory, no results directory to make."""
    judge_cache = cache_dir() / "judge" if plan.judge_cache is not None else None
    return replace(
        plan,
        runs_dir=Path(tempfile.gettempdir()),
        slots_dir=None,
        judge_cache=judge_cache,
        ignore_dir=None,
    )


def _moved(text: str | None, moves: Mapping[Path, Path]) -> str | None:
    if text is None:
        return None
    return str(rebase(Path(text), moves)) if os.path.isabs(text) else text


def _error_back(error: OodaError, moves: Mapping[Path, Path]) -> OodaError:
    moved = _moved(error.file, moves)
    return error if moved == error.file else error.relocated(file=moved)


def _warning_back(warning: OodaWarning, moves: Mapping[Path, Path]) -> OodaWarning:
    moved = _moved(warning.file, moves)
    if moved == warning.file:
        return warning
    return type(warning)(
        warning.message, file=moved, line=warning.line, column=warning.column, hint=warning.hint
    )


def _back(done: LiveRun, moves: Mapping[Path, Path]) -> LiveRun:
    """What the run made, with the paths the controller reads (the recording's file,
    the warnings' files) moved back onto the controller's project."""
    recording = rebase(done.recording, moves) if done.recording is not None else None
    warnings = tuple(_warning_back(warning, moves) for warning in done.warnings)
    return replace(done, recording=recording, warnings=warnings)
