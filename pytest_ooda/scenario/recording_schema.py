"""Reading what a recording holds: ``iterations:`` (each iteration's output, exit code,
prompt hash, timing, the files the agent changed, usage, tool calls and denials),
``recorded:`` (how the run ended and what it cost) and ``judged:`` (the verdicts kept
for grading offline). A hand-written scenario uses the same keys."""

from __future__ import annotations

from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import STATUSES
from pytest_ooda._util import type_name
from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.scenario.model import (
    _ITERATION_KEYS,
    _RECORDED_KEYS,
    _SHA256,
    _TOOL_CALL_KEYS,
    _USAGE_KEYS,
    RecordedOutcome,
    ScenarioIteration,
)
from pytest_ooda.yamlnodes import YamlSequence, to_plain

if TYPE_CHECKING:
    from pytest_ooda.agents import Activation
    from pytest_ooda.judge import RecordedGrading
    from pytest_ooda.reader import Reader
    from pytest_ooda.yamlnodes import Mark

__all__ = ["read_iterations", "read_judged", "read_recorded"]


def read_iterations(check: Reader, value: Any, mark: Mark) -> tuple[ScenarioIteration, ...]:
    """``iterations:``: the list of what each iteration's agent did."""
    if not isinstance(value, YamlSequence):
        raise check.fail(f"iterations: expected a list, got {type_name(value)}", mark)
    found = [
        check.attempt(_iteration, check, item, value.item_marks[i], i + 1, default=None)
        for i, item in enumerate(value)
    ]
    return tuple(item for item in found if item is not None)


def _iteration(check: Reader, value: Any, mark: Mark, number: int) -> ScenarioIteration:
    """One ``iterations:`` entry (``number`` counts from 1)."""
    where = f"iterations[{number - 1}]"
    item = check.mapping(value, mark, where)
    check.keys(item, _ITERATION_KEYS, where)
    output = check.optional(item, "output", where, check.text, "")
    exit_code = check.optional(item, "exit_code", where, check.integer, 0)
    sha = None
    if item.get("prompt_sha256") is not None:
        value, vmark = check.get(item, "prompt_sha256")
        sha = check.text(value, vmark, f"{where}.prompt_sha256")
        if not _SHA256.match(sha):
            raise check.fail(
                f"{where}.prompt_sha256: expected 64 lowercase hex digits, got {sha!r}", vmark
            )
    prompt = check.optional(item, "prompt", where, check.text, None)
    duration = check.optional(item, "duration_s", where, check.number, None)
    delay = check.optional(item, "delay", where, check.number, 0.0)
    timed_out = False
    if item.get("timed_out") is not None:
        flag, fmark = check.get(item, "timed_out")
        if not isinstance(flag, bool):
            raise check.fail(f"{where}.timed_out: expected true or false", fmark)
        timed_out = flag
    files: dict[str, str | None] = {}
    if item.get("files") is not None:
        changes = check.mapping(*check.get(item, "files"), f"{where}.files")
        for key in changes:
            fname = check.text(key, changes.key_marks.get(key, changes.mark), f"{where}.files key")
            content, cmark = check.get(changes, key)
            if content is not None:
                content = check.text(content, cmark, f"{where}.files[{fname!r}]")
            files[fname] = content
    error = check.optional(item, "error", where, check.text, None)
    usage = check.optional(item, "usage", where, partial(_usage, check), None)
    turns = None
    if item.get("turns") is not None:
        turns = check.integer(*check.get(item, "turns"), f"{where}.turns", 0)
    model = check.optional(item, "model", where, check.text, None)
    calls = check.optional(item, "tool_calls", where, partial(_calls, check), None)
    denials = check.optional(item, "permission_denials", where, partial(_calls, check), ())
    retries = 0
    if item.get("retries") is not None:
        retries = check.integer(*check.get(item, "retries"), f"{where}.retries", 0)
    fired = check.optional(item, "fired", where, partial(_fired, check), ())
    return ScenarioIteration(
        output=output,
        exit_code=exit_code,
        prompt_sha256=sha,
        prompt=prompt,
        duration_s=duration,
        delay=delay,
        timed_out=timed_out,
        files=MappingProxyType(files),
        line=mark.line,
        error=error,
        usage=usage,
        turns=turns,
        model=model,
        tool_calls=calls,
        permission_denials=denials,
        retries=retries,
        activations=fired,
    )


def _usage(check: Reader, value: Any, mark: Mark, where: str) -> Usage:
    block = check.mapping(value, mark, where)
    check.keys(block, _USAGE_KEYS, where)
    counts = {
        key: check.integer(*check.get(block, key), f"{where}.{key}", 0)
        for key in _USAGE_KEYS[:-1]
        if block.get(key) is not None
    }
    cost = check.optional(block, "cost", where, check.number, None)
    return Usage(cost=cost, **counts)


