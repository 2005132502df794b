"""The source runs start from, shipped to the workers once per session: the project's
files as one tarball named by its sha256 (:func:`pack_source`), unpacked once per
worker machine into a cache directory of that name (:func:`unpack_source`), and a run's
plan moved from the controller's paths to the worker's (:func:`rebase`).

What is packed: in a git work tree, the files git would commit (tracked, and untracked
ones not ignored); elsewhere every file under the project root but version-control,
cache and virtual-environment directories and the results directory. An untracked file
whose name says it holds a secret (:func:`looks_secret`: ``.env``, a private key, a
credentials file) is held back unless the session names it (``--ooda-ship``): a
cluster's job travels to every worker, and an ``.env`` nobody meant to commit should
not. The tarball is made the same way every time (sorted names, no owners, no times),
so an unchanged project has the same digest in every session and a worker unpacks it
once, ever.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import ExecutorError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

__all__ = [
    "MAX_SOURCE_BYTES",
    "Source",
    "cache_dir",
    "looks_secret",
    "pack_source",
    "rebase",
    "unpack_source",
]

#: A project larger than this is refused: shipping it is a mistake (a data set, a build
#: tree) more often than not.
MAX_SOURCE_BYTES = 512 * 1024 * 1024
#: Directories never packed outside a git work tree.
SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".ooda",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "node_modules",
    }
)


#: File names that say a file holds a secret (compared lower-cased).
SECRET_NAMES = frozenset(
    {
        ".env",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".pypirc",
        ".npmrc",
        ".git-credentials",
        ".htpasswd",
        "credentials",
        "credentials.json",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "secrets.json",
        "secrets.yml",
        "secrets.yaml",
    }
)
#: ... and endings that do (a key or a keystore).
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".tfvars")
#: ``.env.NAME`` files that are templates, not secrets.
_ENV_TEMPLATES = frozenset({"example", "sample", "template", "dist", "defaults"})


def looks_secret(name: str) -> bool:
    """Whether a file called ``name`` (a path; its last part counts) is one that holds
    secrets by its name: ``.env`` and ``.env.local`` (not ``.env.example``), private
    keys (``id_rsa``, ``*.pem``, ``*.key``), keystores, credential files (``.netrc``,
    ``.pgpass``, ``.pypirc``, ``.npmrc``, ``credentials.json``, ``client_secret*.json``)."""
    base = PurePath(name).name.lower()
    if base in SECRET_NAMES or base.endswith(SECRET_SUFFIXES):
        return True
    if base.startswith(".env.") and base.removeprefix(".env.") not in _ENV_TEMPLATES:
        return True
    return base.startswith("client_secret") and base.endswith(".json")


@dataclass(frozen=True)
class Source:
    """A packed project: its tarball and the tarball's sha256, and the untracked files
    held back because their names say they hold secrets (relative names)."""

    digest: str
    data: bytes
    files: int
    held_back: tuple[str, ...] = ()


def pack_source(root: Path, *, exclude: Iterable[Path] = (), ship: Iterable[str] = ()) -> Source:
    """The project under ``root`` as a deterministic tarball (``exclude``: directories
    left out, such as the results directory; ``ship``: files to pack although their
    names look like secrets, relative to ``root``). ``ExecutorError`` when it is larger
    than :data:`MAX_SOURCE_BYTES`."""
    root = root.resolve()
    excluded = tuple(path.resolve() for path in exclude)
    named = {PurePath(name).as_posix() for name in ship}
    listed = sorted(_listed(root, excluded))
    held = tuple(
        name for name, tracked in listed if not tracked and looks_secret(name) and name not in named
    )
    names = [name for name, _ in listed if name not in held]
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in names:
            path = root / name
            info = tar.gettarinfo(str(path), arcname=name)
            if not (info.isfile() or info.issym()):
                continue
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            info.mode &= 0o755 if info.isfile() else 0o777
            total += info.size
            if total > MAX_SOURCE_BYTES:
                raise ExecutorError(
                    f"the project under {root} is more than {MAX_SOURCE_BYTES >> 20} MiB: too "
                    "much to ship to every worker",
                    hint="keep data sets and build trees out of the project root (or in "
                    ".gitignore, in a git work tree)",
                )
            if info.isfile():
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
            else:
                tar.addfile(info)
    data = buffer.getvalue()
    return Source(hashlib.sha256(data).hexdigest(), data, len(names), held)


def _listed(root: Path, excluded: tuple[Path, ...]) -> Iterator[tuple[str, bool]]:
    """The relative names of the files to pack, each with whether git tracks it."""
    known = _git_files(root)
    if known is not None:
        for name, tracked in known:
            path = root / name
            if not any(path == skip or skip in path.parents for skip in excluded):
                yield name, tracked
        return
    for directory, subdirectories, files in os.walk(root):
        here = Path(directory)
        subdirectories[:] = [
            name for name in subdirectories if name not in SKIPPED and (here / name) not in excluded
        ]
        for name in files:
            yield (here / name).relative_to(root).as_posix(), False


def _git_files(root: Path) -> list[tuple[str, bool]] | None:
    """The files git would commit under ``root`` (relative to it), each with whether it
    is tracked, or ``None`` when ``root`` is in no git work tree (or git is not
    installed)."""
    try:
        done = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "-t",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    if done.returncode != 0:
        return None
    found: dict[str, bool] = {}
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        # `-t`: "H name" for a tracked file, "? name" for an untracked one.
        tag, _, name = entry.partition(" ")
        if name:
            found[name] = found.get(name, False) or tag != "?"
    # A tracked file deleted in the work tree is listed but not there.
    return [(name, tracked) for name, tracked in found.items() if os.path.lexists(root / name)]


def cache_dir() -> Path:
    """Where a worker keeps unpacked sources: ``$OODA_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/pytest-ooda``, else ``~/.cache/pytest-ooda``."""
    given = os.environ.get("OODA_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-ooda"


def unpack_source(digest: str, data: bytes, *, into: Path | None = None) -> Path:
    """The directory holding source ``digest``, unpacked from ``data`` the first time
    this machine needs it (checked against the digest; made in a temporary directory and
    renamed into place, so two workers unpacking at once leave one whole copy)."""
    target = (into or cache_dir() / "sources") / digest
    if target.is_dir():
        return target
    if hashlib.sha256(data).hexdigest() != digest:
        raise ExecutorError(f"the shipped source does not match its digest {digest}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=target.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            # Python < 3.10.12 has no extraction filters; the tarball is our own.
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(staging, **safe)  # type: ignore[arg-type]
        try:
            staging.rename(target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def rebase(value: Any, moves: Mapping[Path, Path]) -> Any:
    """``value`` with every path under a key of ``moves`` moved under its value, through
    dataclasses, tuples, lists and mappings (a plan made on the controller, made to
    point into a worker's copy of the project). What holds no such path is returned as
    it is."""
    if isinstance(value, PurePath):
        for old, new in moves.items():
            if value == old or old in value.parents:
                return type(value)(new, value.relative_to(old))
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for item in dataclasses.fields(value):
            if not item.init:
                continue
            current = getattr(value, item.name)
            moved = rebase(current, moves)
            if moved is not current:
                changes[item.name] = moved
        return dataclasses.replace(value, **changes) if changes else value
    if isinstance(value, (tuple, list)):
        items = [rebase(item, moves) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, (dict, MappingProxyType)):
        pairs = {rebase(key, moves): rebase(item, moves) for key, item in value.items()}
        if all(
            new_key is old_key and pairs[new_key] is old_item
            for new_key, (old_key, old_item) in zip(pairs, value.items(), strict=False)
        ):
            return value
        return MappingProxyType(pairs) if isinstance(value, MappingProxyType) else pairs
    return value
