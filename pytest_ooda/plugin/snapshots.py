"""Prompt snapshots: a syrupy extension storing each composed prompt as its own ``.md``,
syrupy's default extension kept off our files, and (``--snapshot-update``) the snapshot
directories deletions left empty removed.

Layout: ``<config dir>/__snapshots__/<config stem>/<procedure>/<phase>.md`` (the
``__snapshots__`` name follows ``--snapshot-dirname``). The assembled prompt in rooda's
layout is ``assembled.rooda.md``, so a snapshot file says which format made it (the
phases compose the same in both). syrupy's own single-file
extension nests one level (``__snapshots__/<test file>/<test>.ext``); ours nests two,
so location, discovery, ownership and deletion are overridden here. Mismatches are
explained by :func:`annotated_diff`, which names the fragment files behind each hunk.
"""

from __future__ import annotations

import functools
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from syrupy.data import Snapshot, SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from pytest_ooda._types import PROMPT_PARTS
from pytest_ooda._util import atomic_write_text
from pytest_ooda.plugin.state import PLUGIN_STATE, PROMPT_FORMAT, SNAPSHOT_DIR

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation
    from syrupy.types import (
        PropertyFilter,
        PropertyMatcher,
        SerializableData,
        SerializedData,
        SnapshotIndex,
    )


#: Snapshot file stems, in the order the prompt items are collected.
PROMPT_PHASES = PROMPT_PARTS

_ITEM_PREFIX = "prompt["


#: Characters no file name may hold on some platform we support.
_UNSAFE_IN_NAMES = frozenset('\\/?*:|"<>')


@functools.lru_cache(maxsize=4096)
def safe_name(name: str) -> str:
    """A procedure name as a directory name: path separators, characters Windows
    refuses and control/format/unassigned code points (Unicode category ``C*``) dropped.

    The same rule syrupy applies to its own single-file names, so directories made by
    earlier versions keep their names. Cached: each prompt item asks several times.
    """
    kept = "".join(
        char
        for char in name
        if char not in _UNSAFE_IN_NAMES and not unicodedata.category(char).startswith("C")
    )
    return kept or "_"


def snapshot_stem(phase: str, prompt_format: str) -> str:
    """The snapshot file stem of one prompt part: ``assembled.rooda`` for the assembled
    prompt in rooda's layout, else the part's name (phases compose alike in both)."""
    if phase == "assembled" and prompt_format != "ooda":
        return f"{phase}.{prompt_format}"
    return phase


#: What an agent material item's key starts with (``command/greeter:hello``).
_MATERIAL_KINDS = ("command", "skill", "subagent")


def material_stem(key: str) -> str:
    """The snapshot file stem of an agent material item's key: ``command/greeter:hello``
    is ``command.greeter~hello`` (no ``/`` or ``:`` in a file name)."""
    from pytest_ooda.agents import snapshot_name

    return snapshot_name(key)


def _material_key(stem: str) -> str | None:
    """The key a material snapshot's stem stores (:func:`material_stem` undone)."""
    kind, dot, rest = stem.partition(".")
    if kind not in _MATERIAL_KINDS or not dot or not rest:
        return None
    return f"{kind}/{rest.replace('~', ':')}"


def _phase_of_stem(stem: str) -> str | None:
    """The prompt part a snapshot file stem stores, ``None`` for a file not ours."""
    if stem in PROMPT_PHASES:
        return stem
    key = _material_key(stem)
    if key is not None:
        return key
    phase, _, layout = stem.partition(".")
    if phase and layout and snapshot_stem(phase, layout) == stem and phase in PROMPT_PHASES:
        return phase
    return None


def split_nodeid(nodeid: str) -> tuple[str, str] | None:
    """``(procedure, phase)`` for a prompt item's node id, else ``None``.

    Works from the node id alone because under pytest-xdist the controller rebuilds
    items from ``nodeid``/``name``/``path`` only.
    """
    parts = nodeid.split("::")
    if len(parts) < 3:
        return None
    last = parts[-1]
    if not (last.startswith(_ITEM_PREFIX) and last.endswith("]")):
        return None
    phase = last[len(_ITEM_PREFIX) : -1]
    if phase not in PROMPT_PHASES and phase.partition("/")[0] not in _MATERIAL_KINDS:
        return None
    return parts[-2], phase


def read_prompt_snapshot(path: Path) -> str | None:
    """A stored prompt, or ``None`` when there is none.

    ``newline=""`` keeps ``"\r\n"`` in a prompt distinguishable from ``"\n"``. Bytes
    that are not UTF-8 become U+FFFD: such a file can only be a corrupted snapshot, which
    then fails with a diff and is rewritten by ``--snapshot-update``. Other ``OSError``s
    (a directory in the way, no permission) propagate.
    """
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