def _calls(check: Reader, value: Any, mark: Mark, where: str) -> tuple[ToolCall, ...]:
    if not isinstance(value, YamlSequence):
        raise check.fail(f"{where}: expected a list, got {type_name(value)}", mark)
    out: list[ToolCall] = []
    for index, item in enumerate(value):
        at = f"{where}[{index}]"
        call = check.mapping(item, value.item_marks[index], at)
        check.keys(call, _TOOL_CALL_KEYS, at)
        if call.get("name") is None:
            raise check.fail(f"{at}: missing 'name'", call.mark)
        name = check.text(*check.get(call, "name"), f"{at}.name")
        summary = check.optional(call, "summary", at, check.text, "")
        ok = check.optional(call, "ok", at, check.flag, None)
        error = check.optional(call, "error", at, check.text, None)
        arguments = None
        if call.get("input") is not None:
            arguments = to_plain(check.mapping(*check.get(call, "input"), f"{at}.input"))
        out.append(ToolCall(name, summary, ok, error, arguments=arguments))
    return tuple(out)


def _fired(check: Reader, value: Any, mark: Mark, where: str) -> tuple[Activation, ...]:
    """``fired: [skill:greet, hook:PreToolUse:Write]``: what fired besides tool calls."""
    from pytest_ooda._types import ACTIVATION_KINDS
    from pytest_ooda.agents import Activation

    found = []
    for index, (item, at) in enumerate(check.items(value, mark, where)):
        label = check.text(item, at, f"{where}[{index}]")
        activation = Activation.parse(label)
        if activation is None:
            raise check.fail(
                f"{where}[{index}]: expected kind:name, the kind one of "
                f"{', '.join(ACTIVATION_KINDS)}, got {label!r}",
                at,
            )
        found.append(activation)
    return tuple(found)


def read_recorded(check: Reader, value: Any, mark: Mark) -> RecordedOutcome:
    """``recorded:``: how the recorded run ended and what it cost, for a person to read."""
    block = check.mapping(value, mark, "recorded")
    check.keys(block, _RECORDED_KEYS, "recorded")
    if block.get("status") is None:
        raise check.fail("recorded: missing 'status'", block.mark)
    status = check.choice(*check.get(block, "status"), "recorded.status", STATUSES)
    reason = check.optional(block, "reason", "recorded", check.text, None)
    count = tokens = None
    if block.get("iterations") is not None:
        count = check.integer(*check.get(block, "iterations"), "recorded.iterations", 0)
    if block.get("tokens") is not None:
        tokens = check.integer(*check.get(block, "tokens"), "recorded.tokens", 0)
    cost = check.optional(block, "cost", "recorded", check.number, None)
    sandbox = None
    if block.get("sandbox") is not None:
        found, where = check.get(block, "sandbox")
        plain = to_plain(found)
        if not isinstance(plain, dict) or not all(
            isinstance(key, str) and isinstance(item, str) for key, item in plain.items()
        ):
            raise check.fail("recorded.sandbox: expected a mapping of strings", where)
        sandbox = MappingProxyType(plain)
    return RecordedOutcome(status, reason, count, tokens, cost, sandbox)


def read_judged(check: Reader, value: Any, mark: Mark, where: str) -> RecordedGrading:
    """``judged:``: the verdicts a recording keeps for offline grading."""
    from pytest_ooda.judge import RecordedGrading, Vote

    block = check.mapping(value, mark, "judged")
    check.keys(block, ("key", "votes"), "judged")
    key = check.optional(block, "key", "judged", check.text, "")
    if key and not _SHA256.match(key):
        raise check.fail(
            f"judged.key: expected 64 lowercase hex digits, got {key!r}",
            check.get(block, "key")[1],
        )
    votes_value, votes_mark = check.get(block, "votes")
    if not isinstance(votes_value, YamlSequence) or not votes_value:
        raise check.fail("judged.votes: expected a list of verdicts", votes_mark)
    votes = []
    for index, item in enumerate(votes_value):
        at = f"judged.votes[{index}]"
        vote = check.mapping(item, votes_value.item_marks[index], at)
        check.keys(vote, ("verdict", "reason", "score"), at)
        if vote.get("verdict") is None:
            raise check.fail(f"{at}: missing 'verdict'", vote.mark)
        verdict = check.choice(*check.get(vote, "verdict"), f"{at}.verdict", ("pass", "fail"))
        reason = check.optional(vote, "reason", at, check.text, "")
        score = check.optional(vote, "score", at, check.number, None)
        votes.append(Vote("pass" if verdict == "pass" else "fail", reason, score))
    return RecordedGrading(key, tuple(votes), line=mark.line)
