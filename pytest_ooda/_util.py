"""Small helpers every layer shares: suggestions, atomic writes, paths in messages."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable


def did_you_mean(
    word: str,
    known: Iterable[str],
    *,
    label: str | None = None,
    cutoff: float = 0.6,
) -> str:
    """A hint for an unknown name: ``did you mean 'x'?`` when one is close, then (with
    ``label``) the known names, e.g. ``known procedures: a, b``. Empty when neither."""
    import difflib

    names = sorted(set(known))
    close = difflib.get_close_matches(word, names, n=1, cutoff=cutoff)
    parts: list[str] = []
    if close:
        parts.append(f"did you mean {close[0]!r}?")
    if label is not None:
        parts.append(f"{label}: {', '.join(names) if names else '(none)'}")
    return "\n  ".join(parts)


def closest(word: str, known: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The known name closest to ``word``, or ``None`` when none is close enough."""
    import difflib

    close = difflib.get_close_matches(word, sorted(set(known)), n=1, cutoff=cutoff)
    return close[0] if close else None


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and
    ``os.replace``: a reader sees the old file or the new one, never half of either, and
    an interruption leaves the old file untouched. An existing file keeps its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            keep = path.stat().st_mode & 0o777
        except OSError:
            keep = mode
        with contextlib.suppress(OSError):
            os.chmod(tmp, keep)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text, newlines written as given."""
    atomic_write_bytes(path, text.encode("utf-8", "surrogateescape"), mode=mode)


def display_path(path: str | Path | None, root: Path | None = None) -> str:
    """A path as messages show it: relative to ``root`` (default: the working directory)
    when it lies under it, else as given; ``<unknown>`` for ``None``."""
    if path is None:
        return "<unknown>"
    candidate = Path(path)
    if not candidate.is_absolute():
        return str(path)
    try:
        base = root if root is not None else Path.cwd()
        return candidate.relative_to(base).as_posix()
    except (ValueError, OSError):
        return str(path)


def type_name(value: Any) -> str:
    """How a YAML value is named in messages: its type and, for scalars, the value
    (``an integer (3)``, ``a string ('abc')``, ``a mapping`` …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, (bytes, bytearray)):
        return "binary data"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if type(value).__name__ == "GoTime":
        return f"a timestamp ({value})"
    return type(value).__name__


__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "closest",
    "did_you_mean",
    "display_path",
    "type_name",
]


def json_kinds(kinds: tuple[type, ...]) -> str:
    """JSON types, as ``type(value)`` gives them, named in messages (``a string or
    null``; ``int`` with ``float`` is just ``a number``)."""
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    shown = [names.get(kind, kind.__name__) for kind in kinds]
    if int in kinds and float in kinds:
        shown = [name for name in shown if name != "an integer"]
    return " or ".join(shown)
