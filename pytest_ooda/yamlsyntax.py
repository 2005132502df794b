"""Explaining a YAML syntax error to the person who made it.

PyYAML reports where its parser gave up, in the parser's words ("while parsing a block
mapping (at line 2, column 3): expected <block end>, but found '<block mapping start>'").
Most such errors in a hand-written config are an indentation slip, and the line the
parser names is not always the one that slipped: a key indented two spaces too deep is
only noticed at its next sibling. This module reads the lines around the parser's mark
and says which line is out of step with its neighbours, and by how much.

A syntax error stops the whole file (YAML cannot be read past it), so the hint says that
nothing in the file was loaded until it is fixed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["Explained", "explain"]

#: What the hint adds: a syntax error hides every other part of the file.
NOTHING_LOADED = (
    "YAML cannot be read past this mistake: nothing in the file loaded until it is fixed"
)


@dataclass(frozen=True)
class Explained:
    """A syntax error restated: the line (1-based) and column it is at, and what is wrong."""

    line: int
    column: int
    message: str


def _indent(text: str) -> int | None:
    """The indentation of a line holding content (``None`` for blank and comment lines)."""
    stripped = text.lstrip(" ")
    if not stripped.strip() or stripped.startswith("#"):
        return None
    return len(text) - len(stripped)


def _usual_step(lines: list[str]) -> int | None:
    """The indentation step the file uses most: how much deeper a key's block is."""
    steps: Counter[int] = Counter()
    previous: int | None = None
    opens = False
    for text in lines:
        indent = _indent(text)
        if indent is None:
            continue
        if opens and previous is not None and indent > previous:
            steps[indent - previous] += 1
        previous, opens = indent, text.rstrip().endswith(":")
    return steps.most_common(1)[0][0] if steps else None


def _enclosing(lines: list[str], line: int) -> list[tuple[int, int]]:
    """The content lines above ``line`` that each start a shallower block, nearest first:
    ``(line, indent)`` pairs, indentation strictly decreasing."""
    found: list[tuple[int, int]] = []
    lowest: int | None = None
    for number in range(line - 1, 0, -1):
        indent = _indent(lines[number - 1])
        if indent is None or (lowest is not None and indent >= lowest):
            continue
        found.append((number, indent))
        lowest = indent
        if indent == 0:
            break
    return found


def _block_start(lines: list[str], parent: int, indent: int) -> int:
    """The first content line after ``parent`` (a block's opening line) at ``indent``."""
    for number in range(parent + 1, len(lines) + 1):
        if _indent(lines[number - 1]) == indent:
            return number
    return parent + 1


def explain(text: str, line: int, problem: str, context: str) -> Explained | None:
    """Say which line is out of step when the parser's complaint at ``line`` (1-based)
    is an indentation slip; ``None`` when it is something else."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    own = _indent(lines[line - 1])
    if own is None:
        return None
    slip = "expected <block end>" in problem or "mapping values are not allowed" in problem
    if not slip:
        return None
    above = _enclosing(lines, line)
    if not above:
        return None
    near_line, near = above[0]
    spaces = f"{own} space{'s' if own != 1 else ''}"
    if own > near:
        return Explained(
            line,
            own + 1,
            f"inconsistent indentation: line {line} is indented {spaces}, deeper than "
            f"line {near_line} above it ({near} spaces), whose value is complete: nothing can be "
            "nested under it",
        )
    outer = next(((n, i) for n, i in above if i < own), None)
    if outer is None:
        return None
    outer_line, outer_indent = outer
    near_line, near = [(n, i) for n, i in above if i > own][-1]
    step = _usual_step(lines)
    first = _block_start(lines, outer_line, near)
    if step is not None and near - outer_indent != step and own - outer_indent == step:
        # The block this line leaves was indented too deep, from its first line on.
        return Explained(
            first,
            near + 1,
            f"inconsistent indentation: line {first} is indented {near} spaces under line "
            f"{outer_line} ({outer_indent}), where this file indents by {step}; line {line} "
            f"below it, at {own}, is indented as expected",
        )
    return Explained(
        line,
        own + 1,
        f"inconsistent indentation: line {line} is indented {spaces}, which matches no "
        f"block above it (line {near_line} is indented {near} spaces, line {outer_line} "
        f"{outer_indent})",
    )
