"""What the plugin's features share, under ``pytest.StashKey``s: the collection's state
(the files it collected, the counts, the replays' scratch directories), the stash keys
of items, and what a live item's report carries to the process that measures the
session. A leaf of the plugin package: the features import it, it imports none of them.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_ooda.config import BrokenProcedure, Config, Procedure
    from pytest_ooda.live import RunPlan
    from pytest_ooda.results import RunRecord

#: Where a prompt item keeps its snapshots when the file's own place won't do (the
#: packaged built-ins, outside the rootdir).
SNAPSHOT_DIR = pytest.StashKey[Path]()
#: The prompt layout a prompt item composes (its snapshot file's name says which).
PROMPT_FORMAT = pytest.StashKey[str]()
#: Set on an item whose skip is to be reported at the item's file, not at our code.
SKIP_AT_ITEM = pytest.StashKey[bool]()
#: The attribute of a live item's call report that carries its :class:`LiveReport`.
LIVE_ATTRIBUTE = "ooda_run"
#: Node id prefix of the packaged built-ins collected from outside the rootdir.
BUILTIN_NODEID = "ooda-builtin"
#: Under ``<rootdir>/__snapshots__/``: the packaged built-ins' snapshots (``--ooda-builtin``).
BUILTIN_SNAPSHOTS = "ooda-builtin"


@dataclass(frozen=True)
class LiveReport:
    """What a live item's call report carries to the process that measures the session
    (the only one, or xdist's controller): the run's results record as it was built,
    the scenario file it was recorded to, or the earlier run a resumed item stands for.

    In one process it travels as it is. Between xdist workers and the controller, which
    exchange reports as JSON, :meth:`to_json` and :meth:`from_json` are its one
    serialisation (the record's own wire form, a results-log line's), applied by the
    live-items feature's ``pytest_report_to_serializable`` and the results log.
    """

    record: RunRecord | None = None
    recorded: str | None = None
    resumed: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record.to_json() if self.record is not None else None,
            "recorded": self.recorded,
            "resumed": self.resumed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LiveReport:
        """Made by this pytest-ooda a moment ago, on a worker: a malformed record is a
        bug, raised as the ``ResultsError`` it is."""
        from pytest_ooda.results import decode_record

        record = data.get("record")
        return cls(
            record=decode_record(record) if record is not None else None,
            recorded=data.get("recorded"),
            resumed=data.get("resumed"),
        )


LIVE_REPORT = pytest.StashKey[LiveReport]()
#: A live item's plan, made once: by a cluster's window (``--ooda-executor``) or by the
#: item itself.
PLANNED: pytest.StashKey[RunPlan] = pytest.StashKey()


@dataclass
class PluginState:
    """What collection keeps for the session (``config.stash[PLUGIN_STATE]``, made by
    the first procedure file collected)."""

    collected_files: set[Path] = field(default_factory=set)
    #: Collected config files that failed to load: their snapshots are left alone.
    broken_files: set[Path] = field(default_factory=set)
    counts: dict[str, int] = field(
        default_factory=lambda: {"files": 0, "procedures": 0, "scenarios": 0}
    )
    _scratch: Path | None = None
    _scratch_dirs: dict[str, Path] = field(default_factory=dict)

    def empty_dir(self) -> Path:
        """An empty directory for replays that touch no files (removed by ``close``)."""
        return self._scratch_dir("empty")

    def work_dir(self) -> Path:
        """The directory replays with files run in, emptied before each (see ``live``)."""
        return self._scratch_dir("work")

    def _scratch_dir(self, name: str) -> Path:
        # Asked for by every replay item: made once, not once per item.
        made = self._scratch_dirs.get(name)
        if made is not None:
            return made
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="ooda-replay-"))
        path = self._scratch_dirs[name] = self._scratch / name
        path.mkdir(exist_ok=True)
        return path

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
            self._scratch_dirs.clear()


PLUGIN_STATE = pytest.StashKey[PluginState]()


@dataclass(frozen=True)
class LoadedFile:
    """A collected config file: its merged config and the procedures it declares, the
    ones that load and the ones that do not (each fails alone)."""

    path: Path
    config: Config
    declared: tuple[Procedure, ...]
    broken: tuple[BrokenProcedure, ...] = ()

    @property
    def first_name(self) -> str | None:
        """The procedure declared first in the file, loading or not."""
        entries = [(p.location.line, p.name) for p in self.declared]
        entries += [(b.location.line, b.name) for b in self.broken]
        return min(entries)[1] if entries else None
