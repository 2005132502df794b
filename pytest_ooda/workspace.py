"""What each iteration of a recorded run changed in its workspace.

A recording keeps, per iteration, ``files: {path: text | null}`` — the files the agent
created or modified (as text) and the ones it deleted (``null``) — so that a replay,
which applies those changes to a fresh copy of the workspace, ends with the files the
live run left behind and ``expect.files`` holds the same way.

``WorkspaceChanges`` watches one directory through the loop's ``on_event`` events: a
stat-only snapshot when the loop starts and after every iteration, diffed against the
previous one. Only files whose size, mtime, ctime or inode moved are read (plus, once
more, recorded files whose timestamp was too recent to trust), so an unchanged tree
costs one ``lstat`` per file per iteration.

Limits (a placeholder, a change left out or a symlink leaves a line in ``warnings``):
- directories named in ``IGNORED_DIRS`` are skipped at any depth;
- only UTF-8 text files of at most ``max_file_bytes`` are kept, and at most
  ``max_total_bytes`` of text over the whole run. A new file beyond these limits (or a
  binary one) is recorded as a one-line placeholder, so it still exists on replay; an
  existing file that changed into something unrecordable is left out, so replay keeps
  the workspace's version rather than replacing it with a placeholder;
- symbolic links are never recorded (replay could only write through them), nor are
  empty directories (replay creates directories for the files in them);
- nor is the content of a file with more than one hard link: under ``sandbox: none``
  it may be the other name of a file outside the workspace (a key the agent linked in),
  so the recording says so instead;
- FIFOs, sockets and device files are never opened nor recorded (a FIFO would block the
  reader), each with a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import time
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from pytest_ooda.errors import BackendError, WorkspaceError
from pytest_ooda.repository import init_repository

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import FileChange
    from pytest_ooda.loop import LoopEvent

__all__ = [
    "IGNORED_DIRS",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "PathChanges",
    "WorkspaceChanges",
    "fresh_repository",
    "placeholder",
    "remove_tree",
    "restore_protected",
    "scan",
]

#: Directory names never walked: version-control data, caches and installed
#: dependencies, which are large, machine-specific and not the agent's work.
IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024
# File timestamps come from a coarse clock (a kernel tick; a second on some file
# systems): a file written this close before a snapshot may be rewritten with the same
# size and timestamp, so the next snapshot re-reads it rather than trusting its stat.
RACY_NS = 2_000_000_000


class Entry(NamedTuple):
    """What a snapshot knows of a path without reading it (a tuple: cheap per file)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    link: str | None = None
    #: For what is neither a file, a directory nor a link: ``FIFO``, ``socket``, ``device``.
    special: str | None = None
    #: Hard links to a regular file (more than one: it has a name elsewhere too).
    links: int = 1

    @property
    def plain(self) -> bool:
        """A regular file with one name: the only kind whose content is read."""
        return self.link is None and self.special is None and self.links == 1


def scan(root: Path) -> dict[str, Entry]:
    """Regular files and symlinks under ``root`` by POSIX relative path (lstat only)."""
    found: dict[str, Entry] = {}
    stack = [("", os.fspath(root))]
    while stack:
        prefix, directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            # Unreadable or vanished mid-walk: nothing in it can be recorded anyway.
            continue
        for entry in entries:
            relative = prefix + entry.name
            try:
                if entry.is_symlink():
                    st = entry.stat(follow_symlinks=False)
                    found[relative] = Entry(
                        st.st_size,
                        st.st_mtime_ns,
                        st.st_ctime_ns,
                        st.st_ino,
                        os.readlink(entry.path),
                    )
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name not in IGNORED_DIRS:
                        stack.append((relative + "/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    found[relative] = Entry(
                        st.st_size,
                        st.st_mtime_ns,
                        st.st_ctime_ns,
                        st.st_ino,
                        links=st.st_nlink,
                    )
                else:
                    st = entry.stat(follow_symlinks=False)
                    found[relative] = Entry(
                        0, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, special=_special(st.st_mode)
                    )
            except OSError:
                continue
    return found


def _special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device file"


def placeholder(path: str, reason: str) -> str:
    """The text a replay writes for a new file whose content was not recorded."""
    return f"<ooda: content of {path} not recorded: {reason}>\n"


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n} bytes ({n / 1024:.0f} KiB)"


