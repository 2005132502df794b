"""A directory made a git repository holding its files in one commit, written in this
process: no ``git`` program runs.

A live run's workspace is a repository because agents expect one: Claude Code reads
``git status`` and the recent commits into its prompt, and agents diff and commit. What
they see is always the same for the same files: branch ``main``, one commit ``ooda
workspace`` by ``pytest-ooda <pytest-ooda@localhost>`` dated 2000-01-01, holding every
file of the directory, and a clean status (the index lists each file as it is on
disk). The commit id is what ``git init``, ``git add -A`` and ``git commit`` make of the
same files with that identity and date, and it depends on nothing else — neither the
clock nor the user's git configuration (their global ignore file, line-ending
conversion or default branch) — so an agent's replayed API traffic asks the same thing
on every machine (docs/agent-replay.md).

What git itself would do differently: every file is committed, including those a
``.gitignore`` in the directory names (it applies to what the agent adds later);
a ``.git`` directory below the top is left out with everything in it, as are FIFOs,
sockets and devices; a file this process cannot read is a ``BackendError``.

The repository is the smallest git reads as a work tree: ``HEAD``, ``config``, the
branch, loose objects (each file's blob, each directory's tree, the commit) and the
index (version 2), nothing else — no hooks, no reflog, no background maintenance.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import zlib
from typing import TYPE_CHECKING

from pytest_ooda.errors import BackendError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["AUTHOR", "BRANCH", "COMMIT_TIME", "MESSAGE", "init_repository"]

BRANCH = "main"
MESSAGE = "ooda workspace"
AUTHOR = "pytest-ooda <pytest-ooda@localhost>"
#: 2000-01-01T00:00:00Z: the same files are the same commit whenever they are committed.
COMMIT_TIME = 946684800

_CONFIG = (
    "[core]\n"
    "\trepositoryformatversion = 0\n"
    "\tfilemode = true\n"
    "\tbare = false\n"
    "\tlogallrefupdates = true\n"
)
_TREE_MODE = b"40000"
_LINK_MODE = 0o120000


class _Writer:
    """Loose objects written under ``.git/objects``, and the index entries of the
    files, as a directory's walk finds them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.objects = os.path.join(root, ".git", "objects")
        #: ``(path, lstat, blob id)`` of every file, for the index.
        self.entries: list[tuple[bytes, os.stat_result, bytes]] = []

    def object(self, kind: bytes, data: bytes) -> bytes:
        """Store one object; its binary id."""
        body = kind + b" " + str(len(data)).encode() + b"\0" + data
        digest = hashlib.sha1(body, usedforsecurity=False)
        name = digest.hexdigest()
        directory = os.path.join(self.objects, name[:2])
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, name[2:])
        if not os.path.exists(path):
            with open(path, "wb") as handle:
                handle.write(zlib.compress(body, 1))
        return digest.digest()

    def tree(self, directory: str, prefix: bytes) -> bytes:
        """The tree of ``directory`` (its files' blobs written too); its id."""
        items: list[tuple[bytes, bytes, bytes]] = []  # (sort key, mode, id)
        with os.scandir(directory) as found:
            entries = sorted(found, key=lambda entry: os.fsencode(entry.name))
        for entry in entries:
            name = os.fsencode(entry.name)
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                if entry.name == ".git":
                    continue
                sub = self.tree(entry.path, prefix + name + b"/")
                if sub:
                    # Git sorts a directory as if its name ended in "/".
                    items.append((name + b"/", _TREE_MODE + b" " + name, sub))
                continue
            if stat.S_ISLNK(info.st_mode):
                blob, mode = os.fsencode(os.readlink(entry.path)), _LINK_MODE
            elif stat.S_ISREG(info.st_mode):
                blob, mode = _read(entry.path), _file_mode(info.st_mode)
            else:
                continue  # a FIFO, a socket, a device: git leaves them out too
            blob_id = self.object(b"blob", blob)
            self.entries.append((prefix + name, info, blob_id))
            items.append((name, b"%o %s" % (mode, name), blob_id))
        if not items and prefix:
            return b""  # git keeps no empty directory
        items.sort(key=lambda item: item[0])
        return self.object(b"tree", b"".join(head + b"\0" + oid for _, head, oid in items))

    def index(self) -> bytes:
        """The index (version 2) listing every file with its stat data, so that
        ``git status`` finds the work tree clean without hashing a file."""
        parts = [b"DIRC", struct.pack(">II", 2, len(self.entries))]
        for path, info, blob_id in sorted(self.entries, key=lambda entry: entry[0]):
            mode = _LINK_MODE if stat.S_ISLNK(info.st_mode) else _file_mode(info.st_mode)
            fields = (
                info.st_ctime_ns // 1_000_000_000 & 0xFFFFFFFF,
                info.st_ctime_ns % 1_000_000_000,
                info.st_mtime_ns // 1_000_000_000 & 0xFFFFFFFF,
                info.st_mtime_ns % 1_000_000_000,
                info.st_dev & 0xFFFFFFFF,
                info.st_ino & 0xFFFFFFFF,
                mode,
                info.st_uid & 0xFFFFFFFF,
                info.st_gid & 0xFFFFFFFF,
                info.st_size & 0xFFFFFFFF,
            )
            entry = struct.pack(">10I", *fields) + blob_id
            entry += struct.pack(">H", min(len(path), 0xFFF)) + path
            # NUL-padded to a multiple of eight bytes, at least one NUL.
            entry += b"\0" * (8 - len(entry) % 8)
            parts.append(entry)
        data = b"".join(parts)
        return data + hashlib.sha1(data, usedforsecurity=False).digest()


def _file_mode(mode: int) -> int:
    return 0o100755 if mode & stat.S_IXUSR else 0o100644


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise BackendError(
            f"cannot commit {path} to the workspace's repository: {exc.strerror or exc}"
        ) from None


def init_repository(root: Path) -> str:
    """Make ``root`` (a directory that is no repository yet) a git repository whose
    branch ``main`` holds its files in one commit; the commit's id."""
    git = root / ".git"
    # The least git takes for a repository: objects/, refs/ and HEAD (written last).
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "objects").mkdir()
    writer = _Writer(root)
    tree = writer.tree(os.fspath(root), b"")
    signature = f"{AUTHOR} {COMMIT_TIME} +0000".encode()
    commit = writer.object(
        b"commit",
        b"tree %s\nauthor %s\ncommitter %s\n\n%s\n"
        % (tree.hex().encode(), signature, signature, MESSAGE.encode()),
    ).hex()
    (git / "config").write_text(_CONFIG, encoding="utf-8")
    (git / "refs" / "heads" / BRANCH).write_text(commit + "\n", encoding="utf-8")
    (git / "index").write_bytes(writer.index())
    # HEAD last: until it exists, git does not take the directory for a repository.
    (git / "HEAD").write_text(f"ref: refs/heads/{BRANCH}\n", encoding="utf-8")
    return commit
