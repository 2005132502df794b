"""Prompt snapshots: a syrupy extension storing each composed prompt as its own ``.md``.

Layout: ``<config dir>/__snapshots__/<config stem>/<procedure>/<phase>.md`` (the
``__snapshots__`` name follows ``--snapshot-dirname``). syrupy's own single-file
extension nests one level (``__snapshots__/<test file>/<test>.ext``); ours nests two,
so location, discovery, ownership and deletion are overridden here. Mismatches are
explained by :func:`annotated_diff`, which names the fragment files behind each hunk.
"""

from __future__ import annotations

import difflib
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from syrupy.data import Snapshot, SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from pytest_ooda.scenario import atomic_write_text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from syrupy.location import PyTestLocation
    from syrupy.types import (
        PropertyFilter,
        PropertyMatcher,
        SerializableData,
        SerializedData,
        SnapshotIndex,
    )

    from pytest_ooda.compose import Segment

#: Snapshot file stems, in the order the prompt items are collected.
PROMPT_PHASES = ("observe", "orient", "decide", "act", "assembled")

_ITEM_PREFIX = "prompt["


@functools.lru_cache(maxsize=4096)
def safe_name(name: str) -> str:
    """A procedure name as a directory name (syrupy's own filename sanitising).

    Cached: syrupy's sanitiser looks up every character's Unicode category, and each
    prompt item asks several times.
    """
    return SingleFileSnapshotExtension._sanitize_filename(name) or "_"


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
    if phase not in PROMPT_PHASES:
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
        explicit = getattr(test_location.item, "ooda_snapshot_dir", None)
        if isinstance(explicit, Path):
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
        if isinstance(getattr(test_location.item, "ooda_snapshot_dir", None), Path):
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
        return str(cls.site_dir(test_location) / safe_name(procedure) / f"{phase}.md")

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
        if isinstance(getattr(test_location.item, "ooda_snapshot_dir", None), Path):
            return [p for p in sorted(root.glob("*/*.md")) if p.stem in PROMPT_PHASES]
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
            found.extend(p for p in sorted(stem_dir.glob("*/*.md")) if p.stem in PROMPT_PHASES)
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
        collection.add(Snapshot(name=f"{path.parent.name}.{_ITEM_PREFIX}{path.stem}]"))
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


def _loaded_config_files(test_location: PyTestLocation) -> set[Path] | None:
    """Config files this session collected and loaded (``None``: not known here)."""
    from pytest_ooda.collect import PLUGIN_STATE

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


# -- explaining a mismatch ----------------------------------------------------------------


def _sources_for(lines: range, segments: Sequence[Segment]) -> list[str]:
    """Segment sources overlapping 1-based ``lines`` (a point when the range is empty)."""
    first, last = lines.start, max(lines.stop - 1, lines.start)
    found: list[str] = []
    for segment in segments:
        overlaps = segment.end_line >= first and segment.start_line <= last
        if overlaps and segment.source not in found:
            found.append(segment.source)
    return found


def _display_source(source: str, root: Path | None, files: Mapping[str, Path]) -> str:
    if root is None or source.startswith("builtin:"):
        return source
    path = files.get(source, Path(source))
    if path.is_absolute():
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            return source
    return source


def annotated_diff(
    old: str,
    new: str,
    segments: Sequence[Segment],
    *,
    old_label: str,
    new_label: str,
    root: Path | None = None,
    files: Mapping[str, Path] | None = None,
    context: int = 3,
) -> tuple[list[str], list[str]]:
    """A unified diff of ``old`` → ``new`` plus the sources of the changed lines.

    ``segments`` map lines of ``new`` to the fragment that produced them. Each hunk
    header ends with the fragment files its changes come from (like git's function
    context), and the second return value lists every such file once, in order.
    Deleted lines are attributed to the fragment at the point of deletion. ``files``
    maps a segment source (the path as written in the config) to the resolved file, so
    sources are shown relative to ``root``.
    """
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    out: list[str] = [f"--- {old_label}", f"+++ {new_label}"]
    all_sources: list[str] = []
    for group in matcher.get_grouped_opcodes(context):
        sources: list[str] = []
        for tag, _i1, _i2, j1, j2 in group:
            if tag == "equal":
                continue
            # j1..j2 are 0-based; a pure deletion (j1 == j2) sits just after line j1.
            span = range(j1 + 1, j2 + 1) if j2 > j1 else range(max(j1, 1), max(j1, 1) + 1)
            for source in _sources_for(span, segments):
                shown = _display_source(source, root, files or {})
                if shown not in sources:
                    sources.append(shown)
        for shown in sources:
            if shown not in all_sources:
                all_sources.append(shown)
        out.append(_hunk_header(group) + (f"  {', '.join(sources)}" if sources else ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in old_lines[i1:i2])
                continue
            out.extend("-" + line for line in old_lines[i1:i2])
            out.extend("+" + line for line in new_lines[j1:j2])
    if old.endswith("\n") != new.endswith("\n"):
        out.append("\\ the two texts differ in their final newline")
    return out, all_sources


def _hunk_header(group: Sequence[tuple[str, int, int, int, int]]) -> str:
    first, last = group[0], group[-1]
    i1, i2, j1, j2 = first[1], last[2], first[3], last[4]

    def span(start: int, stop: int) -> str:
        length = stop - start
        begin = start + 1 if length else start
        return f"{begin}" if length == 1 else f"{begin},{length}"

    return f"@@ -{span(i1, i2)} +{span(j1, j2)} @@"


def keep_default_off_md(options: Any) -> None:
    """Add ``md`` to syrupy's ``--snapshot-ignore-file-extensions``.

    syrupy's ``snapshot`` fixture registers an assertion with the default (amber)
    extension before ours takes over, and amber's discovery treats every foreign file
    under ``<config dir>/__snapshots__`` as an unknown, unused collection: it would
    report our prompts as unused (``--collect-only``) and delete them on
    ``--snapshot-update`` wherever no prompt item claims them (e.g. next to the packaged
    built-ins). Ignoring ``.md`` in walks keeps amber away; our discovery does not walk.
    """
    current = getattr(options, "ignore_file_extensions", None)
    if current is None:
        options.ignore_file_extensions = ["md"]
    elif "md" not in current:
        options.ignore_file_extensions = [*current, "md"]


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
