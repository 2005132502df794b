"""Reading a user's text file — a config, a scenario, a fragment — safely:
a regular file only (a FIFO would block), a size cap, UTF-8 with the byte where decoding
fails located, and no NUL bytes (binary junk), each a located ``OodaError``."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from pytest_ooda.errors import ConfigError, OodaError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["MAX_BYTES", "line_col", "read_text_file"]

#: The default cap: no config a person wrote is this large (scenarios and fragments
#: pass caps of their own).
MAX_BYTES = 10 * 1024 * 1024


def line_col(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of ``text[index]``."""
    index = max(0, min(index, len(text)))
    line = text.count("\n", 0, index) + 1
    start = text.rfind("\n", 0, index) + 1
    return line, index - start + 1


def read_text_file(
    path: str | Path,
    *,
    display: str | Path | None = None,
    error: type[OodaError] = ConfigError,
    max_bytes: int = MAX_BYTES,
    what: str = "file",
    keep_bom: bool = False,
) -> str:
    """Read a UTF-8 text file with the size cap and located decoding errors.

    A leading byte order mark is dropped unless ``keep_bom`` (fragments keep it: Go
    reads the bytes as they are, and ``TrimSpace`` does not remove U+FEFF).
    """
    name = str(display if display is not None else path)
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"cannot read {what}: it is a directory", file=name)
        if not stat.S_ISREG(info.st_mode):
            # A FIFO or a device would block or never end; no config or scenario is one.
            raise error(f"cannot read {what}: not a regular file", file=name)
        size = info.st_size
        if size > max_bytes:
            raise error(
                f"{what} is too large: {size} bytes (limit {max_bytes} bytes)",
                file=name,
                line=1,
                column=1,
            )
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror or exc}", file=name) from None
    if len(data) > max_bytes:
        raise error(f"{what} is too large (limit {max_bytes} bytes)", file=name, line=1, column=1)
    try:
        text = data.decode("utf-8" if keep_bom else "utf-8-sig")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", errors="replace")
        line, col = line_col(prefix, len(prefix))
        hint = None
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            hint = "the file is UTF-16 (its first bytes say so); save it as UTF-8"
        elif exc.start < len(data) and 0x80 <= data[exc.start] <= 0xFF:
            hint = "save the file as UTF-8 (it looks like Latin-1 or Windows-1252 text)"
        raise error(
            f"{what} is not valid UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            file=name,
            line=line,
            column=col,
            hint=hint,
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        line, col = line_col(text, nul)
        raise error(
            f"{what} contains a NUL byte: it looks binary, not text",
            file=name,
            line=line,
            column=col,
        )
    return text