class WorkspaceChanges:
    """Collects the file changes of every iteration of a run in ``root``.

    Pass it as (or call it from) ``run_procedure``'s ``on_event``; afterwards
    ``iterations`` maps each finished iteration's number to its changes, deletions
    first, then creations and modifications, each group sorted by path.
    """

    def __init__(
        self,
        root: str | Path,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
    ) -> None:
        self.root = Path(root)
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.iterations: dict[int, Mapping[str, str | None]] = {}
        self.warnings: list[str] = []
        self.recorded_bytes = 0
        self._snapshot: dict[str, Entry] | None = None
        # sha256 of the content a replay of the recording so far leaves at each path
        # (known only for paths recorded before): a rewrite with the same bytes is no change.
        self._digests: dict[str, str] = {}
        # Recorded paths whose timestamp was too recent to trust at the last snapshot.
        self._racy: set[str] = set()

    def __call__(self, event: LoopEvent) -> None:
        from pytest_ooda.loop import IterationFinished, IterationStarted, LoopStarted

        if isinstance(event, LoopStarted) or (
            isinstance(event, IterationStarted) and self._snapshot is None
        ):
            self.start()
        elif isinstance(event, IterationFinished):
            self.iterations[event.record.number] = self.capture(event.record.number)

    def start(self) -> None:
        """Take the baseline every later change is measured from."""
        self._snapshot = scan(self.root)

    def capture(self, iteration: int | None = None) -> Mapping[str, str | None]:
        """What changed since the last snapshot; the current state becomes the new one."""
        before = self._snapshot if self._snapshot is not None else {}
        scanned_at = time.time_ns()
        after = scan(self.root)
        self._snapshot = after
        racy, self._racy = self._racy, set()
        deleted: dict[str, str | None] = {}
        written: dict[str, str | None] = {}
        where = f"iteration {iteration}: " if iteration is not None else ""
        for path in sorted(before.keys() - after.keys()):
            self._digests.pop(path, None)
            if before[path].link is not None:
                self.warnings.append(f"{where}{path}: deleted symlink not recorded")
            elif before[path].special is not None:
                continue  # its creation was already reported
            elif self._nameable(path, where):
                deleted[path] = None
        moved = [p for p, e in after.items() if before.get(p) != e or p in racy]
        for path in sorted(moved):
            entry = after[path]
            old = before.get(path)
            if entry.link is not None or (old is not None and old.link is not None):
                self.warnings.append(f"{where}{path}: symlink not recorded")
                continue
            if entry.special is not None:
                # Never opened (a FIFO would block the recorder), never recorded: said.
                if old is None or old.special is None:
                    self.warnings.append(f"{where}{path}: {entry.special} is not recorded")
                continue
            if entry.links > 1:
                self.warnings.append(
                    f"{where}{path}: a file with {entry.links} hard links (it has a name "
                    "elsewhere too); its content is not recorded"
                )
                continue
            if not self._nameable(path, where):
                continue
            text, reason = self._read(path, entry)
            if reason is None and entry.mtime_ns >= scanned_at - RACY_NS:
                self._racy.add(path)
            if text is not None:
                written[path] = text
            elif reason is not None:
                if old is None:
                    written[path] = placeholder(path, reason)
                    self.warnings.append(
                        f"{where}{path}: {reason}; the recording holds a placeholder"
                    )
                else:
                    self.warnings.append(f"{where}{path}: {reason}; the change is not recorded")
        return MappingProxyType({**deleted, **written})

    def _nameable(self, path: str, where: str) -> bool:
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            self.warnings.append(f"{where}{path!r}: file name is not UTF-8; not recorded")
            return False
        return True

    def _read(self, path: str, entry: Entry) -> tuple[str | None, str | None]:
        """``(text, None)`` for a changed text file, ``(None, None)`` when it holds what
        the recording already gives it, ``(None, reason)`` when it cannot be recorded."""
        if entry.size > self.max_file_bytes:
            return None, f"{_size(entry.size)}, over the {_size(self.max_file_bytes)} limit"
        try:
            with open(self.root / path, "rb") as handle:
                data = handle.read(self.max_file_bytes + 1)
        except OSError as exc:
            return None, f"cannot read it ({exc.strerror or exc})"
        if len(data) > self.max_file_bytes:
            return None, f"over the {_size(self.max_file_bytes)} limit"
        digest = hashlib.sha256(data).hexdigest()
        if self._digests.get(path) == digest:
            return None, None
        if b"\0" in data:
            return None, f"binary file, {_size(len(data))}"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None, f"not UTF-8 text, {_size(len(data))}"
        if self.recorded_bytes + len(data) > self.max_total_bytes:
            return None, (
                f"{_size(len(data))}; the run's {_size(self.max_total_bytes)} budget "
                "for file contents is spent"
            )
        self.recorded_bytes += len(data)
        self._digests[path] = digest
        return text, None


