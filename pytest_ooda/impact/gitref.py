"""A project as it was at a git revision, read from git's objects: the working tree is
never touched (no checkout, no stash, no index change).

:class:`RefTree` resolves a revision to its commit, lists the files of the project's
directory at that commit with their blob ids (``git ls-tree``), and writes them into a
directory of its own (``git cat-file --batch``), where the project's configs, fragments,
scenarios and agent material are loaded as they were. :func:`worktree_blobs` gives the
same listing of a directory of the working tree as git sees it (tracked files and
untracked ones it does not ignore), with the blob id git would give each file's
content, so a workspace is compared without reading it at the revision at all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["RefTree", "blob_id", "changed_files", "worktree_blobs"]

#: Larger files at the revision are not written out: no config, fragment or scenario is
#: this big (the text reader refuses far less), and a workspace is compared by blob id.
MAX_EXTRACTED_BYTES = 32 * 1024 * 1024
_REGULAR = ("100644", "100755")
_SYMLINK = "120000"


def _git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    """``git args`` in ``root``; a ``UsageError`` saying what git said when it fails."""
    git = shutil.which("git")
    if git is None:
        raise UsageError("git is not installed: change impact reads the revision from git")
    try:
        done = subprocess.run(
            [git, *args], cwd=root, input=data, capture_output=True, check=False, timeout=300
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"git {args[0]}: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]}: {said[-1] if said else f'exit {done.returncode}'}")
    return done.stdout


def blob_id(data: bytes) -> str:
    """The id git gives a file of this content (``git hash-object``)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class _Entry:
    mode: str
    blob: str
    size: int


@dataclass
class RefTree:
    """The project directory ``root`` (inside a git work tree) at revision ``ref``."""

    root: Path
    ref: str
    #: The commit ``ref`` names.
    commit: str = ""
    #: ``root`` relative to the repository's top (``""`` at the top).
    prefix: str = ""
    #: Every file under ``root`` at the commit, by its path relative to ``root``.
    entries: dict[str, _Entry] = field(default_factory=dict)

    @classmethod
    def read(cls, root: Path, ref: str) -> RefTree:
        """The tree of ``ref`` under ``root``; a ``UsageError`` naming the revision when
        it is not a commit of the repository (or ``root`` is in none)."""
        root = root.resolve()
        if not ref or ref.startswith("-"):
            raise UsageError(f"{ref!r} is not a git revision")
        top = _git(root, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape")
        try:
            commit = _git(root, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        except UsageError:
            raise UsageError(
                f"{ref!r} names no commit of the repository at {top.strip()}",
                hint="fetch it first (in CI: actions/checkout with fetch-depth: 0), or "
                "give a branch, tag or commit id",
            ) from None
        prefix = root.relative_to(Path(top.strip()).resolve()).as_posix()
        prefix = "" if prefix == "." else prefix
        tree = cls(root, ref, commit.decode("ascii").strip(), prefix)
        listing = _git(root, "ls-tree", "-r", "-l", "-z", "--full-tree", tree.commit)
        for line in listing.split(b"\0"):
            if not line:
                continue
            meta, _, raw = line.partition(b"\t")
            mode, kind, blob, size = meta.decode("ascii").split()
            path = raw.decode("utf-8", "surrogateescape")
            if kind != "blob":
                continue  # a submodule's commit: nothing of it is in this repository
            relative = _under(path, prefix)
            if relative is not None:
                tree.entries[relative] = _Entry(mode, blob, int(size) if size != "-" else 0)
        return tree

    def blobs_under(self, directory: str) -> dict[str, str]:
        """``{path relative to directory: blob id}`` of the files under ``directory``
        (relative to ``root``) at the commit."""
        found = {}
        for path, entry in self.entries.items():
            relative = _under(path, directory)
            if relative is not None:
                found[relative] = entry.blob
        return found

    def write_to(self, target: Path) -> None:
        """Write the project's files at the commit into ``target`` (an empty directory):
        regular files with their mode, symbolic links that stay inside; files larger
        than :data:`MAX_EXTRACTED_BYTES` are left out."""
        wanted = [
            (path, entry)
            for path, entry in sorted(self.entries.items())
            if (entry.mode in _REGULAR and entry.size <= MAX_EXTRACTED_BYTES)
            or entry.mode == _SYMLINK
        ]
        if not wanted:
            return
        request = "".join(f"{entry.blob}\n" for _, entry in wanted).encode("ascii")
        out = _git(self.root, "cat-file", "--batch", data=request)
        position = 0
        for path, entry in wanted:
            end = out.index(b"\n", position)
            header = out[position:end].split()
            length = int(header[2])
            data = out[end + 1 : end + 1 + length]
            position = end + 1 + length + 1
            destination = target / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            if entry.mode == _SYMLINK:
                _link(destination, data.decode("utf-8", "surrogateescape"), target)
                continue
            destination.write_bytes(data)
            if entry.mode == "100755":
                destination.chmod(0o755)


def _under(path: str, directory: str) -> str | None:
    """``path`` relative to ``directory`` (both relative, ``/``-separated), or ``None``
    when it lies elsewhere."""
    if not directory:
        return path
    directory = directory.rstrip("/")
    if path.startswith(directory + "/"):
        return path[len(directory) + 1 :]
    return None


def _link(destination: Path, target_text: str, top: Path) -> None:
    """A symbolic link of the revision, made only when it points inside ``top``."""
    pointed = PurePosixPath(target_text)
    if pointed.is_absolute():
        return
    resolved = os.path.normpath(destination.parent / pointed)
    if not Path(resolved).is_relative_to(top):
        return
    os.symlink(target_text, destination)


def worktree_blobs(root: Path, directory: str) -> Mapping[str, str]:
    """``{path relative to directory: blob id}`` of the files under ``directory``
    (relative to ``root``) in the working tree, as git sees them: tracked files as they
    are on disk now (a deleted one is gone), and untracked ones git does not ignore."""
    base = root.resolve() / directory if directory else root.resolve()
    if not base.is_dir():
        return {}
    listing = _git(
        base, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name", "."
    )
    top = Path(_git(root, "rev-parse", "--show-toplevel").decode().strip()).resolve()
    found: dict[str, str] = {}
    for raw in listing.split(b"\0"):
        if not raw:
            continue
        path = top / raw.decode("utf-8", "surrogateescape")
        relative = path.relative_to(base).as_posix()
        if path.is_symlink():
            found[relative] = blob_id(os.readlink(path).encode("utf-8", "surrogateescape"))
        elif path.is_file():
            found[relative] = blob_id(path.read_bytes())
    return found


def changed_files(before: Mapping[str, str], after: Mapping[str, str]) -> Sequence[str]:
    """The paths whose blob differs between two listings (added and removed too)."""
    return sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )
