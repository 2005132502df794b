"""The results directories ``ooda view`` shows: their sessions — one per results file —
each read as it grows, a running session told from one that ended, and an ended
session whose measurement is incomplete marked with the command that would finish it.

A session holds an exclusive ``flock`` on its results file while it runs
(:class:`~pytest_ooda.results.log.ResultsLog`), released when it ends or dies: a file
whose lock can be taken was written by a session that is over. Each file is read from
where the last look stopped (:class:`~pytest_ooda.results.reading.ResultsFile`), its
records kept as summaries with the place of their lines, so a page of one run reads
that run's line again and a 10,000-run log is read once, not at every refresh.

A measurement is incomplete when a scenario (and variant) of its series has fewer runs
than it planned (``run k of N``) in every file of the series together, or a run was
interrupted; a sharded session holds only its share and is never called incomplete, nor
is a scenario whose early-stopping gate settled.
"""

from __future__ import annotations

import fcntl
import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import OodaError
from pytest_ooda.results import ResultsFile, read_record

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from pytest_ooda.errors import ResultsWarning
    from pytest_ooda.results import FragmentHash, RecordSource, Results, RunRecord

__all__ = [
    "Gap",
    "ResultsIndex",
    "Session",
    "gaps",
    "is_running",
    "resume_command",
    "unfinished",
]