def diff_paths(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> dict[str, FileChange]:
    """Which paths ``after`` created, modified (size, times or inode moved) or deleted."""
    changes: dict[str, FileChange] = {}
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old is None:
            changes[path] = "created"
        elif new is None:
            changes[path] = "deleted"
        elif old != new:
            changes[path] = "modified"
    return changes


class PathChanges:
    """The names of the files a run created, modified or deleted: per iteration and
    over the whole run. Stat snapshots only (nothing is read), so a run costs one
    ``lstat`` walk when it starts and one after each iteration.

    Pass it as ``run_procedure(on_event=…)``; afterwards ``iterations`` maps an
    iteration's number to its changes and ``total()`` is the net change of the run.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.iterations: dict[int, dict[str, FileChange]] = {}
        self._first: dict[str, Entry] | None = None
        self._last: dict[str, Entry] | None = None

    def __call__(self, event: LoopEvent) -> None:
        from pytest_ooda.loop import IterationFinished, IterationStarted, LoopStarted

        if isinstance(event, LoopStarted) or (
            isinstance(event, IterationStarted) and self._first is None
        ):
            self._first = self._last = scan(self.root)
        elif isinstance(event, IterationFinished) and self._last is not None:
            now = scan(self.root)
            self.iterations[event.record.number] = diff_paths(self._last, now)
            self._last = now

    def total(self) -> dict[str, FileChange]:
        """What the run changed from its start to its last iteration (a file created
        and then deleted is no change)."""
        if self._first is None or self._last is None:
            return {}
        return diff_paths(self._first, self._last)


def git_init(path: Path) -> None:
    """Make ``path`` a git repository with one commit, unless it already is one.

    Agents expect a repository (they diff and commit): :mod:`pytest_ooda.repository`
    writes it in this process, the same commit for the same files on every machine."""
    if not (path / ".git").exists():
        init_repository(path)


def fresh_repository(source: Path | None, target: Path) -> Path:
    """``target`` (which must not exist, or be empty) as a git repository holding a copy
    of ``source`` (empty when ``None``) in one commit: each run gets its own copy, which
    no other run can reach. ``BackendError`` when a file cannot be read."""
    copy_workspace(source, target)
    git_init(target)
    return target


def copy_workspace(source: Path | None, target: Path) -> Path:
    """Copy ``source`` (a directory) into ``target``; an empty ``target`` when ``None``."""
    target.mkdir(parents=True, exist_ok=True)
    if source is not None:
        if not source.is_dir():
            raise BackendError(f"workspace directory not found: {source}")
        shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)
    return target


# --------------------------------------------------------------------------- protect

#: What a protected path holds, per relative path: a file (digest, executable), a
#: symbolic link (its target), a directory, or something else.
_Kind = tuple[str, ...]


def restore_protected(
    workspace: Path, source: Path | None, paths: Sequence[str]
) -> tuple[str, ...]:
    """Put each of ``paths`` (files or directories, relative to ``workspace``) back as
    ``source`` holds it (the directory the workspace was copied from; ``None``: an empty
    one, so whatever the agent put there is removed), so that what the agent did to
    them cannot decide a verdict (``expect.protect``). Returns the relative paths under
    them the agent created, changed or deleted (a file's content or executable bit, a
    link's target, a directory), sorted.

    Nothing is followed through a symbolic link: a link the agent put in place of a
    protected path, or of a directory above one, is removed, never written through, and
    what ``source`` holds there is put back."""
    changed: set[str] = set()
    for path in paths:
        held = _tree(source, path) if source is not None else {}
        # The workspace's files are read only where the source has one of the same size.
        found = _tree(workspace, path, like=held)
        if found == held:
            continue
        # Under a directory the agent locked nothing could be read: it stands for all.
        locked = tuple(key + "/" for key, kind in found.items() if kind == ("unreadable",))
        changed.update(
            key
            for key in held.keys() | found.keys()
            if held.get(key) != found.get(key) and not key.startswith(locked)
        )
        try:
            _release(workspace, path)
            target = _clear(workspace, path)
            if source is not None and os.path.lexists(source / path):
                _copy(source / path, target)
        except OSError as exc:
            where = exc.filename or workspace / path
            raise WorkspaceError(
                f"expect.protect could not put {path} back: {where}: {exc.strerror or exc}"
            ) from None
    return tuple(sorted(changed))


def _tree(root: Path, path: str, like: Mapping[str, _Kind] | None = None) -> dict[str, _Kind]:
    """What ``root/path`` holds, walked without following a link (an ancestor of
    ``path`` that is not a real directory holds ``path`` as "displaced"). With ``like``
    (the tree it is compared with), a file is read only when ``like`` has a file of its
    size there: one of another size differs whatever it holds (a sparse file of
    terabytes the agent left is never read)."""
    here = root
    for part in path.split("/")[:-1]:
        here = here / part
        if not os.path.lexists(here):
            return {}
        if here.is_symlink() or not here.is_dir():
            return {path: ("displaced",)}
    found: dict[str, _Kind] = {}
    stack = [path]
    while stack:
        relative = stack.pop()
        full = root / relative
        try:
            info = full.lstat()
        except FileNotFoundError:
            continue
        try:
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(full))
            elif stat.S_ISDIR(info.st_mode):
                found[relative] = ("dir",)
                stack.extend(f"{relative}/{entry.name}" for entry in os.scandir(full))
            elif stat.S_ISREG(info.st_mode):
                size = str(info.st_size)
                other = like.get(relative, ()) if like is not None else None
                if other is not None and other[-1:] != (size,):
                    found[relative] = ("file", "", str(bool(info.st_mode & 0o111)), size)
                else:
                    found[relative] = _file_kind(full, info.st_mode, size)
            else:
                found[relative] = ("special", _special(info.st_mode))
        except OSError:
            # Locked by the agent (chmod 000), or swapped or removed under the walk by a
            # process it left running: changed, whatever it holds.
            found[relative] = ("unreadable",)
    return found


def _file_kind(full: Path, mode: int, size: str) -> _Kind:
    """A regular file's kind: its digest, read in blocks from a descriptor that follows
    no link and does not wait on a pipe put in the file's place since it was looked at;
    its executable bit; its size."""
    descriptor = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as handle:
        now = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(now):
            return ("special", _special(now))
        digest = hashlib.sha256()
        while block := handle.read(1 << 20):
            digest.update(block)
    return ("file", digest.hexdigest(), str(bool(mode & 0o111)), size)


def _clear(workspace: Path, path: str) -> Path:
    """Remove what ``workspace/path`` holds, after making every directory above it a
    real one inside ``workspace`` (a link or a file in the way is removed first).
    Returns the emptied path."""
    here = workspace
    for part in path.split("/")[:-1]:
        here = here / part
        if here.is_symlink() or (os.path.lexists(here) and not here.is_dir()):
            here.unlink()
        here.mkdir(exist_ok=True)
    target = here / path.split("/")[-1]
    if target.is_symlink() or (os.path.lexists(target) and not target.is_dir()):
        target.unlink()
    elif target.is_dir():
        _unlock(target)
        shutil.rmtree(target)
    return target


def _unlock(top: Path) -> None:
    """Let the owner list and empty every directory under ``top``: an agent running as
    this user may have locked one (``chmod 000``) to keep it from being restored."""
    stack = [top]
    while stack:
        directory = stack.pop()
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o700)
            stack.extend(
                Path(entry.path)
                for entry in os.scandir(directory)
                if entry.is_dir(follow_symlinks=False)
            )


def _copy(original: Path, target: Path) -> None:
    """``original`` (a file, a link or a directory) copied to ``target``, links as links."""
    if original.is_symlink():
        os.symlink(os.readlink(original), target)
    elif original.is_dir():
        shutil.copytree(original, target, symlinks=True)
    else:
        shutil.copy2(original, target)


# --------------------------------------------------------------------------- removal

#: ``FS_IOC_GETFLAGS`` / ``FS_IOC_SETFLAGS`` and the attributes that keep a file from
#: being changed or removed even by its owner (``chattr +i``, ``chattr +a``).
_GETFLAGS, _SETFLAGS = 0x80086601, 0x40086602
_IMMUTABLE, _APPEND_ONLY = 0x10, 0x20


def _unpin(path: str) -> None:
    """Clear ``path``'s immutable and append-only attributes when it has them and this
    process may (root, or ``CAP_LINUX_IMMUTABLE``): an agent running as root under
    ``sandbox: none`` can set them to keep a path from being put back or removed."""
    import fcntl
    import struct

    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        (held,) = struct.unpack("i", fcntl.ioctl(fd, _GETFLAGS, struct.pack("i", 0)))
        if held & (_IMMUTABLE | _APPEND_ONLY):
            fcntl.ioctl(fd, _SETFLAGS, struct.pack("i", held & ~(_IMMUTABLE | _APPEND_ONLY)))
    except OSError:
        pass
    finally:
        os.close(fd)


def _unpin_tree(top: Path) -> None:
    """:func:`_unpin` every directory and regular file under ``top`` (links not
    followed), and let the owner list every directory (an agent may have locked one)."""
    if not os.path.lexists(top) or os.path.islink(top):
        return
    _unpin(str(top))
    if not top.is_dir():
        return
    _unlock(top)
    for directory, dirnames, filenames in os.walk(top):
        for name in (*dirnames, *filenames):
            path = os.path.join(directory, name)
            if not os.path.islink(path) and (os.path.isdir(path) or os.path.isfile(path)):
                _unpin(path)


def _release(workspace: Path, path: str) -> None:
    """Undo what keeps ``workspace/path`` from being put back: the attributes of the
    directories above it (within the workspace) and of everything under it."""
    here = workspace
    for part in path.split("/")[:-1]:
        here = here / part
        if os.path.islink(here) or not here.is_dir():
            break
        _unpin(str(here))
    _unpin(str(workspace))
    _unpin_tree(workspace / path)


def remove_tree(path: Path) -> str | None:
    """Remove ``path`` (a run's directory, or whatever an agent put in a place we write:
    a file, a link, never followed) and everything under it: ``None`` when it is gone,
    else what was left and why, for a message that names it. What an agent did to keep
    a file — a directory it locked (``chmod 000``), an immutable or append-only file or
    directory (``chattr +i``, as root under ``sandbox: none``) — is undone where this
    process may, and the removal tried again (the directory ``path`` is in is left as it
    is: a temporary directory of the system's, for a run's)."""
    if not os.path.lexists(path):
        return None
    remove = os.unlink if os.path.islink(path) or not os.path.isdir(path) else shutil.rmtree
    with contextlib.suppress(OSError):
        remove(path)
        return None
    _unpin_tree(path)
    try:
        remove(path)
    except OSError as exc:
        return f"{exc.filename or path}: {exc.strerror or exc}"
    return None
