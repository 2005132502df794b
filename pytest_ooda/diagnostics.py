"""Rendering a located mistake for a person: ``file:line:col: message``, the hint, the
numbered lines around it with a caret under the column, and for a template error the
fragment lines around the template line.

One module for both front ends (no pytest import): the plugin's failure reports and the
``ooda`` command's error lines read the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_ooda._util import display_path
from pytest_ooda.errors import OodaError, OodaWarning, TemplateError

if TYPE_CHECKING:
    from collections.abc import Sequence


class FindingLike(Protocol):
    """What :func:`format_findings` reads of a lint finding (``lint.Finding``); a
    protocol, so that this module, which the scenario package uses, needs no lint."""

    @property
    def file(self) -> str | None: ...

    @property
    def line(self) -> int | None: ...

    @property
    def column(self) -> int | None: ...

    @property
    def hint(self) -> str | None: ...

    @property
    def why(self) -> str: ...

    def format(self, *, relative_to: Path | None = None) -> str: ...


#: Lines shown above and below the located line.
EXCERPT_CONTEXT = 2
#: A file larger than this is not read for an excerpt (the message alone is shown).
_MAX_EXCERPT_FILE = 8 * 1024 * 1024


def file_excerpt(
    path: str | Path, line: int, column: int | None = None, *, context: int = EXCERPT_CONTEXT
) -> list[str]:
    """Numbered lines around ``line`` (1-based), a caret under ``column``."""
    try:
        target = Path(path)
        if not target.is_file() or target.stat().st_size > _MAX_EXCERPT_FILE:
            return []
        text = target.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return []
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return []
    first, last = max(1, line - context), min(len(lines), line + context)
    width = len(str(last))
    out: list[str] = []
    for number in range(first, last + 1):
        marker = ">" if number == line else " "
        out.append(f"  {marker} {number:>{width}} | {lines[number - 1]}")
        if number == line and column:
            out.append(f"    {' ' * width} | {' ' * (column - 1)}^")
    return out


def format_error(error: OodaError | OodaWarning, *, root: Path | None = None) -> str:
    """``file:line:col: message`` + hint, the YAML lines around it, and for a template
    error the fragment lines around the template line; then each further mistake found
    in the same pass (``error.also``), laid out the same way."""
    shown = [_format_one(error, root)]
    shown.extend(
        _format_one(other, root)
        for other in error.also
        if isinstance(other, OodaError | OodaWarning)
    )
    if len(shown) > 1:
        shown.append(f"{len(shown)} mistakes in this file")
    return "\n\n".join(shown)


def _format_one(error: OodaError | OodaWarning, root: Path | None) -> str:
    location = error.location
    if error.file is not None:
        shown = display_path(error.file, root)
        location = ":".join(
            [shown] + [str(part) for part in (error.line, error.column) if part is not None]
        )
    lines = [f"{location}: {error.message}" if location else error.message]
    if error.hint:
        lines.append(f"  {error.hint}")
    if error.file is not None and error.line is not None:
        excerpt = file_excerpt(absolute(error.file, root), error.line, error.column)
        if excerpt:
            lines.append("")
            lines.extend(excerpt)
    fragment = _template_fragment(error)
    if fragment is not None:
        path, line = fragment
        excerpt = file_excerpt(absolute(path, root), line)
        if excerpt:
            lines.append("")
            lines.append(f"  in the template {display_path(path, root)}:")
            lines.extend(excerpt)
    return "\n".join(lines)


def format_findings(findings: Sequence[FindingLike], *, root: Path) -> str:
    """Lint findings, each with its hint, its excerpt and why the rule exists."""
    lines: list[str] = []
    for finding in findings:
        lines.append(finding.format(relative_to=root))
        if finding.hint:
            lines.extend(f"  {line.strip()}" for line in finding.hint.splitlines())
        if finding.file is not None and finding.line is not None:
            lines.extend(file_excerpt(absolute(finding.file, root), finding.line, finding.column))
        lines.append(f"  why: {finding.why}")
    return "\n".join(lines)


def _template_fragment(error: OodaError | OodaWarning) -> tuple[str, int] | None:
    """The fragment file and line a ``TemplateError`` points into."""
    if not isinstance(error, TemplateError):
        return None
    if error.template_file is None or error.template_line is None:
        return None
    return error.template_file, error.template_line


def absolute(file: str, root: Path | None) -> Path:
    """``file`` as given when absolute or present, else under ``root``."""
    path = Path(file)
    if path.is_absolute() or root is None:
        return path
    if path.exists():
        return path
    return root / path