class PromptSnapshotExtension(SingleFileSnapshotExtension):
    """Stores one composed prompt per file as plain Markdown, written atomically."""

    file_extension = "md"
    _write_mode = WriteMode.TEXT

    # -- where snapshots live -------------------------------------------------------

    @classmethod
    def site_dir(cls, test_location: PyTestLocation) -> Path:
        """The directory holding every prompt snapshot of one config file.

        Items may carry ``ooda_snapshot_dir`` (the packaged built-ins collected with
        ``--ooda-builtin`` keep their snapshots under the rootdir, not inside the
        installed package); otherwise it sits next to the config file.
        """
        explicit = _explicit_dir(test_location)
        if explicit is not None:
            return explicit
        config_file = Path(test_location.filepath)
        return config_file.parent / str(cls.snapshot_dirname) / config_file.stem

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls.site_dir(test_location))

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls._discovery_root(test_location))

    @classmethod
    def _discovery_root(cls, test_location: PyTestLocation) -> Path:
        """Where unused snapshots are looked for.

        The whole ``<config dir>/__snapshots__`` (so the snapshots of a deleted config
        file are found too), or only the item's own directory when it names one.
        """
        if _explicit_dir(test_location) is not None:
            return cls.site_dir(test_location)
        return cls.site_dir(test_location).parent

    @classmethod
    def get_location(cls, *, test_location: PyTestLocation, index: SnapshotIndex) -> str:
        split = split_nodeid(test_location.nodeid)
        if split is None:
            # Not one of our items: fall back to syrupy's flat single-file layout so a
            # misuse still stores something predictable.
            return super().get_location(test_location=test_location, index=index)
        procedure, phase = split
        if phase in PROMPT_PHASES:
            stem = snapshot_stem(phase, _prompt_format(test_location))
        else:
            stem = material_stem(phase)
        return str(cls.site_dir(test_location) / safe_name(procedure) / f"{stem}.md")

    @classmethod
    def matches_test_location(
        cls, *, test_location: PyTestLocation, snapshot_location: str
    ) -> bool:
        if split_nodeid(test_location.nodeid) is None:
            return False
        expected = cls.get_location(test_location=test_location, index=0)
        return Path(expected).resolve() == Path(snapshot_location).resolve()

    # -- discovery (finding unused snapshots) ----------------------------------------

    def owns_snapshot_collection(self, *, filepath: str, test_location: PyTestLocation) -> bool:
        path = Path(filepath)
        return any(path == found for found in self._our_files(test_location))

    @classmethod
    def _our_files(cls, test_location: PyTestLocation) -> list[Path]:
        """Prompt snapshot files (``<stem>/<procedure>/<phase>.md``) under the discovery root.

        ``ooda-builtin/`` holds the snapshots of the packaged built-ins
        (``--ooda-builtin``); unless an ``ooda-builtin.yml`` sits next to it, it belongs
        to those items alone.
        """
        root = cls._discovery_root(test_location)
        if not root.is_dir():
            return []
        if _explicit_dir(test_location) is not None:
            return [p for p in sorted(root.glob("*/*.md")) if _phase_of_stem(p.stem)]
        config_dir = root.parent
        loaded = _loaded_config_files(test_location)
        found: list[Path] = []
        for stem_dir in sorted(root.iterdir()):
            if not stem_dir.is_dir():
                continue
            owners = [config_dir / f"{stem_dir.name}{suffix}" for suffix in (".yml", ".yaml")]
            existing = [owner for owner in owners if owner.exists()]
            if stem_dir.name == "ooda-builtin" and not existing:
                continue
            # A config file that is still there but did not load (or was not collected,
            # e.g. --ignore) has items nobody ran: its snapshots are not unused, and
            # --snapshot-update must not delete them. A deleted config file's are.
            if (
                existing
                and loaded is not None
                and not any(owner.resolve() in loaded for owner in existing)
            ):
                continue
            found.extend(p for p in sorted(stem_dir.glob("*/*.md")) if _phase_of_stem(p.stem))
        return found

    def discover_snapshots(
        self,
        *,
        test_location: PyTestLocation,
        ignore_extensions: list[str] | None = None,
    ) -> SnapshotCollections:
        discovered = SnapshotCollections()
        if split_nodeid(test_location.nodeid) is None:
            # A plain Python test (or another plugin's item) shares the session; its
            # snapshot directory belongs to other extensions.
            return discovered
        # ``ignore_extensions`` is not consulted: the plugin adds "md" to it so that
        # syrupy's default extension never claims these files (see keep_default_off_md).
        for path in self._our_files(test_location):
            if path.is_file():
                discovered.add(self.read_snapshot_collection(snapshot_location=str(path)))
        return discovered

    def read_snapshot_collection(self, *, snapshot_location: str) -> SnapshotCollection:
        path = Path(snapshot_location)
        collection = SnapshotCollection(location=snapshot_location)
        phase = _phase_of_stem(path.stem) or path.stem
        # Named as syrupy names the assertion (file-name characters dropped: a material
        # item's key has ``/`` and ``:``), so a compared snapshot counts as used.
        name = f"{path.parent.name}.{_ITEM_PREFIX}{phase}]"
        collection.add(Snapshot(name=self._sanitize_filename(name)[: self._max_stem_length()]))
        return collection

    # -- reading and writing ---------------------------------------------------------

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> SerializableData | None:
        return read_prompt_snapshot(Path(snapshot_location))

    @classmethod
    def write_snapshot_collection(
        cls,
        *,
        snapshot_collection: SnapshotCollection,
        name_order: dict[str, int] | None = None,
    ) -> None:
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"prompt snapshots are text, got {type(data).__name__}")
        atomic_write_text(Path(snapshot_collection.location), data)

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        path = Path(snapshot_location)
        path.unlink(missing_ok=True)
        # A deleted procedure should not leave an empty directory behind, nor a
        # deleted config file an empty <stem>/ directory.
        for directory in (path.parent, path.parent.parent):
            try:
                directory.rmdir()
            except OSError:
                break

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        if not isinstance(data, str):
            raise TypeError(f"prompt snapshots are text, got {type(data).__name__}")
        return data


