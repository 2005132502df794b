"""Rules that make an agent's everyday tool output replayable (``replay_normalise:``).

An agent replay matches each model request against the cassette. A request carries the
results of the agent's tools: an ``ls -la`` holds modification times, a test run its
duration, a script its temporary file names, so the same session recorded at 09:14 no
longer matches at 09:15. A rule is a regular expression and its replacement, applied to
the text of each request *after* it is read as JSON (so a pattern sees real newlines and
quotes, not JSON escapes), at record and replay time alike: the cassette keeps the
normalised text, and today's request is normalised the same way before it is matched.

A rule's ``in:`` scope says which strings it rewrites: ``tool_results`` (the results of
tool calls the agent sends back: Anthropic's ``tool_result`` blocks, OpenAI's
``function_call_output`` items), ``requests`` (everything else the request holds: the
system prompt, the prompts, the agent's own messages) or ``both``. The built-in rules
(``BUILTIN_RULES``) cover ``ls -l`` dates, durations and temporary names; a config's and
a scenario's own rules come after them.

This module is a leaf (the config and scenario readers use it, and so does the replay
proxy); :func:`read_rules` reads a ``replay_normalise:`` list with located errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.reader import Reader
    from pytest_ooda.yamlnodes import Mark

__all__ = [
    "BUILTIN_RULES",
    "RULE_SCOPES",
    "ReplayRule",
    "RuleScope",
    "apply_rules",
    "near_misses",
    "read_rules",
]

#: Which strings of a request a rule rewrites.
RuleScope = Literal["tool_results", "requests", "both"]
RULE_SCOPES: tuple[RuleScope, ...] = get_args(RuleScope)
_RULE_KEYS = ("pattern", "replacement", "in")


@dataclass(frozen=True)
class ReplayRule:
    """One ``replay_normalise:`` rule: ``pattern`` (Python ``re``) replaced by
    ``replacement`` (``\\1`` refers to a group) in the strings ``scope`` names;
    ``origin`` says where it was written (``built-in: ls -l dates``, ``file:line``)."""

    pattern: str
    replacement: str
    scope: RuleScope = "both"
    origin: str = ""
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern))

    def applies_to(self, tool_result: bool) -> bool:
        return self.scope == "both" or (self.scope == "tool_results") == tool_result

    def apply(self, text: str) -> str:
        return self.compiled.sub(self.replacement, text)

    def to_yaml(self) -> dict[str, str]:
        return {"pattern": self.pattern, "replacement": self.replacement, "in": self.scope}


_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"

#: What every agent replay normalises besides paths, ISO dates and UUIDs.
BUILTIN_RULES: tuple[ReplayRule, ...] = (
    # `ls -l`: "Dec  7 03:22" (this year) or "Nov 27  2025" (older).
    ReplayRule(
        rf"\b{_MONTH} [ \d]\d (?:\d\d:\d\d| \d{{4}})\b",
        "<ooda:ls-date>",
        "tool_results",
        "built-in: ls -l dates",
    ),
    # `ls -l --time-style=full-iso` / `long-iso` after the ISO date is normalised.
    ReplayRule(
        r"(<ooda:date>[ T])\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: [+-]\d{4})?",
        r"\1<ooda:time>",
        "tool_results",
        "built-in: clock times after a date",
    ),
    # "in 0.03s", "took 12ms", "real 0m0.004s", "(1.2 seconds)".
    ReplayRule(
        r"\b\d+m\d+(?:\.\d+)?s\b|\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds)\b",
        "<ooda:duration>",
        "tool_results",
        "built-in: durations",
    ),
    # Python's tempfile (tmpk3j_x9ab), mktemp (tmp.Xa8fQ2ZpLm), pytest's base temp.
    ReplayRule(
        r"\btmp(?:[a-z0-9_]{8}|\.[A-Za-z0-9]{10})\b",
        "<ooda:tmp-name>",
        "both",
        "built-in: temporary names",
    ),
    ReplayRule(
        r"\b(pytest-of-[\w.-]+/pytest-)\d+\b",
        r"\1<n>",
        "both",
        "built-in: pytest's temporary folders",
    ),
)

# Where a request keeps the results of tool calls (blocks of these types, and the
# messages of role "tool" of the chat-completions API).
_TOOL_RESULT_TYPES = frozenset({"tool_result", "function_call_output"})


def apply_rules(body: Any, rules: Sequence[ReplayRule]) -> Any:
    """``body`` (a parsed request) with each string rewritten by the rules whose scope
    covers where it sits."""
    if not rules:
        return body
    return _walk(body, rules, tool_result=False)


def _walk(value: Any, rules: Sequence[ReplayRule], *, tool_result: bool) -> Any:
    if isinstance(value, str):
        for rule in rules:
            if rule.applies_to(tool_result):
                value = rule.apply(value)
        return value
    if isinstance(value, list):
        return [_walk(item, rules, tool_result=tool_result) for item in value]
    if isinstance(value, dict):
        # A JSON schema's "type" may be a list (["string", "null"]): not a block type.
        # A chat-completions message of role "tool" is a tool's result as a whole.
        kind = value.get("type")
        inside = (
            tool_result
            or (isinstance(kind, str) and kind in _TOOL_RESULT_TYPES)
            or value.get("role") == "tool"
        )
        return {
            key: _walk(item, rules, tool_result=inside and key != "type")
            for key, item in value.items()
        }
    return value


#: Shapes of volatile text a user rule could absorb, for the divergence report.
_SUGGESTIONS: tuple[tuple[str, str, str], ...] = (
    ("a clock time", r"\d\d:\d\d(?::\d\d(?:\.\d+)?)?", "<time>"),
    ("a hexadecimal id", r"\b[0-9a-f]{7,40}\b", "<id>"),
    ("a number", r"\d+", "<n>"),
)


def near_misses(
    old: str, new: str, rules: Sequence[ReplayRule], *, tool_result: bool | None
) -> list[str]:
    """Why no rule absorbed the change from ``old`` (recorded) to ``new`` (today), and
    which would: a rule scoped elsewhere that makes them equal, a rule whose pattern
    matches one side only, or a rule of a common volatile shape that would. Empty when
    nothing comes close. ``tool_result``: whether the text sits in a tool result
    (``None``: not known)."""
    notes: list[str] = []
    for rule in rules:
        label = rule.origin or f"pattern {rule.pattern!r}"
        if rule.apply(old) == rule.apply(new):
            if tool_result is not None and not rule.applies_to(tool_result):
                where = "a tool result" if tool_result else "the request, outside tool results"
                notes.append(
                    f"rule {label} (in: {rule.scope}) would absorb it, but the change is in "
                    f"{where}: give it `in: both`"
                )
            continue
        if bool(rule.compiled.search(old)) != bool(rule.compiled.search(new)):
            side = "the recorded text" if rule.compiled.search(old) else "today's text"
            notes.append(
                f"rule {label} nearly does: its pattern {rule.pattern!r} matches {side} only"
            )
    if notes:
        return notes
    scope: RuleScope = "tool_results" if tool_result else "both"
    for shape, pattern, replacement in _SUGGESTIONS:
        rule = ReplayRule(pattern, replacement, scope)
        if rule.apply(old) == rule.apply(new):
            notes.append(
                f"the change is {shape}: a rule would absorb it, e.g. replay_normalise: "
                f"[{{pattern: '{pattern}', replacement: '{replacement}', in: {scope}}}]"
            )
            break
    return notes


def read_rules(check: Reader, value: Any, mark: Mark, where: str) -> tuple[ReplayRule, ...]:
    """A ``replay_normalise:`` list: each item ``{pattern, replacement, in}``, located."""
    rules: list[ReplayRule] = []
    for index, (item, at) in enumerate(check.items(value, mark, where)):
        here = f"{where}[{index}]"
        entry = check.mapping(item, at, here)
        check.keys(entry, _RULE_KEYS, here)
        if entry.get("pattern") is None:
            raise check.fail(
                f"{here}: missing 'pattern'",
                at,
                "a regular expression, e.g. pattern: 'took \\d+ms'",
            )
        pattern = check.pattern(*check.get(entry, "pattern"), f"{here}.pattern")
        if not pattern:
            raise check.fail(f"{here}.pattern: the pattern is empty", at)
        replacement = ""
        if entry.get("replacement") is not None:
            replacement = check.text(*check.get(entry, "replacement"), f"{here}.replacement")
        scope = "both"
        if entry.get("in") is not None:
            scope = check.choice(*check.get(entry, "in"), f"{here}.in", RULE_SCOPES)
        try:
            re.compile(pattern).sub(replacement, "")
        except (re.error, IndexError) as exc:
            raise check.fail(
                f"{here}.replacement: {replacement!r} does not fit the pattern: {exc}",
                check.get(entry, "replacement")[1],
            ) from None
        line = at.line if at is not None else None
        origin = f"{check.file}:{line}" if check.file is not None and line else here
        rules.append(
            ReplayRule(
                pattern,
                replacement,
                "tool_results"
                if scope == "tool_results"
                else "requests"
                if scope == "requests"
                else "both",
                origin,
            )
        )
    return tuple(rules)
