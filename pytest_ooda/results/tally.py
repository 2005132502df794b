"""Shared tallies of a session's finished runs, per scenario, for early stopping under
pytest-xdist: the process that receives every report (the controller, or the only
process) appends one line per finished run; every worker reads the scenario's file
before starting another of its runs, to see whether the verdict is settled.

One short line per ``write`` on a file opened for appending: POSIX keeps such writes
whole, and there is only one writer anyway.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["add_tally", "tally_counts", "tally_path"]


def tally_path(directory: Path, procedure: str, scenario: str) -> Path:
    key = hashlib.sha256(f"{procedure}/{scenario}".encode()).hexdigest()[:20]
    return directory / f"{key}.tally"


def add_tally(directory: Path, procedure: str, scenario: str, outcome: str) -> None:
    """Count one finished run of ``procedure/scenario`` (``success``, ``failure`` or
    ``error``)."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(
        tally_path(directory, procedure, scenario), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
    )
    try:
        os.write(fd, f"{outcome}\n".encode("ascii"))
    finally:
        os.close(fd)


def tally_counts(directory: Path, procedure: str, scenario: str) -> Counter[str]:
    """The outcomes counted so far (empty when none)."""
    try:
        text = tally_path(directory, procedure, scenario).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return Counter()
    # A line still being written has no newline yet: leave it for the next read.
    complete = text[: text.rfind("\n") + 1]
    return Counter(line for line in complete.splitlines() if line)