def is_running(path: Path) -> bool:
    """Whether a session still writes ``path`` (it holds the file's lock)."""
    try:
        with open(path, "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            except OSError:
                return False
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


@dataclass(frozen=True)
class Gap:
    """A scenario (and variant) of a series with fewer runs than it planned."""

    procedure: str
    scenario: str
    variant: str | None
    have: int
    planned: int

    @property
    def label(self) -> str:
        name = f"{self.scenario}@{self.variant}" if self.variant else self.scenario
        return f"{self.procedure}/{name}"


def gaps(records: Iterable[RunRecord]) -> list[Gap]:
    """The incomplete scenarios of one series' records (see the module docstring)."""
    from pytest_ooda.stats import early_verdict, summarize

    done: dict[tuple[str, str, str | None], set[int]] = {}
    planned: dict[tuple[str, str, str | None], int] = {}
    interrupted: set[tuple[str, str, str | None]] = set()
    given = list(records)
    for record in given:
        if record.head.shard is not None and not record.head.shard.endswith("/1"):
            return []
        key = (record.head.procedure, record.head.scenario, record.head.variant)
        done.setdefault(key, set()).add(record.head.run)
        planned[key] = max(planned.get(key, 0), record.head.runs)
        if record.status == "interrupted":
            interrupted.add(key)
    settled = {
        (item.procedure, item.scenario)
        for item in summarize(given)
        if early_verdict(item) is not None
    }
    found = []
    for key in sorted(done, key=lambda item: (item[0], item[1], item[2] or "")):
        procedure, scenario, variant = key
        if (procedure, f"{scenario}@{variant}" if variant else scenario) in settled:
            continue
        if len(done[key]) < planned[key] or key in interrupted:
            found.append(Gap(procedure, scenario, variant, len(done[key]), planned[key]))
    return found


def resume_command(records: Sequence[RunRecord], results_dir: str) -> str:
    """The ``pytest`` command that goes on with the measurement of ``records``: the
    procedures they ran, their run count when all agree, into the same directory."""
    nodes = sorted(
        {record.head.nodeid.split("::live[", 1)[0] for record in records if record.head.nodeid}
    )
    counts = {record.head.runs for record in records}
    words = ["pytest", "-m", "live", *nodes]
    if len(counts) == 1:
        words.append(f"--ooda-repeat={counts.pop()}")
    words += [f"--ooda-results={results_dir}", "--ooda-resume"]
    return shlex.join(words)


@dataclass
class Session:
    """One results file: a session's runs, read as it grows."""

    key: str
    root: Path
    path: Path
    shown_root: str
    file: ResultsFile
    records: list[RunRecord] = field(default_factory=list)
    #: By run id: each record, and where its line is.
    runs: dict[str, RunRecord] = field(default_factory=dict)
    sources: dict[str, RecordSource] = field(default_factory=dict)
    warnings: list[ResultsWarning] = field(default_factory=list)
    error: str | None = None
    running: bool = False

    @property
    def stamp(self) -> str:
        """The session's start stamp (its file's stem when no record names it)."""
        first = self.records[0].session if self.records else None
        return first or self.path.stem.split("-", 1)[0]

    @property
    def series(self) -> str:
        first = self.records[0] if self.records else None
        return (first.series or first.session or self.key) if first is not None else self.key

    @property
    def started(self) -> str:
        return min((record.started_at for record in self.records), default="")

    @property
    def results_dir(self) -> str:
        """The directory holding the file, as the viewer was given it."""
        relative = self.path.parent.relative_to(self.root)
        shown = Path(self.shown_root) / relative
        return shown.as_posix()

    def refresh(self) -> bool:
        """Read what the session appended; whether anything changed."""
        running = is_running(self.path)
        changed = running != self.running
        self.running = running
        if self.error is not None:
            return changed
        try:
            found, warnings = self.file.read(final=not running)
        except OodaError as exc:
            self.error = str(exc)
            return True
        self.warnings.extend(warnings)
        for source, record in found:
            if record.id in self.runs:
                continue
            self.sources[record.id] = source
            self.runs[record.id] = record
            self.records.append(record)
        return changed or bool(found) or bool(warnings)


class ResultsIndex:
    """Every session under ``roots``, refreshed on demand (thread-safe: the server
    answers requests on threads). A refresh holds :attr:`lock` and only adds: a new
    session replaces the :attr:`sessions` mapping, a session's new runs are appended, so
    a page renders from what it reads without the lock."""

    def __init__(self, roots: Sequence[str | Path]) -> None:
        self.roots = [(Path(root).resolve(), str(root)) for root in roots]
        self.sessions: dict[str, Session] = {}
        #: Counts changes: a page polls it to know when to reload.
        self.version = 0
        self.lock = threading.RLock()
        self._shared: dict[object, tuple[FragmentHash, ...]] = {}

    def _key(self, position: int, root: Path, path: Path) -> str:
        relative = path.relative_to(root).with_suffix("").as_posix()
        return relative if len(self.roots) == 1 else f"{position}/{relative}"

    def refresh(self) -> int:
        """Find new files, read what every session appended; the version after."""
        with self.lock:
            changed = False
            for position, (root, shown) in enumerate(self.roots, start=1):
                if not root.is_dir():
                    continue
                for path in sorted(root.rglob("*.jsonl")):
                    resolved = path.resolve()
                    if not resolved.is_file() or not resolved.is_relative_to(root):
                        continue
                    key = self._key(position, root, path)
                    if key not in self.sessions:
                        reader = ResultsFile(path, summary=True, shared=self._shared)
                        found = Session(key, root, path, shown, reader)
                        # A new mapping, not an insertion: pages rendering meanwhile
                        # iterate the one they took.
                        self.sessions = {**self.sessions, key: found}
                        changed = True
            for session in self.sessions.values():
                changed = session.refresh() or changed
            if changed:
                self.version += 1
            return self.version

    def ordered(self) -> list[Session]:
        """The sessions, newest first."""
        return sorted(
            self.sessions.values(), key=lambda item: (item.started, item.key), reverse=True
        )

    @property
    def running(self) -> bool:
        return any(session.running for session in self.sessions.values())

    def series_records(self, series: str) -> list[RunRecord]:
        return [
            record
            for session in self.sessions.values()
            if session.series == series
            for record in session.records
        ]

    def continued_by(self, session: Session) -> Session | None:
        """A later session of the same series (it resumed this one)."""
        later = [
            other
            for other in self.sessions.values()
            if other is not session
            and other.series == session.series
            and other.started > session.started
        ]
        return max(later, key=lambda item: item.started, default=None)

    def gaps(self, session: Session) -> list[Gap]:
        """What the measurement ``session`` belongs to still lacks, when ``session`` is its
        latest and has ended (``[]`` otherwise)."""
        if session.running or not session.records or self.continued_by(session) is not None:
            return []
        return gaps(self.series_records(session.series))

    def find_run(self, run_id: str) -> tuple[Session, RunRecord] | None:
        for session in self.sessions.values():
            record = session.runs.get(run_id)
            if record is not None:
                return session, record
        return None

    def whole(self, session: Session, record: RunRecord) -> RunRecord:
        """``record`` read whole (its transcript too) from its line."""
        return read_record(session.sources[record.id])


def unfinished(results: Results) -> list[dict[str, str]]:
    """The incomplete measurements among ``results`` (``text`` and the ``command`` that
    goes on), per series whose files no running session still writes."""
    by_series: dict[str, list[RunRecord]] = {}
    for record in results.records:
        # A record without a session (written by hand) belongs to its file's.
        series = record.series or record.session or results.sources[record.id].file.as_posix()
        by_series.setdefault(series, []).append(record)
    found = []
    for series, records in sorted(by_series.items()):
        files = {
            results.sources[record.id].file for record in records if record.id in results.sources
        }
        if not files or any(is_running(path) for path in files):
            continue
        missing = gaps(records)
        if not missing:
            continue
        latest = max(records, key=lambda record: record.finished_at)
        directory = results.sources[latest.id].file.parent.as_posix()
        text = f"series {series}: " + ", ".join(
            f"{gap.label} has {gap.have} of {gap.planned} runs" for gap in missing
        )
        found.append({"text": text, "command": resume_command(records, directory)})
    return found
