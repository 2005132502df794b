"""Writing the results log: one new ``<session>.jsonl`` file per session (named by its
:class:`~.session.SessionStamp`), one line per run, appended as each run finishes.

One process writes it — the pytest process, or the pytest-xdist controller, which
receives every worker's records with its reports — so lines never interleave and no
lock is needed. Records arrive complete: the session's stamp is decided when it starts
and travels with each run's plan, so the writer writes them as they are. A session's
name is its start time and a random part, so sessions started in the same second (on
one machine or several sharing a directory) never share one. The file is created
exclusively (an existing file is never touched: the unlikely second file of the same
name gets ``<session>-2.jsonl``) and each record is one ``write`` of a whole line, so a
session killed at any point leaves whole records plus at most one unfinished last line,
which the reader skips with a warning. While the session runs it holds an exclusive
``flock`` on its file (released when the file is closed, or the process dies): ``ooda
view`` tells a running session from one that ended.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.results.schema import RunRecord

__all__ = ["ResultsLog"]


class ResultsLog:
    """Appends records to ``<directory>/<session>.jsonl``, created with the first one.

    ``ignore_dir``: a directory to create with a ``.gitignore`` of ``*`` when it does not
    exist yet (the default ``.ooda/``), as pytest does for its cache, so results never
    end up in a commit by accident.
    """

    def __init__(self, directory: Path, *, session: str, ignore_dir: Path | None = None) -> None:
        self.directory = directory
        self.session = session
        self.ignore_dir = ignore_dir
        self.path: Path | None = None
        self.count = 0
        self._fd: int | None = None

    def _open(self) -> int:
        if self.ignore_dir is not None and not self.ignore_dir.exists():
            self.ignore_dir.mkdir(parents=True, exist_ok=True)
            (self.ignore_dir / ".gitignore").write_text(
                "# written by pytest-ooda: live-run results stay out of git\n*\n",
                encoding="utf-8",
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        attempt = 1
        while True:
            suffix = "" if attempt == 1 else f"-{attempt}"
            path = self.directory / f"{self.session}{suffix}.jsonl"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            except FileExistsError:
                attempt += 1
                continue
            # Readers see a running session by this lock; a filesystem without locks
            # only loses that (the session shows as ended).
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.path = path
            return fd

    def append(self, record: RunRecord) -> Path:
        """Write ``record`` as one line; returns the file's path."""
        if self._fd is None:
            self._fd = self._open()
        data = memoryview(record.to_line().encode("ascii"))
        while data:
            written = os.write(self._fd, data)
            data = data[written:]
        self.count += 1
        assert self.path is not None
        return self.path

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
