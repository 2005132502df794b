"""The directory a session's processes share for its live runs: early stopping's
tallies, ``--ooda-max-concurrent``'s slots, each run's own files and the marker a
crashed xdist worker leaves, and the notes said once per session.

It lives in the system's temporary directory: the controller (or the only process)
makes it and hands its path and the session's stamp to every xdist worker
(``workerinput``), and removes it at the end. A note meant once per session (the
unattended-agent sandbox note) is said by the first process to claim it here, so
``-n 2`` says it once, not per worker.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_ooda.live import RunPlan
    from pytest_ooda.results import RunRecord, SessionStamp

#: The ``workerinput`` keys carrying the session directory and the session's stamp
#: to xdist workers.
WORKER_INPUT = "ooda_session_dir"
WORKER_STAMP = "ooda_session_stamp"


@dataclass
class SessionDir:
    """This process's view of the shared directory (``config.stash[SESSION_DIR]``)."""

    directory: Path
    owner: bool
    #: What every record of the session says of it: the controller's (the only
    #: process's), handed to each xdist worker.
    stamp: SessionStamp | None = None
    #: Notes this process has met (said here or by another process already).
    said: set[str] = field(default_factory=set)

    @property
    def tallies(self) -> Path:
        return self.directory / "tallies"

    @property
    def slots(self) -> Path:
        return self.directory / "slots"

    @property
    def runs(self) -> Path:
        return self.directory / "runs"

    @property
    def notes(self) -> Path:
        return self.directory / "said"

    def close(self) -> str | None:
        """Remove the session's directory (its owner's); what stays behind, named (a
        file an agent made undeletable in a run's workspace), else ``None``."""
        if not self.owner:
            return None
        from pytest_ooda.workspace import remove_tree

        problem = remove_tree(self.directory)
        if problem is None:
            return None
        return f"the session directory {self.directory} was not removed entirely: {problem}"


SESSION_DIR = pytest.StashKey[SessionDir]()


def session_dir(config: pytest.Config) -> SessionDir:
    """This process's session directory: the controller's under xdist, else one made
    here (and removed at the end)."""
    found = config.stash.get(SESSION_DIR, None)
    if found is not None:
        return found
    workerinput = getattr(config, "workerinput", {})
    given = workerinput.get(WORKER_INPUT)
    if given:
        from pytest_ooda.results import SessionStamp

        stamp = workerinput.get(WORKER_STAMP)
        state = SessionDir(
            Path(given),
            owner=False,
            stamp=SessionStamp.from_json(stamp) if stamp is not None else None,
        )
    else:
        state = SessionDir(Path(tempfile.mkdtemp(prefix="ooda-session-")), owner=True)
    config.stash[SESSION_DIR] = state
    return state


def run_key(nodeid: str) -> str:
    return hashlib.sha256(nodeid.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def run_dir(config: pytest.Config, nodeid: str) -> Path:
    """Where the run of item ``nodeid`` makes its files: in the session directory, so
    the controller finds and removes what a crashed worker left."""
    return session_dir(config).runs / run_key(nodeid)


def first_said(config: pytest.Config, text: str) -> bool:
    """Whether ``text``, a note said once per session, is said now for the first time:
    the first process to create its marker in the shared session directory says it (an
    exclusive create, so of two xdist workers that reach it together only one does)."""
    state = session_dir(config)
    if text in state.said:
        return False
    state.said.add(text)
    state.notes.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    try:
        os.close(os.open(state.notes / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


# --------------------------------------------------------------------------- crashes


def leave_marker(config: pytest.Config, nodeid: str, plan: RunPlan, worker: str) -> None:
    """On an xdist worker, before its run starts: the run's plan as it travels and when
    it started, for the controller, which alone outlives the worker's crash."""
    state = session_dir(config)
    state.runs.mkdir(parents=True, exist_ok=True)
    held = pickle.dumps((plan.travelling(), time.time(), worker))
    (state.runs / f"{run_key(nodeid)}.plan").write_bytes(held)


def clear_marker(config: pytest.Config, nodeid: str) -> None:
    """The run of item ``nodeid`` ended: its marker is not needed."""
    (session_dir(config).runs / f"{run_key(nodeid)}.plan").unlink(missing_ok=True)


def crashed_run(state: SessionDir, nodeid: str, message: str) -> RunRecord | None:
    """The results record of a run whose worker died, built from the plan its marker
    holds by the one record builder, and its directory removed; ``None`` when the item
    was no live run of ours."""
    from pytest_ooda.live import unmade_run

    key = run_key(nodeid)
    path = state.runs / f"{key}.plan"
    try:
        plan, started, worker = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError):
        return None
    shutil.rmtree(state.runs / key, ignore_errors=True)
    path.unlink(missing_ok=True)
    return unmade_run(plan, f"worker-crashed: {message}", started=started, worker=worker).record
