"""A replay divergence: a request the cassette has no answer for, shown against the
nearest recorded request as a diff of their canonical forms.

The canonical forms are rendered one leaf per line (``messages[2].content[0].text: …``),
a text of several lines as an indented block, so the diff shows the changed lines of a
prompt or a tool result rather than one changed JSON string. :meth:`Divergence.changed_texts`
gives those texts for the caller that knows where they came from (the live run maps a
changed prompt to the fragment lines behind it).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ooda.apireplay.canonical import PART_LISTS, expand_skeleton, part_names
from pytest_ooda.replay_rules import near_misses

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from pytest_ooda.apireplay.canonical import Canonical
    from pytest_ooda.apireplay.cassette import Cassette, Exchange
    from pytest_ooda.replay_rules import ReplayRule

__all__ = ["Divergence", "nearest", "render_canonical"]

#: Diff lines shown at most (the rest is counted).
MAX_DIFF_LINES = 120


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def _scoped(value: Any, path: str, in_result: bool = False) -> Iterator[tuple[str, Any, bool]]:
    """:func:`_leaves` with whether each sits in a tool result."""
    if isinstance(value, dict) and value:
        inside = in_result or value.get("type") in ("tool_result", "function_call_output")
        for key, item in value.items():
            yield from _scoped(item, f"{path}.{key}" if path else str(key), inside)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _scoped(item, f"{path}[{index}]", in_result)
    else:
        yield path, value, in_result


def _changed_lines(old: str, new: str) -> list[tuple[str, str]]:
    """The lines that differ between two texts, paired (a replaced block line by line)."""
    a, b = old.split("\n"), new.split("\n")
    pairs: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace":
            pairs.extend(zip(a[i1:i2], b[j1:j2], strict=False))
    return pairs[:20]


def render_canonical(body: Any) -> list[str]:
    """``body`` as lines, one leaf each; a multi-line text as an indented block."""
    lines: list[str] = []
    for path, value in _leaves(body, ""):
        if isinstance(value, str) and "\n" in value:
            lines.append(f"{path}: |")
            lines.extend(f"    {line}" for line in value.split("\n"))
        else:
            lines.append(f"{path}: {json.dumps(value, ensure_ascii=False)}")
    return lines


_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@\Z")


def _with_leaf(line: str, new: Sequence[str]) -> str:
    """A hunk header with the value its first line belongs to (as ``git diff`` names
    the function), so a hunk inside a long text says which text it is."""
    found = _HUNK.match(line)
    if found is None:
        return line
    for index in range(int(found.group(1)) - 1, -1, -1):
        if index < len(new) and not new[index].startswith("    "):
            return f"{line} {new[index].split(': ', 1)[0]}"
    return line


def _prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def _score(request: Any, skeleton: Any, parts: set[str]) -> tuple[int, int, int, int]:
    """How close a recorded skeleton is to the one asked for: the conversation's common
    opening, how near its length is, the parts both have, the top-level fields equal."""
    if not isinstance(request, dict) or not isinstance(skeleton, dict):
        return (0, 0, 0, int(request == skeleton))
    lists: list[tuple[list[Any], list[Any]]] = []
    for name in PART_LISTS:
        recorded, asked = request.get(name), skeleton.get(name)
        if isinstance(recorded, list) and isinstance(asked, list):
            lists.append((recorded, asked))
    opening = sum(_prefix(recorded, asked) for recorded, asked in lists)
    gap = sum(abs(len(recorded) - len(asked)) for recorded, asked in lists)
    shared = len(parts & set(part_names(request)))
    equal = sum(1 for k, v in skeleton.items() if request.get(k) == v)
    return (opening, -gap, shared, equal)


def nearest(request: Canonical, exchanges: Sequence[Exchange]) -> Exchange | None:
    """The replayable exchange of ``exchanges`` closest to ``request``: of its endpoint
    when there is one (else of any), the longest common opening of the conversation
    first."""
    parts = set(part_names(request.skeleton))
    candidates = [e for e in exchanges if e.replay and e.endpoint == request.endpoint] or [
        e for e in exchanges if e.replay
    ]
    return max(candidates, key=lambda e: _score(e.request, request.skeleton, parts), default=None)


@dataclass
class Divergence:
    """A request no recorded exchange answers."""

    request: Canonical
    #: The closest recorded exchange (``None``: the cassette has none of this endpoint).
    nearest: Exchange | None
    #: How often the same request was served already, and how often it was recorded.
    served: int = 0
    recorded: int = 0
    cassette: Cassette | None = field(default=None, repr=False)

    @classmethod
    def find(
        cls, request: Canonical, cassette: Cassette, *, served: int, recorded: int
    ) -> Divergence:
        """The divergence of ``request``, with its nearest recorded exchange."""
        return cls(request, nearest(request, cassette.exchanges), served, recorded, cassette)

    def recorded_body(self) -> Any:
        if self.nearest is None or self.cassette is None:
            return None
        return expand_skeleton(self.nearest.request, self.cassette.parts.get)

    def diff(self, *, limit: int = MAX_DIFF_LINES) -> str:
        """The unified diff of the nearest recorded request against this one."""
        old = render_canonical(self.recorded_body()) if self.nearest is not None else []
        new = render_canonical(self.request.expanded())
        where = f"exchange {self.nearest.number}" if self.nearest is not None else "nothing"
        if self.nearest is not None and self.nearest.line is not None:
            where += f", line {self.nearest.line}"
        lines = [
            _with_leaf(line, new)
            for line in difflib.unified_diff(
                old,
                new,
                fromfile=f"recorded ({where})",
                tofile="requested now",
                lineterm="",
                n=2,
            )
        ]
        if len(lines) > limit:
            lines = [*lines[:limit], f"… ({len(lines) - limit} more diff lines)"]
        return "\n".join(lines)

    def changed_texts(self) -> list[tuple[str, str, str]]:
        """``(path, recorded, requested)`` of each multi-line text that differs at the
        same place in both requests."""
        old = dict(_leaves(self.recorded_body(), "")) if self.nearest is not None else {}
        out: list[tuple[str, str, str]] = []
        for path, value in _leaves(self.request.expanded(), ""):
            before = old.get(path)
            if (
                isinstance(value, str)
                and isinstance(before, str)
                and value != before
                and ("\n" in value or "\n" in before)
            ):
                out.append((path, before, value))
        return out

    def rule_hints(self, rules: Sequence[ReplayRule], *, limit: int = 3) -> list[str]:
        """Which ``replay_normalise:`` rule would have absorbed the change, where one
        nearly does (:func:`~pytest_ooda.replay_rules.near_misses`), for the first
        changed lines; empty when none comes close."""
        if self.nearest is None:
            return []
        old = dict((path, value) for path, value, _ in _scoped(self.recorded_body(), ""))
        notes: list[str] = []
        for path, value, in_result in _scoped(self.request.expanded(), ""):
            before = old.get(path)
            if not isinstance(value, str) or not isinstance(before, str) or value == before:
                continue
            for was, now in _changed_lines(before, value):
                for note in near_misses(was, now, rules, tool_result=in_result):
                    if note not in notes:
                        notes.append(note)
            if len(notes) >= limit:
                break
        return notes[:limit]

    def headline(self) -> str:
        if self.nearest is None:
            return f"replay divergence: the cassette holds no {self.request.endpoint} request"
        if self.recorded and self.served >= self.recorded:
            return (
                f"replay divergence: {self.request.endpoint} asked again, but the cassette "
                f"holds this request {self.recorded} time(s) and all were served"
            )
        return (
            f"replay divergence: no recorded answer for this {self.request.endpoint} "
            f"request; the nearest recorded one is exchange {self.nearest.number}"
        )

    def describe(self) -> str:
        """The headline and the diff."""
        text = self.headline()
        if self.nearest is not None and not (self.recorded and self.served >= self.recorded):
            text += "\n" + self.diff()
        return text
