"""Reading results logs: streamed a line at a time, never a whole file in memory.

:func:`read_results` reads any number of files and directories (every ``*.jsonl`` under
them), merges them, drops a record seen twice (the same ``id``: a file passed twice, or
copied into two artifacts) and skips an unfinished last line (a session killed
mid-write) with a warning; anything else that is not a record is a ``ResultsError`` at
its file, line and column.

A log of 10,000 runs with transcripts is some 400 MB, nearly all of it transcripts that
only a run's own page shows. With ``summary=True`` each record is kept as tables need
it (:func:`~.decode.decode_record` with ``summary``) together with where its line is
(:class:`RecordSource`), and :func:`read_record` reads that one line again when a page
shows the run. :class:`ResultsFile` remembers how far it has read, so ``ooda view``
reads only what a running session appended since it last looked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import ResultsError, ResultsNestingError, ResultsWarning
from pytest_ooda.reader import MAX_DEPTH
from pytest_ooda.results.decode import RecordReader, decode_record

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda.results.schema import FragmentHash, RunRecord

__all__ = [
    "RecordSource",
    "Results",
    "ResultsFile",
    "read_record",
    "read_results",
    "results_files",
]


#: Bytes read from a results file at a time.
_BUFFER = 1 << 20
#: A surrogate escaped in JSON text (``\\ud800``): a pair is one character, but one
#: alone is no text, and nothing holding it can be printed or written.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


@dataclass(frozen=True, slots=True)
class RecordSource:
    """Where a record's line is: its file, line number, and byte offset and length."""

    file: Path
    line: int
    offset: int
    length: int


