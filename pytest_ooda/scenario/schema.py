"""Loading scenario files: YAML validated into a ``Scenario``, every mistake a located
``ScenarioError``.

This module reads the document and the scenario's own settings (procedure, context,
limits, budgets, ``repeat``, ``retry``, ``sandbox``, ``variants``); the sections have
their own readers — ``expect:`` in :mod:`.expect_schema`, what a recording holds
(``iterations``, ``recorded``, ``judged``) in :mod:`.recording_schema` — all written
with :class:`~pytest_ooda.reader.Reader`, which locates every mistake.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import REPLAY_KINDS
from pytest_ooda.errors import ScenarioError
from pytest_ooda.reader import Reader
from pytest_ooda.scenario.drive import (
    material_keys,
    read_material,
    read_prompt,
    read_triggers,
)
from pytest_ooda.scenario.expect_schema import read_expect, read_setup
from pytest_ooda.scenario.model import (
    _PROCEDURE_NAME,
    _TOP_KEYS,
    MAX_REPEAT,
    MAX_SCENARIO_BYTES,
    Scenario,
    ScenarioIteration,
)
from pytest_ooda.scenario.recording_schema import read_iterations, read_judged, read_recorded
from pytest_ooda.yamlload import load_yaml_file, load_yaml_text
from pytest_ooda.yamlnodes import Mark, YamlMapping, to_plain, value_mark

if TYPE_CHECKING:
    from pytest_ooda._types import ReplayKind
    from pytest_ooda.config import RetrySettings
    from pytest_ooda.judge import RecordedGrading
    from pytest_ooda.replay_rules import ReplayRule
    from pytest_ooda.sandbox import SandboxSpec
    from pytest_ooda.scenario.drive import Triggers
    from pytest_ooda.scenario.verify import CommandCheck
    from pytest_ooda.variants import Variant

__all__ = ["load_scenario", "load_scenario_text"]


def load_scenario_text(
    text: str, *, path: str | Path | None = None, name: str | None = None
) -> Scenario:
    """Parse and validate scenario YAML; errors name ``path:line:col``."""
    display = str(path) if path is not None else None
    doc = load_yaml_text(text, file=display, error=ScenarioError)
    resolved = Path(path) if path is not None else None
    stem = name or (resolved.stem if resolved is not None else "scenario")
    return _scenario(Reader(display, ScenarioError), doc, resolved, stem)


def load_scenario(path: str | Path, *, name: str | None = None) -> Scenario:
    """Read and validate the scenario file at ``path`` (``name`` defaults to its stem)."""
    file = Path(path)
    doc = load_yaml_file(file, error=ScenarioError, max_bytes=MAX_SCENARIO_BYTES)
    return _scenario(Reader(str(file), ScenarioError), doc, file, name or file.stem)


def _scenario(check: Reader, doc: Any, path: Path | None, name: str) -> Scenario:
    """The whole document: what to run and under which settings, then the sections.

    Every key is read on its own (``check.attempt``), so a file with three mistakes
    reports the three in one error (``OodaError.also``), in file order.
    """
    root = check.mapping(doc, Mark(1, 1), "scenario file")
    check.collect = True
    check.keys(root, (*_TOP_KEYS, *material_keys()), "scenario")
    procedure = check.attempt(_procedure, check, root, default="")

    def read(key: str, reader: Any, default: Any) -> Any:
        if root.get(key) is None:
            return default
        return check.attempt(reader, *check.get(root, key), default=default)

    def at_least(where: str, minimum: int) -> Any:
        return partial(_integer, check, where, minimum)

    description = read("description", partial(_text, check, "description"), None)
    context = read("context", partial(_texts, check, "context"), ())
    max_iterations = read("max_iterations", at_least("max_iterations", 1), None)
    failure_threshold = read("failure_threshold", at_least("failure_threshold", 1), None)
    workspace = read("workspace", partial(_text, check, "workspace"), None)
    max_cost = read("max_cost", partial(_positive, check, "max_cost"), None)
    max_tokens = read("max_tokens", at_least("max_tokens", 1), None)
    recorded = read("recorded", partial(read_recorded, check), None)
    expect = read("expect", partial(read_expect, check), None)
    repeat = read("repeat", partial(_repeat, check), None)
    control = read("control", partial(_flag, check, "control"), False)
    sandbox = read("sandbox", lambda value, mark: _sandbox(check, root, path), None)
    judged = read("judged", partial(_judged, check), None)
    variants = read("variants", partial(_variants, check), ())
    retry = read("retry", partial(_retry, check), None)
    chosen = read("replay", partial(_choice, check, "replay", REPLAY_KINDS), None)
    replay: ReplayKind | None = None
    if chosen is not None:
        replay = "agent" if chosen == "agent" else "loop"
    iterations: tuple[ScenarioIteration, ...] = read(
        "iterations", partial(read_iterations, check), ()
    )
    rules = read("replay_normalise", partial(_rules, check), ())
    prompt: str | None = read("prompt", partial(read_prompt, check), None)
    setup: tuple[CommandCheck, ...] = read("setup", partial(read_setup, check), ())
    triggers: Triggers | None = read("triggers", partial(read_triggers, check), None)
    material = {
        key: dirs
        for key in material_keys()
        if (dirs := read(key, partial(read_material, check, key), None)) is not None
    }
    check.raise_collected()
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
        replay=replay,
        replay_normalise=rules,
        prompt=prompt,
        material=material or None,
        setup=setup,
        triggers=triggers,
        control=control,
    )


def _procedure(check: Reader, root: YamlMapping) -> str:
    if "procedure" not in root:
        raise check.fail(
            "missing required key 'procedure'",
            root.mark,
            "name the procedure this scenario runs",
        )
    value, mark = check.get(root, "procedure")
    procedure = check.text(value, mark, "procedure")
    if not _PROCEDURE_NAME.match(procedure):
        raise check.fail(
            f"procedure: {procedure!r} is not a procedure name",
            mark,
            "procedure names match [a-z0-9][a-z0-9-]*",
        )
    return procedure


def _rules(check: Reader, value: Any, mark: Mark) -> tuple[ReplayRule, ...]:
    from pytest_ooda.replay_rules import read_rules

    return read_rules(check, value, mark, "replay_normalise")


def _text(check: Reader, where: str, value: Any, mark: Mark) -> str:
    return check.text(value, mark, where)


def _texts(check: Reader, where: str, value: Any, mark: Mark) -> tuple[str, ...]:
    return check.texts(value, mark, where)


def _integer(check: Reader, where: str, minimum: int, value: Any, mark: Mark) -> int:
    return check.integer(value, mark, where, minimum)


def _positive(check: Reader, where: str, value: Any, mark: Mark) -> float:
    return check.positive(value, mark, where)


def _flag(check: Reader, where: str, value: Any, mark: Mark) -> bool:
    return check.flag(value, mark, where)


def _choice(check: Reader, where: str, choices: tuple[str, ...], value: Any, mark: Mark) -> str:
    return check.choice(value, mark, where, choices)


def _judged(check: Reader, value: Any, mark: Mark) -> RecordedGrading:
    return read_judged(check, value, mark, "scenario.judged")


def _repeat(check: Reader, value: Any, mark: Mark) -> int:
    count = check.integer(value, mark, "repeat", 1)
    if count > MAX_REPEAT:
        raise check.fail(
            f"repeat: at most {MAX_REPEAT} runs, got {count}",
            mark,
            "split a larger sample over CI shards (--ooda-shard K/N) and merge the "
            "results with `ooda report`",
        )
    return count


def _retry(check: Reader, value: Any, mark: Mark) -> RetrySettings:
    """``retry:`` as in a config file (``{attempts, delay, max_delay}`` or a count)."""
    from pytest_ooda.config import _Invalid, check_retry

    try:
        settings: RetrySettings = check_retry(value)
    except _Invalid as exc:
        raise check.fail(f"retry: expected {exc.expected}", mark) from None
    return settings


def _sandbox(check: Reader, root: YamlMapping, path: Path | None) -> SandboxSpec:
    """``sandbox:`` (as in the config: a kind, or a mapping with ``kind:``), located."""
    from pytest_ooda.sandbox import OptionError, parse_spec

    value, mark = check.get(root, "sandbox")
    try:
        return parse_spec(to_plain(value), base_dir=path.parent if path else None)
    except OptionError as exc:
        where = "sandbox"
        if exc.key is not None and isinstance(value, YamlMapping) and exc.key in value:
            mark = value_mark(value, exc.key)
            where = f"sandbox.{exc.key}"
        hint = f"{exc.hint}\n  see `ooda help sandbox`" if exc.hint else "see `ooda help sandbox`"
        raise check.fail(f"{where}: {exc.message}", mark, hint) from None


_VARIANT_TEXT = ("ai_cmd", "ai_cmd_alias", "model", "prompt_format", "ai_output", "sandbox")


def _variants(check: Reader, value: Any, mark: Mark) -> tuple[Variant, ...]:
    """``variants:``: a mapping of names to settings (see ``pytest_ooda.variants``)."""
    # Imported here, like the tool and command checks: most scenarios have none.
    from pytest_ooda.variants import (
        VARIANT_KEYS,
        check_name,
        check_place,
        check_value,
        make_variant,
    )

    table = check.mapping(value, mark, "variants")
    found: list[Variant] = []
    for name in table:
        key_mark = table.key_marks.get(name, table.mark)
        text = check.text(name, key_mark, "variants key")
        problem = check_name(text)
        if problem:
            raise check.fail(f"variants: {problem}", key_mark)
        at = f"variants.{text}"
        body, body_mark = check.get(table, name)
        # `baseline:` alone (or `{}`) is the session's own settings, under a name.
        block = YamlMapping(mark=body_mark) if body is None else check.mapping(body, body_mark, at)
        check.keys(block, (*VARIANT_KEYS, *material_keys()), at)
        values: dict[str, str] = {}
        for key in (*_VARIANT_TEXT, *material_keys()):
            if block.get(key) is None:
                continue
            raw, raw_mark = check.get(block, key)
            item = check.text(raw, raw_mark, f"{at}.{key}")
            problem = check_value(key, item)
            if problem:
                raise check.fail(f"{at}.{problem}", raw_mark)
            values[key] = item
        if "ai_cmd" in values and "ai_cmd_alias" in values:
            raise check.fail(f"{at}: give ai_cmd or ai_cmd_alias, not both", block.mark)
        parameters: dict[str, Any] = {}
        if block.get("parameters") is not None:
            params = check.mapping(*check.get(block, "parameters"), f"{at}.parameters")
            for param in params:
                parameters[
                    check.text(
                        param, params.key_marks.get(param, params.mark), f"{at}.parameters key"
                    )
                ] = to_plain(params[param])
        fragments: dict[str, str] = {}
        if block.get("fragments") is not None:
            swaps = check.mapping(*check.get(block, "fragments"), f"{at}.fragments")
            for old in swaps:
                old_text = check.text(
                    old, swaps.key_marks.get(old, swaps.mark), f"{at}.fragments key"
                )
                fragments[old_text] = check.text(
                    *check.get(swaps, old), f"{at}.fragments[{old_text!r}]"
                )
        without: list[str] = []
        if block.get("without") is not None:
            places, places_mark = check.get(block, "without")
            for item, item_mark in check.items(places, places_mark, f"{at}.without"):
                place = check.text(item, item_mark, f"{at}.without entry")
                problem = check_place(place)
                if problem:
                    raise check.fail(f"{at}.{problem}", item_mark)
                without.append(place)
        found.append(
            make_variant(
                text,
                values,
                parameters,
                fragments,
                without=tuple(without),
                source=check.file,
                line=key_mark.line,
                column=key_mark.column,
            )
        )
    if not found:
        raise check.fail("variants: name at least one variant", mark)
    return tuple(found)