# -- the adapter: the only code that touches syrupy's assertion object -----------------


@dataclass(frozen=True)
class Comparison:
    """How a composed prompt compared with its stored snapshot: ``recorded`` is what was
    stored (``None`` when there is none yet); ``read_failed`` when a stored file exists
    but could not be read (syrupy reports that as "no snapshot")."""

    matched: bool
    recorded: str | None = None
    read_failed: bool = False


def compare(snapshot: Any, text: str) -> Comparison:
    """Assert ``text`` against ``snapshot`` (syrupy's fixture) with our extension;
    under ``--snapshot-update`` a mismatch rewrites the file, as syrupy does."""
    assertion = snapshot.use_extension(PromptSnapshotExtension)
    if assertion == text:
        return Comparison(matched=True, recorded=text)
    execution = assertion.executions[assertion.num_executions - 1]
    recalled = execution.recalled_data
    return Comparison(
        matched=False,
        recorded=recalled if isinstance(recalled, str) else None,
        read_failed=execution.exception is not None and recalled is None,
    )


def keep(snapshot: Any, recorded: str) -> None:
    """Mark a stored snapshot as used without changing it (equal by construction, so
    nothing is written and nothing fails)."""
    assertion = snapshot.use_extension(PromptSnapshotExtension)
    assertion == recorded  # noqa: B015


def _explicit_dir(test_location: PyTestLocation) -> Path | None:
    """The snapshot directory a prompt item was given (the packaged built-ins keep theirs
    under the rootdir, not inside the installed package)."""
    item = getattr(test_location, "item", None)
    stash = getattr(item, "stash", None)
    return None if stash is None else stash.get(SNAPSHOT_DIR, None)


def _prompt_format(test_location: PyTestLocation) -> str:
    """The layout a prompt item composes (``ooda`` when the item does not say)."""
    item = getattr(test_location, "item", None)
    stash = getattr(item, "stash", None)
    return "ooda" if stash is None else stash.get(PROMPT_FORMAT, "ooda")


def _loaded_config_files(test_location: PyTestLocation) -> set[Path] | None:
    """Config files this session collected and loaded (``None``: not known here)."""
    item = getattr(test_location, "item", None)
    config = getattr(item, "config", None)
    if config is None:
        return None
    if not isinstance(config, pytest.Config):
        return None
    state = config.stash.get(PLUGIN_STATE, None)
    if state is None:
        return None
    return state.collected_files - state.broken_files


def prune_empty_dirs(snapshot_root: Path) -> None:
    """Remove empty ``<stem>/<procedure>/`` directories left under ``__snapshots__``.

    syrupy deletes orphaned files it cannot attribute to an extension (a whole config
    file removed) without pruning our two-level layout.
    """
    if not snapshot_root.is_dir():
        return
    for stem_dir in snapshot_root.iterdir():
        if not stem_dir.is_dir():
            continue
        for procedure_dir in stem_dir.iterdir():
            if procedure_dir.is_dir() and not any(procedure_dir.iterdir()):
                procedure_dir.rmdir()
        if not any(stem_dir.iterdir()):
            stem_dir.rmdir()


class PruneAfterUpdate:
    """Registered with ``--snapshot-update``: after syrupy has deleted unused snapshots,
    the snapshot directories that left empty go too."""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        prune_snapshot_dirs(session.config)


def prune_snapshot_dirs(config: pytest.Config) -> None:
    """After ``--snapshot-update``, drop snapshot directories left empty by deletions.

    Runs where syrupy deletes (a single process, or the xdist controller, which never
    collects), so the config directories come from the globs rather than collection.
    """
    from pytest_ooda.plugin import SESSION
    from pytest_ooda.settings import CONFIG, PROCEDURE_FILES

    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    settings = config.stash[SESSION]
    state = config.stash.get(PLUGIN_STATE, None)
    directories = {path.parent for path in state.collected_files} if state else set()
    for glob in settings[PROCEDURE_FILES]:
        directories.update(path.parent for path in settings.root.glob(glob))
    config_file = settings[CONFIG]
    if config_file is not None:
        directories.add(config_file.parent)
    directories.add(settings.root)
    for directory in directories:
        prune_empty_dirs(directory / str(PromptSnapshotExtension.snapshot_dirname))
