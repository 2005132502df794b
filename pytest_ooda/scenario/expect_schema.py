"""Reading ``expect:``, what a scenario's runs are held to: per run its loop status,
iterations, signals, files, tool calls, what fired (``expect.activation``,
``expect.trajectory``, read by :mod:`.fired`), verification commands and the judge's
rubric (``expect.judge``, read by ``judge.schema``); over all runs the aggregate expectations
(``success_rate``, ``max_error_rate``, ``max_mean_iterations``, ``max_mean_cost``)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import STATUSES
from pytest_ooda._util import type_name
from pytest_ooda.scenario.model import (
    _AGGREGATE_KEYS,
    _COMMAND_KEYS,
    _EXPECT_KEYS,
    _TOOLS_KEYS,
    SIGNALS,
    AggregateExpect,
    Expect,
    FileCheck,
)
from pytest_ooda.yamlnodes import YamlMapping, YamlSequence

if TYPE_CHECKING:
    from pytest_ooda.judge import JudgeSpec
    from pytest_ooda.reader import Reader
    from pytest_ooda.scenario.fired import ActivationExpect, TrajectoryExpect
    from pytest_ooda.scenario.verify import CommandCheck, ToolExpect
    from pytest_ooda.yamlnodes import Mark

__all__ = ["read_expect", "read_setup"]


def read_expect(check: Reader, value: Any, mark: Mark) -> Expect:
    """``expect:``: the checks of each run, and of all of a scenario's runs together.

    Each key is read on its own (``check.attempt``): a collecting reader reports the
    mistakes of several keys together."""
    block = check.mapping(value, mark, "expect")
    check.keys(block, (*_EXPECT_KEYS, *_AGGREGATE_KEYS), "expect")

    def read(key: str, reader: Any, default: Any) -> Any:
        if block.get(key) is None:
            return default
        return check.attempt(reader, check, *check.get(block, key), default=default)

    status = read("status", _status, None)
    exact, low, high = read("iterations", _iterations, (None, None, None))
    signals = read("signals", _signals, None)
    files = read("files", _files, ())
    tools = read("tools", _tools, None)
    protect: tuple[str, ...] = read("protect", _protect, ())
    commands: tuple[CommandCheck, ...] = read("commands", partial(_commands, protect=protect), ())
    judge = read("judge", _judge, None)
    fresh = read("fresh_sandbox", _fresh, False)
    activation: tuple[ActivationExpect, ...] = read("activation", _activation, ())
    trajectory: tuple[TrajectoryExpect, ...] = read("trajectory", _trajectory, ())
    aggregate = check.attempt(_aggregate, check, block, default=None)
    return Expect(
        status,
        exact,
        low,
        high,
        signals,
        files,
        tools,
        commands,
        judge=judge,
        aggregate=aggregate,
        protect=protect,
        fresh_sandbox=fresh,
        activation=activation,
        trajectory=trajectory,
    )


def _activation(check: Reader, value: Any, mark: Mark) -> tuple[ActivationExpect, ...]:
    from pytest_ooda.scenario.fired import read_activation

    return read_activation(check, value, mark)


def _trajectory(check: Reader, value: Any, mark: Mark) -> tuple[TrajectoryExpect, ...]:
    from pytest_ooda.scenario.fired import read_trajectory

    return read_trajectory(check, value, mark)


def read_setup(check: Reader, value: Any, mark: Mark) -> tuple[CommandCheck, ...]:
    """``setup:``: commands as ``expect.commands`` writes them, each to exit 0, run in
    the workspace after it is copied and before the agent starts."""
    items = check.items(value, mark, "setup")
    return tuple(
        _command(check, item, at or mark, f"setup[{index}]", ())
        for index, (item, at) in enumerate(items)
    )


def _status(check: Reader, value: Any, mark: Mark) -> str:
    return check.choice(value, mark, "expect.status", STATUSES)


def _iterations(check: Reader, value: Any, mark: Mark) -> tuple[int | None, int | None, int | None]:
    """``expect.iterations``: an exact count, or ``{min, max}``."""
    low = high = None
    if not isinstance(value, YamlMapping):
        return check.integer(value, mark, "expect.iterations", 0), None, None
    check.keys(value, ("min", "max"), "expect.iterations")
    if value.get("min") is not None:
        low = check.integer(*check.get(value, "min"), "expect.iterations.min", 0)
    if value.get("max") is not None:
        high = check.integer(*check.get(value, "max"), "expect.iterations.max", 0)
    if low is None and high is None:
        raise check.fail("expect.iterations: give min, max or both", mark)
    if low is not None and high is not None and low > high:
        raise check.fail(f"expect.iterations: min {low} is greater than max {high}", mark)
    return None, low, high


def _signals(check: Reader, value: Any, mark: Mark) -> tuple[str, ...]:
    if not isinstance(value, YamlSequence):
        raise check.fail(f"expect.signals: expected a list, got {type_name(value)}", mark)
    return tuple(
        check.choice(item, value.item_marks[i], f"expect.signals[{i}]", SIGNALS)
        for i, item in enumerate(value)
    )


def _files(check: Reader, value: Any, mark: Mark) -> tuple[FileCheck, ...]:
    checks = check.mapping(value, mark, "expect.files")
    found = [check.attempt(_file_check, check, checks, key, default=None) for key in checks]
    return tuple(item for item in found if item is not None)


def _commands(
    check: Reader, value: Any, mark: Mark, *, protect: tuple[str, ...]
) -> tuple[CommandCheck, ...]:
    if not isinstance(value, YamlSequence):
        raise check.fail(
            f"expect.commands: expected a list, got {type_name(value)}",
            mark,
            "write each command as `- run: python -m pytest -q`",
        )
    return tuple(
        _command(check, item, value.item_marks[i], f"expect.commands[{i}]", protect)
        for i, item in enumerate(value)
    )


def _judge(check: Reader, value: Any, mark: Mark) -> JudgeSpec:
    from pytest_ooda.judge import read_judge

    return read_judge(check, value, mark, check.base)


def _fresh(check: Reader, value: Any, mark: Mark) -> bool:
    if not isinstance(value, bool):
        raise check.fail("expect.fresh_sandbox: expected true or false", mark)
    return value


def _protect(check: Reader, value: Any, mark: Mark) -> tuple[str, ...]:
    """``expect.protect``: paths inside the workspace, each as ``a/b`` (no ``..``)."""
    from pathlib import PurePosixPath

    paths = check.texts(value, mark, "expect.protect")
    marks = value.item_marks if isinstance(value, YamlSequence) else [mark] * len(paths)
    kept: list[str] = []
    for index, (text, at) in enumerate(zip(paths, marks, strict=True)):
        where = f"expect.protect[{index}]" if isinstance(value, YamlSequence) else "expect.protect"
        path = PurePosixPath(text.strip())
        if path.is_absolute() or text.strip().startswith("~"):
            raise check.fail(f"{where}: {text!r} is not relative to the workspace", at)
        if ".." in path.parts:
            raise check.fail(f"{where}: {text!r} leaves the workspace (..)", at)
        if not path.parts or path == PurePosixPath("."):
            raise check.fail(
                f"{where}: {text!r} is the whole workspace",
                at,
                "name the files or directories the agent must not decide, e.g. tests/",
            )
        kept.append(path.as_posix())
    return tuple(dict.fromkeys(kept))


def _file_check(check: Reader, checks: YamlMapping, key: Any) -> FileCheck:
    where = f"expect.files[{key!r}]"
    path = check.text(key, checks.key_marks.get(key, checks.mark), "expect.files key")
    value, mark = check.get(checks, key)
    if isinstance(value, str):
        state = check.choice(value, mark, where, ("exists", "absent"))
        return FileCheck(path, exists=state == "exists", line=mark.line)
    spec = check.mapping(value, mark, where)
    check.keys(spec, ("exists", "contains"), where)
    exists: bool | None = None
    if spec.get("exists") is not None:
        flag, flag_mark = check.get(spec, "exists")
        if not isinstance(flag, bool):
            raise check.fail(f"{where}.exists: expected true or false", flag_mark)
        exists = flag
    contains: tuple[str, ...] = ()
    if spec.get("contains") is not None:
        contains = check.texts(*check.get(spec, "contains"), f"{where}.contains")
    if exists is False and contains:
        raise check.fail(f"{where}: a file cannot be absent and contain text", mark)
    return FileCheck(path, exists=exists, contains=contains, line=mark.line)


def _tools(check: Reader, value: Any, mark: Mark) -> ToolExpect:
    # The checks' module is imported by the scenarios that have checks only.
    from pytest_ooda.scenario.verify import ToolExpect

    block = check.mapping(value, mark, "expect.tools")
    check.keys(block, _TOOLS_KEYS, "expect.tools")
    where = "expect.tools"
    called = check.optional(block, "called", where, check.names, ())
    not_called = check.optional(block, "not_called", where, check.names, ())
    both = sorted(set(called) & set(not_called))
    if both:
        raise check.fail(
            f"expect.tools: {', '.join(both)} cannot be both called and not_called", mark
        )
    bash = check.optional(block, "bash_matches", where, check.patterns, ())
    max_calls = None
    if block.get("max_calls") is not None:
        max_calls = check.integer(*check.get(block, "max_calls"), "expect.tools.max_calls", 0)
    return ToolExpect(called, not_called, bash, max_calls, line=mark.line)


def _command(
    check: Reader, value: Any, mark: Mark, where: str, protect: tuple[str, ...]
) -> CommandCheck:
    from pytest_ooda.scenario.verify import CommandCheck

    if isinstance(value, str):
        value_text = value.strip()
        if not value_text:
            raise check.fail(f"{where}: the command is empty", mark)
        return CommandCheck(value, line=mark.line)
    item = check.mapping(value, mark, where)
    if item.get("pytest") is not None:
        from pytest_ooda.scenario.pytest_verifier import read_pytest_check

        return read_pytest_check(check, item, where, protect)
    check.keys(item, _COMMAND_KEYS, where)
    if item.get("run") is None:
        raise check.fail(
            f"{where}: missing 'run'",
            item.mark,
            "the shell command line to run, e.g. run: make check (or pytest: tests/ for a "
            "pytest verifier out of the agent's reach)",
        )
    run, run_mark = check.get(item, "run")
    command = check.text(run, run_mark, f"{where}.run")
    if not command.strip():
        raise check.fail(f"{where}.run: the command is empty", run_mark)
    exit_code = check.optional(item, "exit_code", where, check.integer, 0)
    timeout = check.optional(item, "timeout", where, check.positive, 300.0)
    contains = check.optional(item, "output_contains", where, check.texts, ())
    return CommandCheck(command, exit_code, timeout, contains, line=mark.line)


def _aggregate(check: Reader, block: YamlMapping) -> AggregateExpect | None:
    """The ``expect`` keys about every run together; ``None`` when none is set."""
    if not any(block.get(key) is not None for key in _AGGREGATE_KEYS):
        return None
    rate = None
    stop_early = False
    min_runs: int | None = None
    if block.get("success_rate") is not None:
        value, mark = check.get(block, "success_rate")
        if not isinstance(value, YamlMapping):
            raise check.fail(
                f"expect.success_rate: expected a mapping like {{min: 0.8}}, "
                f"got {type_name(value)}",
                mark,
            )
        check.keys(value, ("min", "stop_early", "min_runs"), "expect.success_rate")
        if value.get("min") is None:
            raise check.fail("expect.success_rate: give min (a rate from 0 to 1)", mark)
        low, rate_mark = check.get(value, "min")
        rate = check.number(low, rate_mark, "expect.success_rate.min")
        if rate > 1:
            raise check.fail(
                f"expect.success_rate.min: expected a rate from 0 to 1, got {rate:g}",
                rate_mark,
                f"for {rate:g}% write {rate / 100:g}" if rate <= 100 else None,
            )
        if value.get("stop_early") is not None:
            flag, flag_mark = check.get(value, "stop_early")
            if not isinstance(flag, bool):
                raise check.fail(
                    "expect.success_rate.stop_early: expected true or false", flag_mark
                )
            stop_early = flag
        if value.get("min_runs") is not None:
            min_runs = check.integer(
                *check.get(value, "min_runs"), "expect.success_rate.min_runs", 1
            )
    iterations = check.optional(block, "max_mean_iterations", "expect", check.number, None)
    if iterations is not None and iterations < 1:
        _, mark = check.get(block, "max_mean_iterations")
        raise check.fail(
            f"expect.max_mean_iterations: a run has at least 1 iteration, got {iterations:g}",
            mark,
        )
    cost = check.optional(block, "max_mean_cost", "expect", check.number, None)
    errors = check.optional(block, "max_error_rate", "expect", check.number, None)
    if errors is not None and errors > 1:
        _, mark = check.get(block, "max_error_rate")
        raise check.fail(
            f"expect.max_error_rate: expected a rate from 0 to 1, got {errors:g}",
            mark,
            f"for {errors:g}% write {errors / 100:g}" if errors <= 100 else None,
        )
    return AggregateExpect(
        rate, iterations, cost, stop_early=stop_early, min_runs=min_runs, max_error_rate=errors
    )
