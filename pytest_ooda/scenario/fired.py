"""What fired in a run, checked: ``expect.activation`` (a skill, subagent, command, MCP
tool or hook ``fired`` or ``not_fired``) and ``expect.trajectory`` (the tool calls, with
argument patterns, ``ordered``, ``any_order`` or as a ``subset``).

Each expectation is one named **assertion** (``skill greet fired``), so a measurement
gives each its own pass rate: "the skill fired in 7 of 10 runs" is read apart from
whether the run succeeded. The facts are the agent's own report: the activations it
derived from its stream (``Activation``), the tool calls with their decoded arguments
(or, for a call read back from an old recording, its summary line).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import ACTIVATION_KINDS, FIRED, TRAJECTORY_MATCHES
from pytest_ooda.yamlnodes import YamlMapping

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda._types import ActivationKind, TrajectoryMatch
    from pytest_ooda.agents import Activation
    from pytest_ooda.backends import ToolCall
    from pytest_ooda.reader import Reader
    from pytest_ooda.yamlnodes import Mark

__all__ = [
    "ActivationExpect",
    "Assertion",
    "CallPattern",
    "TrajectoryExpect",
    "read_activation",
    "read_trajectory",
]


@dataclass(frozen=True)
class Assertion:
    """One named expectation of one run, and whether the run met it."""

    name: str
    passed: bool
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "passed": self.passed}
        if self.detail is not None:
            out["detail"] = self.detail
        return out


def _listing(activations: Sequence[Activation]) -> str:
    labels = list(dict.fromkeys(activation.label for activation in activations))
    return ", ".join(labels) if labels else "nothing"


@dataclass(frozen=True)
class ActivationExpect:
    """``expect.activation``: ``name`` of ``kind`` fired (or did not) in the run."""

    kind: ActivationKind
    name: str
    fired: bool = True
    line: int | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """``skill greet fired``: the assertion's name in reports."""
        return f"{self.kind} {self.name} {'fired' if self.fired else 'not_fired'}"

    def check(self, activations: Sequence[Activation]) -> Assertion:
        hits = [a for a in activations if a.kind == self.kind and a.is_named(self.name)]
        if self.fired and not hits:
            detail = f"{self.kind} {self.name} did not fire (what fired: {_listing(activations)})"
            return Assertion(self.label, False, detail)
        if not self.fired and hits:
            detail = f"{self.kind} {self.name} fired {len(hits)} time(s), expected never"
            return Assertion(self.label, False, detail)
        return Assertion(self.label, True)


@dataclass(frozen=True)
class CallPattern:
    """One expected tool call: the tool's name (``*``: any) and a regular expression
    per argument, searched in the argument's text."""

    tool: str
    arguments: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        if not self.arguments:
            return self.tool
        inner = ", ".join(f"{key}~{pattern}" for key, pattern in self.arguments)
        return f"{self.tool}({inner})"

    def matches(self, call: ToolCall) -> bool:
        if self.tool not in ("*", call.name):
            return False
        values = call.arguments if isinstance(call.arguments, dict) else None
        for key, pattern in self.arguments:
            if values is None:
                # A call read back from an old recording keeps its summary line only.
                text = call.summary
            elif key not in values:
                return False
            else:
                value = values[key]
                text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            if re.search(pattern, text) is None:
                return False
        return True


def _matching(patterns: Sequence[CallPattern], calls: Sequence[ToolCall]) -> int:
    """How many patterns a one-to-one assignment to distinct calls satisfies at most
    (augmenting paths: patterns that overlap do not steal each other's calls)."""
    owner: dict[int, int] = {}

    def assign(index: int, seen: set[int]) -> bool:
        for number, call in enumerate(calls):
            if number in seen or not patterns[index].matches(call):
                continue
            seen.add(number)
            if number not in owner or assign(owner[number], seen):
                owner[number] = index
                return True
        return False

    return sum(assign(index, set()) for index in range(len(patterns)))


@dataclass(frozen=True)
class TrajectoryExpect:
    """``expect.trajectory``: the run's tool calls against ``calls``: ``ordered`` — each
    in this order, other calls between allowed; ``any_order`` — each, to a call of its
    own, in any order; ``subset`` — every call the run made is one of these."""

    calls: tuple[CallPattern, ...]
    match: TrajectoryMatch = "ordered"
    line: int | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        joined = " → " if self.match == "ordered" else ", "
        return f"trajectory {self.match}: {joined.join(call.label for call in self.calls)}"

    def check(self, calls: Sequence[ToolCall]) -> Assertion:
        made = ", ".join(call.name for call in calls[:20]) or "no tool call"
        if self.match == "ordered":
            position = 0
            for pattern in self.calls:
                while position < len(calls) and not pattern.matches(calls[position]):
                    position += 1
                if position == len(calls):
                    detail = f"no {pattern.label} in order (calls made: {made})"
                    return Assertion(self.label, False, detail)
                position += 1
        elif self.match == "any_order":
            found = _matching(self.calls, calls)
            if found < len(self.calls):
                missing = len(self.calls) - found
                detail = f"{missing} of the listed calls not made (calls made: {made})"
                return Assertion(self.label, False, detail)
        else:
            stray = [call for call in calls if not any(p.matches(call) for p in self.calls)]
            if stray:
                shown = ", ".join(f"{call.name}: {call.summary}" for call in stray[:5])
                return Assertion(self.label, False, f"calls not listed: {shown}")
        return Assertion(self.label, True)

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.match != "ordered":
            out["match"] = self.match
        out["calls"] = [
            {call.tool: dict(call.arguments)} if call.arguments else call.tool
            for call in self.calls
        ]
        return out


