"""Fragment files: ``builtin:`` and relative path resolution, and cached loading.

Built-in content (``procedures/builtin.yml`` and ``fragments/``) lives at the repository
root in a source checkout and under ``pytest_ooda/_builtin/`` inside an installed wheel;
``builtin_root()`` finds whichever exists, so ``builtin:`` paths work from any working
directory.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Protocol

from pytest_ooda._util import closest
from pytest_ooda.errors import FragmentError
from pytest_ooda.textfile import read_text_file

BUILTIN_PREFIX = "builtin:"
PHASES = ("observe", "orient", "decide", "act")
MAX_FRAGMENT_BYTES = 10 * 1024 * 1024

#: Built-in fragments rooda's binary ships under other names than its docs (and we) use:
#: each resolves to ours, the fragment our built-in procedures use in the same place
#: (``docs/rooda.md`` lists them). The rooda-only ``orient/understand_chore_request.md``
#: and ``orient/understand_refactor_request.md`` are shipped as fragments of their own.
ROODA_BUILTIN_NAMES: dict[str, str] = {
    "fragments/observe/study_agents_md.md": "fragments/observe/read_agents_md.md",
    "fragments/observe/study_specs.md": "fragments/observe/read_specs.md",
    "fragments/observe/study_impl.md": "fragments/observe/read_impl.md",
    "fragments/observe/study_task_input.md": "fragments/observe/read_task_input.md",
    "fragments/observe/study_draft_plan.md": "fragments/observe/read_draft_plan.md",
    "fragments/observe/study_task_details.md": "fragments/observe/read_task_details.md",
    "fragments/decide/decide_signal.md": "fragments/decide/check_if_blocked.md",
    "fragments/act/emit_signal.md": "fragments/act/emit_success.md",
}

_PACKAGE_DIR = Path(__file__).resolve().parent
_SHIPPED_DIRS = frozenset({"fragments", "procedures"})


@functools.lru_cache(maxsize=1)
def builtin_root() -> Path:
    """The directory holding ``procedures/builtin.yml`` and ``fragments/``."""
    candidates = (_PACKAGE_DIR / "_builtin", _PACKAGE_DIR.parent)
    for candidate in candidates:
        if (candidate / "procedures" / "builtin.yml").is_file():
            return candidate
    # Neither layout is complete (a checkout mid-way through adding the built-ins):
    # point at the source tree so errors name a path a developer recognises.
    return candidates[1]


def builtin_procedures_file() -> Path:
    """``procedures/builtin.yml`` inside :func:`builtin_root`."""
    return builtin_root() / "procedures" / "builtin.yml"


def _builtin_phase(relative: PurePosixPath) -> str | None:
    parts = relative.parts
    if len(parts) >= 2 and parts[0] == "fragments" and parts[1] in PHASES:
        return parts[1]
    return None


def _missing_local_hint(path: str, resolved: Path) -> str | None:
    """``did you mean 'prompts/look.md'?`` when a file next to the missing one (same
    directory, or a directory whose name is close) has a close name."""
    parent = resolved.parent
    try:
        if parent.is_dir():
            names = [entry.name for entry in os.scandir(parent) if entry.is_file()]
            close = closest(resolved.name, names)
            if close is not None:
                return f"did you mean {str(PurePosixPath(path).parent / close)!r}?"
            return None
        grand = parent.parent
        if grand.is_dir():
            dirs = [entry.name for entry in os.scandir(grand) if entry.is_dir()]
            close_dir = closest(parent.name, dirs)
            if close_dir is not None and (grand / close_dir / resolved.name).is_file():
                suggestion = PurePosixPath(path).parent.parent / close_dir / resolved.name
                return f"did you mean {str(suggestion)!r}?"
    except OSError:
        return None
    return None


def _missing_builtin_hint(path: str, relative: PurePosixPath) -> str:
    phase = _builtin_phase(relative)
    available = list_builtin_fragments(phase)
    close = closest(path, available)
    where = f"phase {phase}" if phase else "all phases"
    listing = ", ".join(name.rsplit("/", 1)[-1] for name in available) or "(none)"
    hint = f"available built-ins for {where}: {listing}"
    if close:
        hint = f"did you mean {close!r}?\n  {hint}"
    return hint


_builtin_resolved: dict[tuple[Path, str], Path] = {}


def resolve_fragment_path(path: str, base_dir: Path) -> Path:
    """Resolve a fragment ``path`` as written in a config file to an existing file.

    ``builtin:`` paths resolve inside :func:`builtin_root` and may not leave it (rooda's
    names for built-ins resolve to ours: ``ROODA_BUILTIN_NAMES``); any other path
    resolves against ``base_dir`` (the declaring config file's directory).
    Raises ``FragmentError`` (without a location; the caller adds the config location).
    """
    if path.startswith(BUILTIN_PREFIX):
        rest = path[len(BUILTIN_PREFIX) :]
        relative = PurePosixPath(rest)
        if (
            not rest
            or "\\" in rest
            or relative.is_absolute()
            or ".." in relative.parts
            or rest.startswith("~")
        ):
            raise FragmentError(
                f"built-in fragment path leaves the built-in tree: {path}",
                hint="write builtin:fragments/<phase>/<name>.md",
            )
        rest = ROODA_BUILTIN_NAMES.get(rest, rest)
        relative = PurePosixPath(rest)
        root = builtin_root()
        cached = _builtin_resolved.get((root, rest))
        if cached is not None:
            return cached
        resolved = root.joinpath(*relative.parts)
        # In a source checkout the built-in root is the repository root; only the parts
        # that the wheel ships count, so both layouts accept the same paths.
        if relative.parts[0] not in _SHIPPED_DIRS or not resolved.is_file():
            raise FragmentError(
                f"embedded fragment not found: {path}", hint=_missing_builtin_hint(path, relative)
            )
        # A symlink inside the package must not smuggle in files from elsewhere.
        if not resolved.resolve().is_relative_to(root.resolve()):
            raise FragmentError(f"built-in fragment path leaves the built-in tree: {path}")
        # Shipped files do not come and go while a process runs; every built-in procedure
        # names the same few dozen, so remember the answers.
        _builtin_resolved[(root, rest)] = resolved
        return resolved
    if not path:
        raise FragmentError("fragment path is empty")
    resolved = Path(os.path.abspath(base_dir / path))
    where = f"{path} (resolved to {resolved})"
    try:
        mode = os.stat(resolved).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if os.path.islink(resolved):
            raise FragmentError(
                f"fragment file is a broken symbolic link: {where}",
                hint=f"it points to {os.readlink(resolved)}",
            ) from None
        hint = None
        if path != path.strip():
            hint = f"the path has leading or trailing white space: {path!r}"
        else:
            hint = _missing_local_hint(path, resolved)
        raise FragmentError(f"fragment file not found: {where}", hint=hint) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FragmentError(f"fragment path is a symbolic link loop: {where}") from None
        raise FragmentError(f"cannot access fragment file {where}: {exc.strerror or exc}") from None
    except ValueError:
        raise FragmentError(f"fragment path is not a valid file name: {path!r}") from None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise FragmentError(f"fragment path is {kind}: {where}")
    return resolved


_text_cache: dict[Path, tuple[int, int, str]] = {}


def read_fragment_file(file: Path) -> str:
    """The text of a fragment file, cached by (path, mtime, size)."""
    try:
        stat = file.stat()
    except OSError as exc:
        raise FragmentError(f"cannot read fragment file {file}: {exc.strerror or exc}") from None
    cached = _text_cache.get(file)
    if cached is not None and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
        return cached[2]
    text = read_text_file(
        file,
        error=FragmentError,
        max_bytes=MAX_FRAGMENT_BYTES,
        what="fragment file",
        keep_bom=True,
    )
    _text_cache[file] = (stat.st_mtime_ns, stat.st_size, text)
    return text


class FragmentSource(Protocol):
    """What :func:`load_fragment_text` needs of a fragment action (``config.FragmentAction``
    has it); a protocol so this module stays a leaf that knows nothing of config."""

    @property
    def content(self) -> str | None: ...
    @property
    def path(self) -> str | None: ...
    @property
    def base_dir(self) -> Path: ...
    @property
    def file(self) -> Path | None: ...


def load_fragment_text(action: FragmentSource) -> str:
    """The raw (unrendered) text of a fragment action: inline content or the file's text."""
    if action.path is None:
        return action.content or ""
    file = (
        action.file
        if action.file is not None
        else resolve_fragment_path(action.path, action.base_dir)
    )
    return read_fragment_file(file)


def list_builtin_fragments(phase: str | None = None) -> list[str]:
    """Sorted ``builtin:fragments/<phase>/<name>.md`` names (one phase, or all)."""
    root = builtin_root() / "fragments"
    phases = (phase,) if phase is not None else PHASES
    names: list[str] = []
    for name in phases:
        directory = root / name
        if directory.is_dir():
            names.extend(
                f"{BUILTIN_PREFIX}fragments/{name}/{entry.name}"
                for entry in directory.iterdir()
                if entry.is_file() and entry.suffix == ".md"
            )
    return sorted(names)
