"""Loading scenario files: YAML validated into a ``Scenario``, every mistake a located
``ScenarioError``."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_ooda._types import STATUSES
from pytest_ooda._util import closest, type_name
from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.errors import ScenarioError
from pytest_ooda.scenario.model import (
    _AGGREGATE_KEYS,
    _COMMAND_KEYS,
    _EXPECT_KEYS,
    _ITERATION_KEYS,
    _PROCEDURE_NAME,
    _RECORDED_KEYS,
    _SHA256,
    _TOOL_CALL_KEYS,
    _TOOLS_KEYS,
    _TOP_KEYS,
    _USAGE_KEYS,
    MAX_REPEAT,
    MAX_SCENARIO_BYTES,
    SIGNALS,
    AggregateExpect,
    Expect,
    FileCheck,
    RecordedOutcome,
    Scenario,
    ScenarioIteration,
)
from pytest_ooda.scenario.verify import CommandCheck, ToolExpect
from pytest_ooda.variants import VARIANT_KEYS, Variant, check_name, check_value, make_variant
from pytest_ooda.yamlload import load_yaml_file, load_yaml_text
from pytest_ooda.yamlnodes import Mark, YamlMapping, YamlSequence, to_plain, value_mark

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda.config import RetrySettings
    from pytest_ooda.judge import LabelledExample, RecordedGrading
    from pytest_ooda.sandbox import SandboxSpec


_T = TypeVar("_T")
_D = TypeVar("_D")


class _Validator:
    def __init__(self, file: str | None) -> None:
        self.file = file

    @property
    def base(self) -> Path | None:
        """The scenario file's folder: paths in it (rubrics, examples) are relative to it."""
        return Path(self.file).parent if self.file is not None else None

    def examples_file(self, path: Path) -> tuple[LabelledExample, ...]:
        """A separate file of labelled examples (``expect.judge.examples: FILE``)."""
        return load_examples(path)

    def fail(self, message: str, mark: Mark, hint: str | None = None) -> ScenarioError:
        return ScenarioError(message, file=self.file, line=mark.line, column=mark.column, hint=hint)

    def keys(self, mapping: YamlMapping, known: Sequence[str], where: str) -> None:
        for key in mapping:
            if key not in known:
                close = closest(str(key), known)
                hint = (
                    f"did you mean {close!r}?" if close else f"expected one of: {', '.join(known)}"
                )
                raise self.fail(
                    f"unknown key {key!r} in {where}",
                    mapping.key_marks.get(key, mapping.mark),
                    hint,
                )

    def mapping(self, value: Any, mark: Mark, where: str) -> YamlMapping:
        if not isinstance(value, YamlMapping):
            raise self.fail(f"{where}: expected a mapping, got {type_name(value)}", mark)
        return value

    def get(self, mapping: YamlMapping, key: str) -> tuple[Any, Mark]:
        return mapping.get(key), mapping.value_marks.get(key, mapping.mark)

    def text(self, value: Any, mark: Mark, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"{where}: expected a string, got {type_name(value)}", mark)
        return value

    def optional(
        self,
        container: YamlMapping,
        key: str,
        where: str,
        read: Callable[[Any, Mark, str], _T],
        default: _D,
    ) -> _T | _D:
        """``read`` the value of ``key`` when it is set (not null), else ``default``."""
        if container.get(key) is None:
            return default
        return read(*self.get(container, key), f"{where}.{key}")

    def texts(self, value: Any, mark: Mark, where: str) -> tuple[str, ...]:
        """One string, or a list of strings (each located on its own item)."""
        if isinstance(value, YamlSequence):
            return tuple(
                self.text(item, value.item_marks[i], f"{where}[{i}]")
                for i, item in enumerate(value)
            )
        return (self.text(value, mark, where),)

    def integer(self, value: Any, mark: Mark, where: str, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{where}: expected an integer, got {type_name(value)}", mark)
        if minimum is not None and value < minimum:
            raise self.fail(f"{where}: expected an integer >= {minimum}, got {value}", mark)
        return value

    def number(self, value: Any, mark: Mark, where: str) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise self.fail(f"{where}: expected a number >= 0, got {value!r}", mark)
        return float(value)

    def positive(self, value: Any, mark: Mark, where: str) -> float:
        """A number > 0 (a budget in dollars, a timeout in seconds)."""
        number = self.number(value, mark, where)
        if number <= 0:
            raise self.fail(f"{where}: expected a number > 0, got {value!r}", mark)
        return number

    def flag(self, value: Any, mark: Mark, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(f"{where}: expected true or false, got {type_name(value)}", mark)
        return value

    def names(self, value: Any, mark: Mark, where: str) -> tuple[str, ...]:
        """A list of tool names (one name alone is accepted too)."""
        items = list(value) if isinstance(value, YamlSequence) else [value]
        marks = value.item_marks if isinstance(value, YamlSequence) else [mark]
        found = []
        for index, item in enumerate(items):
            at = f"{where}[{index}]" if isinstance(value, YamlSequence) else where
            name = self.text(item, marks[index], at)
            if not name.strip():
                raise self.fail(f"{at}: a tool name cannot be empty", marks[index])
            found.append(name)
        return tuple(found)

    def patterns(self, value: Any, mark: Mark, where: str) -> tuple[str, ...]:
        """Regular expressions, each compiled here so a bad one is located."""
        found = self.texts(value, mark, where)
        for pattern in found:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise self.fail(
                    f"{where}: {pattern!r} is not a regular expression: {exc}",
                    mark,
                    "Python `re` syntax; quote the pattern in YAML",
                ) from None
        return found

    def choice(self, value: Any, mark: Mark, where: str, choices: Sequence[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            raise self.fail(f"{where}: expected one of {', '.join(choices)}, got {value!r}", mark)
        return value

    def scenario(self, doc: Any, path: Path | None, name: str) -> Scenario:
        root = self.mapping(doc, Mark(1, 1), "scenario file")
        self.keys(root, _TOP_KEYS, "scenario")
        if "procedure" not in root:
            raise self.fail(
                "missing required key 'procedure'",
                root.mark,
                "name the procedure this scenario runs",
            )
        value, mark = self.get(root, "procedure")
        procedure = self.text(value, mark, "procedure")
        if not _PROCEDURE_NAME.match(procedure):
            raise self.fail(
                f"procedure: {procedure!r} is not a procedure name",
                mark,
                "procedure names match [a-z0-9][a-z0-9-]*",
            )
        description = None
        if root.get("description") is not None:
            description = self.text(*self.get(root, "description"), "description")
        context: tuple[str, ...] = ()
        if root.get("context") is not None:
            context = self.texts(*self.get(root, "context"), "context")
        max_iterations = failure_threshold = None
        if root.get("max_iterations") is not None:
            max_iterations = self.integer(*self.get(root, "max_iterations"), "max_iterations", 1)
        if root.get("failure_threshold") is not None:
            failure_threshold = self.integer(
                *self.get(root, "failure_threshold"), "failure_threshold", 1
            )
        workspace = None
        if root.get("workspace") is not None:
            workspace = self.text(*self.get(root, "workspace"), "workspace")
        max_cost = None
        if root.get("max_cost") is not None:
            max_cost = self.positive(*self.get(root, "max_cost"), "max_cost")
        max_tokens = None
        if root.get("max_tokens") is not None:
            max_tokens = self.integer(*self.get(root, "max_tokens"), "max_tokens", 1)
        recorded = None
        if root.get("recorded") is not None:
            recorded = self.recorded(*self.get(root, "recorded"))
        expect = None
        if root.get("expect") is not None:
            expect = self.expect(*self.get(root, "expect"))
            aggregate = self.aggregate(root["expect"])
            if aggregate is not None:
                expect = replace(expect, aggregate=aggregate)
        repeat = self.optional(root, "repeat", "scenario", self.repeat, None)
        sandbox = None
        if root.get("sandbox") is not None:
            sandbox = self.sandbox(root, path)
        judged = self.optional(root, "judged", "scenario", self.judged, None)
        variants = self.optional(root, "variants", "scenario", self.variants, ())
        retry = self.optional(root, "retry", "scenario", self.retry, None)
        iterations: tuple[ScenarioIteration, ...] = ()
        if root.get("iterations") is not None:
            value, mark = self.get(root, "iterations")
            if not isinstance(value, YamlSequence):
                raise self.fail(f"iterations: expected a list, got {type_name(value)}", mark)
            iterations = tuple(
                self.iteration(item, value.item_marks[i], i + 1) for i, item in enumerate(value)
            )
        return Scenario(
            procedure=procedure,
            name=name,
            path=path,
            description=description,
            context=context,
            max_iterations=max_iterations,
            failure_threshold=failure_threshold,
            workspace=workspace,
            expect=expect,
            iterations=iterations,
            max_cost=max_cost,
            max_tokens=max_tokens,
            recorded=recorded,
            repeat=repeat,
            sandbox=sandbox,
            judged=judged,
            variants=variants,
            retry=retry,
        )

    def sandbox(self, root: YamlMapping, path: Path | None) -> SandboxSpec:
        """``sandbox:`` (as in the config: a kind, or a mapping with ``kind:``), located."""
        from pytest_ooda.sandbox import OptionError, parse_spec

        value, mark = self.get(root, "sandbox")
        try:
            return parse_spec(to_plain(value), base_dir=path.parent if path else None)
        except OptionError as exc:
            where = "sandbox"
            if exc.key is not None and isinstance(value, YamlMapping) and exc.key in value:
                mark = value_mark(value, exc.key)
                where = f"sandbox.{exc.key}"
            raise self.fail(f"{where}: {exc.message}", mark, "see `ooda help sandbox`") from None

    def judged(self, value: Any, mark: Mark, where: str) -> RecordedGrading:
        """``judged:``: the verdicts a recording keeps for offline grading."""
        from pytest_ooda.judge import RecordedGrading, Vote

        block = self.mapping(value, mark, "judged")
        self.keys(block, ("key", "votes"), "judged")
        key = self.optional(block, "key", "judged", self.text, "")
        if key and not _SHA256.match(key):
            raise self.fail(
                f"judged.key: expected 64 lowercase hex digits, got {key!r}",
                self.get(block, "key")[1],
            )
        votes_value, votes_mark = self.get(block, "votes")
        if not isinstance(votes_value, YamlSequence) or not votes_value:
            raise self.fail("judged.votes: expected a list of verdicts", votes_mark)
        votes = []
        for index, item in enumerate(votes_value):
            at = f"judged.votes[{index}]"
            vote = self.mapping(item, votes_value.item_marks[index], at)
            self.keys(vote, ("verdict", "reason", "score"), at)
            if vote.get("verdict") is None:
                raise self.fail(f"{at}: missing 'verdict'", vote.mark)
            verdict = self.choice(*self.get(vote, "verdict"), f"{at}.verdict", ("pass", "fail"))
            reason = self.optional(vote, "reason", at, self.text, "")
            score = self.optional(vote, "score", at, self.number, None)
            votes.append(Vote("pass" if verdict == "pass" else "fail", reason, score))
        return RecordedGrading(key, tuple(votes), line=mark.line)

    def variants(self, value: Any, mark: Mark, where: str) -> tuple[Variant, ...]:
        """``variants:``: a mapping of names to settings (see ``pytest_ooda.variants``)."""
        table = self.mapping(value, mark, "variants")
        found: list[Variant] = []
        for name in table:
            key_mark = table.key_marks.get(name, table.mark)
            text = self.text(name, key_mark, "variants key")
            problem = check_name(text)
            if problem:
                raise self.fail(f"variants: {problem}", key_mark)
            at = f"variants.{text}"
            body, body_mark = self.get(table, name)
            # `baseline:` alone (or `{}`) is the session's own settings, under a name.
            block = (
                YamlMapping(mark=body_mark) if body is None else self.mapping(body, body_mark, at)
            )
            self.keys(block, VARIANT_KEYS, at)
            values: dict[str, str] = {}
            for key in ("ai_cmd", "ai_cmd_alias", "model", "prompt_format", "ai_output", "sandbox"):
                if block.get(key) is None:
                    continue
                raw, raw_mark = self.get(block, key)
                item = self.text(raw, raw_mark, f"{at}.{key}")
                problem = check_value(key, item)
                if problem:
                    raise self.fail(f"{at}.{problem}", raw_mark)
                values[key] = item
            if "ai_cmd" in values and "ai_cmd_alias" in values:
                raise self.fail(f"{at}: give ai_cmd or ai_cmd_alias, not both", block.mark)
            parameters: dict[str, Any] = {}
            if block.get("parameters") is not None:
                params = self.mapping(*self.get(block, "parameters"), f"{at}.parameters")
                for param in params:
                    parameters[
                        self.text(
                            param, params.key_marks.get(param, params.mark), f"{at}.parameters key"
                        )
                    ] = to_plain(params[param])
            fragments: dict[str, str] = {}
            if block.get("fragments") is not None:
                swaps = self.mapping(*self.get(block, "fragments"), f"{at}.fragments")
                for old in swaps:
                    old_text = self.text(
                        old, swaps.key_marks.get(old, swaps.mark), f"{at}.fragments key"
                    )
                    fragments[old_text] = self.text(
                        *self.get(swaps, old), f"{at}.fragments[{old_text!r}]"
                    )
            found.append(
                make_variant(
                    text,
                    values,
                    parameters,
                    fragments,
                    source=self.file,
                    line=key_mark.line,
                    column=key_mark.column,
                )
            )
        if not found:
            raise self.fail("variants: name at least one variant", mark)
        return tuple(found)

    def recorded(self, value: Any, mark: Mark) -> RecordedOutcome:
        block = self.mapping(value, mark, "recorded")
        self.keys(block, _RECORDED_KEYS, "recorded")
        if block.get("status") is None:
            raise self.fail("recorded: missing 'status'", block.mark)
        status = self.choice(*self.get(block, "status"), "recorded.status", STATUSES)
        reason = self.optional(block, "reason", "recorded", self.text, None)
        count = tokens = None
        if block.get("iterations") is not None:
            count = self.integer(*self.get(block, "iterations"), "recorded.iterations", 0)
        if block.get("tokens") is not None:
            tokens = self.integer(*self.get(block, "tokens"), "recorded.tokens", 0)
        cost = self.optional(block, "cost", "recorded", self.number, None)
        sandbox = None
        if block.get("sandbox") is not None:
            found, where = self.get(block, "sandbox")
            plain = to_plain(found)
            if not isinstance(plain, dict) or not all(
                isinstance(key, str) and isinstance(item, str) for key, item in plain.items()
            ):
                raise self.fail("recorded.sandbox: expected a mapping of strings", where)
            sandbox = MappingProxyType(plain)
        return RecordedOutcome(status, reason, count, tokens, cost, sandbox)

    def expect(self, value: Any, mark: Mark) -> Expect:
        block = self.mapping(value, mark, "expect")
        self.keys(block, (*_EXPECT_KEYS, *_AGGREGATE_KEYS), "expect")
        status = None
        if block.get("status") is not None:
            status = self.choice(*self.get(block, "status"), "expect.status", STATUSES)
        exact = low = high = None
        if block.get("iterations") is not None:
            value, mark = self.get(block, "iterations")
            if isinstance(value, YamlMapping):
                self.keys(value, ("min", "max"), "expect.iterations")
                if value.get("min") is not None:
                    low = self.integer(*self.get(value, "min"), "expect.iterations.min", 0)
                if value.get("max") is not None:
                    high = self.integer(*self.get(value, "max"), "expect.iterations.max", 0)
                if low is None and high is None:
                    raise self.fail("expect.iterations: give min, max or both", mark)
                if low is not None and high is not None and low > high:
                    raise self.fail(
                        f"expect.iterations: min {low} is greater than max {high}", mark
                    )
            else:
                exact = self.integer(value, mark, "expect.iterations", 0)
        signals = None
        if block.get("signals") is not None:
            value, mark = self.get(block, "signals")
            if not isinstance(value, YamlSequence):
                raise self.fail(f"expect.signals: expected a list, got {type_name(value)}", mark)
            signals = tuple(
                self.choice(item, value.item_marks[i], f"expect.signals[{i}]", SIGNALS)
                for i, item in enumerate(value)
            )
        files: list[FileCheck] = []
        if block.get("files") is not None:
            value, mark = self.get(block, "files")
            checks = self.mapping(value, mark, "expect.files")
            for key in checks:
                files.append(self.file_check(checks, key))
        tools = None
        if block.get("tools") is not None:
            tools = self.tools(*self.get(block, "tools"))
        commands: tuple[CommandCheck, ...] = ()
        if block.get("commands") is not None:
            value, mark = self.get(block, "commands")
            if not isinstance(value, YamlSequence):
                raise self.fail(
                    f"expect.commands: expected a list, got {type_name(value)}",
                    mark,
                    "write each command as `- run: python -m pytest -q`",
                )
            commands = tuple(
                self.command(item, value.item_marks[i], f"expect.commands[{i}]")
                for i, item in enumerate(value)
            )
        judge = None
        if block.get("judge") is not None:
            from pytest_ooda.judge import read_judge

            judge = read_judge(self, *self.get(block, "judge"), self.base)
        return Expect(status, exact, low, high, signals, tuple(files), tools, commands, judge=judge)

    def tools(self, value: Any, mark: Mark) -> ToolExpect:
        block = self.mapping(value, mark, "expect.tools")
        self.keys(block, _TOOLS_KEYS, "expect.tools")
        where = "expect.tools"
        called = self.optional(block, "called", where, self.names, ())
        not_called = self.optional(block, "not_called", where, self.names, ())
        both = sorted(set(called) & set(not_called))
        if both:
            raise self.fail(
                f"expect.tools: {', '.join(both)} cannot be both called and not_called", mark
            )
        bash = self.optional(block, "bash_matches", where, self.patterns, ())
        max_calls = None
        if block.get("max_calls") is not None:
            max_calls = self.integer(*self.get(block, "max_calls"), "expect.tools.max_calls", 0)
        return ToolExpect(called, not_called, bash, max_calls, line=mark.line)

    def command(self, value: Any, mark: Mark, where: str) -> CommandCheck:
        if isinstance(value, str):
            value_text = value.strip()
            if not value_text:
                raise self.fail(f"{where}: the command is empty", mark)
            return CommandCheck(value, line=mark.line)
        item = self.mapping(value, mark, where)
        self.keys(item, _COMMAND_KEYS, where)
        if item.get("run") is None:
            raise self.fail(
                f"{where}: missing 'run'",
                item.mark,
                "the shell command line to run, e.g. run: python -m pytest -q",
            )
        run, run_mark = self.get(item, "run")
        command = self.text(run, run_mark, f"{where}.run")
        if not command.strip():
            raise self.fail(f"{where}.run: the command is empty", run_mark)
        exit_code = self.optional(item, "exit_code", where, self.integer, 0)
        timeout = self.optional(item, "timeout", where, self.positive, 300.0)
        contains = self.optional(item, "output_contains", where, self.texts, ())
        return CommandCheck(command, exit_code, timeout, contains, line=mark.line)

    def repeat(self, value: Any, mark: Mark, where: str) -> int:
        count = self.integer(value, mark, "repeat", 1)
        if count > MAX_REPEAT:
            raise self.fail(
                f"repeat: at most {MAX_REPEAT} runs, got {count}",
                mark,
                "split a larger sample over CI shards (--ooda-shard K/N) and merge the "
                "results with `ooda report`",
            )
        return count

    def retry(self, value: Any, mark: Mark, where: str) -> RetrySettings:
        """``retry:`` as in a config file (``{attempts, delay, max_delay}`` or a count)."""
        from pytest_ooda.config import _Invalid, check_retry

        try:
            settings: RetrySettings = check_retry(value)
        except _Invalid as exc:
            raise self.fail(f"retry: expected {exc.expected}", mark) from None
        return settings

    def aggregate(self, block: YamlMapping) -> AggregateExpect | None:
        """The ``expect`` keys about every run together; ``None`` when none is set."""
        if not any(block.get(key) is not None for key in _AGGREGATE_KEYS):
            return None
        rate = None
        stop_early = False
        min_runs: int | None = None
        if block.get("success_rate") is not None:
            value, mark = self.get(block, "success_rate")
            if not isinstance(value, YamlMapping):
                raise self.fail(
                    f"expect.success_rate: expected a mapping like {{min: 0.8}}, "
                    f"got {type_name(value)}",
                    mark,
                )
            self.keys(value, ("min", "stop_early", "min_runs"), "expect.success_rate")
            if value.get("min") is None:
                raise self.fail("expect.success_rate: give min (a rate from 0 to 1)", mark)
            low, rate_mark = self.get(value, "min")
            rate = self.number(low, rate_mark, "expect.success_rate.min")
            if rate > 1:
                raise self.fail(
                    f"expect.success_rate.min: expected a rate from 0 to 1, got {rate:g}",
                    rate_mark,
                    f"for {rate:g}% write {rate / 100:g}" if rate <= 100 else None,
                )
            if value.get("stop_early") is not None:
                flag, flag_mark = self.get(value, "stop_early")
                if not isinstance(flag, bool):
                    raise self.fail(
                        "expect.success_rate.stop_early: expected true or false", flag_mark
                    )
                stop_early = flag
            if value.get("min_runs") is not None:
                min_runs = self.integer(
                    *self.get(value, "min_runs"), "expect.success_rate.min_runs", 1
                )
        iterations = self.optional(block, "max_mean_iterations", "expect", self.number, None)
        if iterations is not None and iterations < 1:
            _, mark = self.get(block, "max_mean_iterations")
            raise self.fail(
                f"expect.max_mean_iterations: a run has at least 1 iteration, got {iterations:g}",
                mark,
            )
        cost = self.optional(block, "max_mean_cost", "expect", self.number, None)
        return AggregateExpect(rate, iterations, cost, stop_early=stop_early, min_runs=min_runs)

    def file_check(self, checks: YamlMapping, key: Any) -> FileCheck:
        where = f"expect.files[{key!r}]"
        path = self.text(key, checks.key_marks.get(key, checks.mark), "expect.files key")
        value, mark = self.get(checks, key)
        if isinstance(value, str):
            state = self.choice(value, mark, where, ("exists", "absent"))
            return FileCheck(path, exists=state == "exists", line=mark.line)
        spec = self.mapping(value, mark, where)
        self.keys(spec, ("exists", "contains"), where)
        exists: bool | None = None
        if spec.get("exists") is not None:
            flag, flag_mark = self.get(spec, "exists")
            if not isinstance(flag, bool):
                raise self.fail(f"{where}.exists: expected true or false", flag_mark)
            exists = flag
        contains: tuple[str, ...] = ()
        if spec.get("contains") is not None:
            contains = self.texts(*self.get(spec, "contains"), f"{where}.contains")
        if exists is False and contains:
            raise self.fail(f"{where}: a file cannot be absent and contain text", mark)
        return FileCheck(path, exists=exists, contains=contains, line=mark.line)

    def iteration(self, value: Any, mark: Mark, number: int) -> ScenarioIteration:
        where = f"iterations[{number - 1}]"
        item = self.mapping(value, mark, where)
        self.keys(item, _ITERATION_KEYS, where)
        output = self.optional(item, "output", where, self.text, "")
        exit_code = self.optional(item, "exit_code", where, self.integer, 0)
        sha = None
        if item.get("prompt_sha256") is not None:
            value, vmark = self.get(item, "prompt_sha256")
            sha = self.text(value, vmark, f"{where}.prompt_sha256")
            if not _SHA256.match(sha):
                raise self.fail(
                    f"{where}.prompt_sha256: expected 64 lowercase hex digits, got {sha!r}", vmark
                )
        prompt = self.optional(item, "prompt", where, self.text, None)
        duration = self.optional(item, "duration_s", where, self.number, None)
        delay = self.optional(item, "delay", where, self.number, 0.0)
        timed_out = False
        if item.get("timed_out") is not None:
            flag, fmark = self.get(item, "timed_out")
            if not isinstance(flag, bool):
                raise self.fail(f"{where}.timed_out: expected true or false", fmark)
            timed_out = flag
        files: dict[str, str | None] = {}
        if item.get("files") is not None:
            changes = self.mapping(*self.get(item, "files"), f"{where}.files")
            for key in changes:
                fname = self.text(
                    key, changes.key_marks.get(key, changes.mark), f"{where}.files key"
                )
                content, cmark = self.get(changes, key)
                if content is not None:
                    content = self.text(content, cmark, f"{where}.files[{fname!r}]")
                files[fname] = content
        error = self.optional(item, "error", where, self.text, None)
        usage = self.optional(item, "usage", where, self.usage, None)
        turns = None
        if item.get("turns") is not None:
            turns = self.integer(*self.get(item, "turns"), f"{where}.turns", 0)
        model = self.optional(item, "model", where, self.text, None)
        calls = self.optional(item, "tool_calls", where, self.calls, None)
        denials = self.optional(item, "permission_denials", where, self.calls, ())
        retries = 0
        if item.get("retries") is not None:
            retries = self.integer(*self.get(item, "retries"), f"{where}.retries", 0)
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
        )

    def usage(self, value: Any, mark: Mark, where: str) -> Usage:
        block = self.mapping(value, mark, where)
        self.keys(block, _USAGE_KEYS, where)
        counts = {
            key: self.integer(*self.get(block, key), f"{where}.{key}", 0)
            for key in _USAGE_KEYS[:-1]
            if block.get(key) is not None
        }
        cost = self.optional(block, "cost", where, self.number, None)
        return Usage(cost=cost, **counts)

    def calls(self, value: Any, mark: Mark, where: str) -> tuple[ToolCall, ...]:
        if not isinstance(value, YamlSequence):
            raise self.fail(f"{where}: expected a list, got {type_name(value)}", mark)
        out: list[ToolCall] = []
        for index, item in enumerate(value):
            at = f"{where}[{index}]"
            call = self.mapping(item, value.item_marks[index], at)
            self.keys(call, _TOOL_CALL_KEYS, at)
            if call.get("name") is None:
                raise self.fail(f"{at}: missing 'name'", call.mark)
            name = self.text(*self.get(call, "name"), f"{at}.name")
            summary = self.optional(call, "summary", at, self.text, "")
            ok = self.optional(call, "ok", at, self.flag, None)
            error = self.optional(call, "error", at, self.text, None)
            out.append(ToolCall(name, summary, ok, error))
        return tuple(out)


def load_scenario_text(
    text: str, *, path: str | Path | None = None, name: str | None = None
) -> Scenario:
    """Parse and validate scenario YAML; errors name ``path:line:col``."""
    display = str(path) if path is not None else None
    doc = load_yaml_text(text, file=display, error=ScenarioError)
    resolved = Path(path) if path is not None else None
    stem = name or (resolved.stem if resolved is not None else "scenario")
    return _Validator(display).scenario(doc, resolved, stem)


def load_scenario(path: str | Path, *, name: str | None = None) -> Scenario:
    """Read and validate the scenario file at ``path`` (``name`` defaults to its stem)."""
    file = Path(path)
    doc = load_yaml_file(file, error=ScenarioError, max_bytes=MAX_SCENARIO_BYTES)
    return _Validator(str(file)).scenario(doc, file, name or file.stem)


def load_examples(path: Path) -> tuple[LabelledExample, ...]:
    """A file of labelled examples for judge calibration: a YAML list, or a mapping
    with ``examples:`` (and an optional ``description``)."""
    from pytest_ooda.judge import MAX_JUDGE_FILE_BYTES, read_examples

    doc = load_yaml_file(path, error=ScenarioError, max_bytes=MAX_JUDGE_FILE_BYTES)
    check = _Validator(str(path))
    if isinstance(doc, YamlMapping):
        check.keys(doc, ("examples", "description"), "examples file")
        if doc.get("examples") is None:
            raise check.fail("examples file: missing 'examples'", doc.mark)
        value, mark = check.get(doc, "examples")
    else:
        value, mark = doc, Mark(1, 1)
    return read_examples(check, value, mark, path.parent)