# --------------------------------------------------------------------------- reading


def read_activation(check: Reader, value: Any, mark: Mark) -> tuple[ActivationExpect, ...]:
    """``expect.activation``: per kind a name (it fired), a list of names, or a mapping
    of names to ``fired`` / ``not_fired``."""
    block = check.mapping(value, mark, "expect.activation")
    check.keys(block, ACTIVATION_KINDS, "expect.activation")
    found: list[ActivationExpect] = []
    for kind in block:
        where = f"expect.activation.{kind}"
        entry, at = check.get(block, kind)
        if isinstance(entry, YamlMapping):
            for name in entry:
                key_at = entry.key_marks.get(name, entry.mark)
                text = check.text(name, key_at, f"{where} key")
                state, state_at = check.get(entry, name)
                word = check.choice(state, state_at, f"{where}.{text}", FIRED)
                found.append(ActivationExpect(kind, text, word == "fired", key_at.line))
            continue
        for index, name in enumerate(check.texts(entry, at, where)):
            if not name.strip():
                raise check.fail(f"{where}[{index}]: a name cannot be empty", at)
            found.append(ActivationExpect(kind, name.strip(), True, at.line))
    if not found:
        raise check.fail("expect.activation: name at least one skill, subagent, command, …", mark)
    return tuple(found)


def read_trajectory(check: Reader, value: Any, mark: Mark) -> tuple[TrajectoryExpect, ...]:
    """``expect.trajectory``: one block (``match:`` and ``calls:``) or a list of them."""
    if isinstance(value, list):
        return tuple(
            _trajectory(check, item, at, f"expect.trajectory[{index}]")
            for index, (item, at) in enumerate(check.items(value, mark, "expect.trajectory"))
        )
    return (_trajectory(check, value, mark, "expect.trajectory"),)


def _trajectory(check: Reader, value: Any, mark: Mark | None, where: str) -> TrajectoryExpect:
    block = check.mapping(value, mark, where)
    check.keys(block, ("match", "calls"), where)
    match = "ordered"
    if block.get("match") is not None:
        match = check.choice(*check.get(block, "match"), f"{where}.match", TRAJECTORY_MATCHES)
    if block.get("calls") is None:
        raise check.fail(
            f"{where}: missing 'calls'",
            block.mark,
            "list the tool calls, e.g. calls: [{Skill: {skill: greet}}, Write]",
        )
    items = check.items(*check.get(block, "calls"), f"{where}.calls")
    if not items:
        raise check.fail(f"{where}.calls: list at least one call", block.mark)
    calls = tuple(
        _call(check, item, at, f"{where}.calls[{index}]") for index, (item, at) in enumerate(items)
    )
    chosen: TrajectoryMatch = (
        "any_order" if match == "any_order" else ("subset" if match == "subset" else "ordered")
    )
    return TrajectoryExpect(calls, chosen, line=block.mark.line)


def _call(check: Reader, value: Any, mark: Mark | None, where: str) -> CallPattern:
    """``Write``, or ``{Bash: {command: "pytest"}}``: a tool and its argument patterns."""
    if isinstance(value, str):
        if not value.strip():
            raise check.fail(f"{where}: a tool name cannot be empty", mark)
        return CallPattern(value.strip())
    entry = check.mapping(value, mark, where)
    if len(entry) != 1:
        raise check.fail(
            f"{where}: expected one tool, as {{Bash: {{command: pytest}}}}, got {len(entry)} keys",
            mark,
        )
    (tool,) = entry
    name = check.text(tool, entry.key_marks.get(tool, mark), f"{where} key")
    arguments, at = check.get(entry, tool)
    if arguments is None:
        return CallPattern(name)
    patterns = check.mapping(arguments, at, f"{where}.{name}")
    found = tuple(
        (
            check.text(key, patterns.key_marks.get(key, at), f"{where}.{name} key"),
            check.pattern(*check.get(patterns, key), f"{where}.{name}.{key}"),
        )
        for key in patterns
    )
    return CallPattern(name, found)