def _parse(raw: bytes, file: str, line: int) -> Any:
    """One line's JSON, or a ``ResultsError`` at its line (and column)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ResultsError("not a results file: not UTF-8 text", file=file, line=line) from None
    try:
        value = json.loads(text)
        if _SURROGATE_ESCAPE.search(text):
            # Each lone surrogate becomes U+FFFD, as undecodable bytes do elsewhere.
            fixed = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
            value = json.loads(fixed.decode("utf-8", "replace"))
        return value
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"not a results record: {exc.msg}", file=file, line=line, column=exc.colno
        ) from None
    except RecursionError:
        # Python's parser recurses once per level: this line nests far past MAX_DEPTH.
        raise ResultsNestingError(
            f"the record nests deeper than {MAX_DEPTH} levels", file=file, line=line
        ) from None
    except ValueError as exc:
        # An integer longer than Python reads (4,300 digits).
        message = str(exc).split(";")[0]
        raise ResultsError(f"not a results record: {message}", file=file, line=line) from None


def _is_json(raw: bytes) -> bool:
    """Whether a line without its newline is whole (a file written by hand), not cut."""
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


def read_record(source: RecordSource) -> RunRecord:
    """The whole record at ``source`` (transcript included), read again from its file."""
    name = str(source.file)
    try:
        with open(source.file, "rb") as handle:
            handle.seek(source.offset)
            raw = handle.read(source.length)
    except OSError as exc:
        raise ResultsError(f"cannot read results file: {exc.strerror or exc}", file=name) from None
    data = _parse(raw, name, source.line)
    return decode_record(data, file=name, line=source.line)


class ResultsFile:
    """One results file, read from where the last :meth:`read` stopped.

    ``summary``: keep records as tables need them (see :mod:`.reading`). ``shared``: a
    dict several files' readers share, so a fragment list every record repeats is kept
    once across them.
    """

    def __init__(
        self,
        path: Path,
        *,
        summary: bool = False,
        shared: dict[Any, tuple[FragmentHash, ...]] | None = None,
    ) -> None:
        self.path = path
        self.summary = summary
        #: Bytes and lines read so far.
        self.offset = 0
        self.lines = 0
        self._shared: dict[Any, tuple[FragmentHash, ...]] = shared if shared is not None else {}

    def read(
        self, *, final: bool = True
    ) -> tuple[list[tuple[RecordSource, RunRecord]], list[ResultsWarning]]:
        """The records of the lines completed since the last read, and warnings.

        A last line without its newline is a record still being written while the file
        is not ``final`` (left for the next read); in a final file it is what a killed
        session left, skipped with a warning — unless it is a whole record (a file
        written by hand without the last newline).
        """
        name = str(self.path)
        reader = RecordReader(name, None, summary=self.summary, shared=self._shared)
        found: list[tuple[RecordSource, RunRecord]] = []
        warnings: list[ResultsWarning] = []
        try:
            # A buffer larger than a line: a record with its transcript is tens of KB.
            with open(self.path, "rb", buffering=_BUFFER) as handle:
                handle.seek(self.offset)
                for raw in handle:
                    if not raw.endswith(b"\n") and not final:
                        break
                    offset, number = self.offset, self.lines + 1
                    self.offset += len(raw)
                    self.lines = number
                    if raw.isspace():
                        continue
                    try:
                        data = _parse(raw, name, number)
                        reader.line = number
                        record = reader.record(data)
                    except ResultsNestingError as error:
                        # Nothing a session writes nests that deep: a damaged or planted
                        # line, left out so that the rest of the log still counts.
                        warnings.append(
                            ResultsWarning(
                                f"{error.message}; the line is left out", file=name, line=number
                            )
                        )
                        continue
                    except ResultsError:
                        if raw.endswith(b"\n") or _is_json(raw):
                            raise
                        warnings.append(
                            ResultsWarning(
                                "the last record is incomplete (the session was interrupted "
                                "while writing it) and is left out",
                                file=name,
                                line=number,
                            )
                        )
                        continue
                    found.append((RecordSource(self.path, number, offset, len(raw)), record))
        except OSError as exc:
            raise ResultsError(
                f"cannot read results file: {exc.strerror or exc}", file=name
            ) from None
        return found, warnings


@dataclass(frozen=True)
class Results:
    """Records merged from ``files`` (in file order), and what reading left out.

    ``summary``: the records were read as summaries (:mod:`.reading`); ``sources`` says
    where each one's line is, by record id, and :meth:`whole` reads a record whole.
    """

    records: tuple[RunRecord, ...]
    files: tuple[Path, ...]
    warnings: tuple[ResultsWarning, ...] = ()
    sources: Mapping[str, RecordSource] = field(default_factory=dict)
    summary: bool = False

    def whole(self, record: RunRecord) -> RunRecord:
        """``record`` with every field (its transcript too)."""
        if not self.summary:
            return record
        return read_record(self.sources[record.id])


def results_files(paths: Iterable[str | Path]) -> list[Path]:
    """``paths`` with each directory replaced by the ``*.jsonl`` files under it (at any
    depth: CI downloads each shard's artifact into a folder of its own)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
            if not inside:
                raise ResultsError(f"no results files (*.jsonl) under {path}")
            found.extend(inside)
        elif path.exists():
            found.append(path)
        else:
            raise ResultsError(
                f"results file not found: {path}",
                hint="pytest -m live writes them to .ooda/results/ (see --ooda-results)",
            )
    return found


def read_results(paths: Sequence[str | Path], *, summary: bool = False) -> Results:
    """Read and merge the results in ``paths`` (files, or directories of ``*.jsonl``);
    ``summary``: keep each record as tables need it (see :mod:`.reading`)."""
    files = results_files(paths)
    if not files:
        raise ResultsError("no results files given")
    records: list[RunRecord] = []
    warnings: list[ResultsWarning] = []
    sources: dict[str, RecordSource] = {}
    shared: dict[Any, tuple[FragmentHash, ...]] = {}
    duplicates = 0
    for path in files:
        found, said = ResultsFile(path, summary=summary, shared=shared).read()
        warnings.extend(said)
        for source, record in found:
            if record.id in sources:
                duplicates += 1
                continue
            sources[record.id] = source
            records.append(record)
    if duplicates:
        warnings.append(
            ResultsWarning(
                f"{duplicates} record(s) appear more than once (same id); each run is counted once",
                hint="was a file given twice, or copied into two folders?",
            )
        )
    return Results(tuple(records), tuple(files), tuple(warnings), sources, summary)
