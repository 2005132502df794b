"""Reading ``expect.judge`` and labelled-examples files: every mistake a located
``ScenarioError``. The scenario loader hands in its :class:`~pytest_ooda.reader.Reader`,
which knows the file and makes the errors; this module knows the judge's keys."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import (
    JUDGE_CACHE_SCOPES,
    JUDGE_INPUTS,
    JUDGE_PASS_RULES,
    JUDGE_VERDICTS,
)
from pytest_ooda._util import type_name
from pytest_ooda.errors import ScenarioError
from pytest_ooda.judge.model import (
    DEFAULT_INPUTS,
    DEFAULT_JUDGE_RETRIES,
    DEFAULT_JUDGE_TIMEOUT,
    JudgeBackendSpec,
    JudgeSpec,
    LabelledExample,
)
from pytest_ooda.reader import Reader
from pytest_ooda.yamlload import load_yaml_file
from pytest_ooda.yamlnodes import Mark, YamlMapping, YamlSequence

if TYPE_CHECKING:
    from pytest_ooda._types import JudgeInput
    from pytest_ooda.config import ApiSettings

JUDGE_KEYS = (
    "rubric",
    "inputs",
    "judge",
    "votes",
    "pass",
    "retries",
    "examples",
    "judge_cache",
)
_BACKEND_KEYS = ("ai_api", "ai_cmd", "ai_cmd_alias", "ai_output", "timeout")
_EXAMPLE_KEYS = ("name", "label", "output", "diff", "transcript", "files")
#: Suffixes that make a one-line ``rubric:`` a file path rather than the rubric itself.
RUBRIC_SUFFIXES = (".md", ".txt", ".rubric")
#: The most votes one run may ask for (each is a paid request).
MAX_VOTES = 99
#: The most bytes of a rubric or examples file.
MAX_JUDGE_FILE_BYTES = 4 * 1024 * 1024


def read_judge(check: Reader, value: Any, mark: Mark, base: Path | None) -> JudgeSpec:
    """``expect.judge`` into a ``JudgeSpec``; ``base`` is the scenario file's folder
    (rubric and examples paths are relative to it)."""
    where = "expect.judge"
    block = check.mapping(value, mark, where)
    check.keys(block, JUDGE_KEYS, where)
    if block.get("rubric") is None:
        raise check.fail(
            f"{where}: missing 'rubric'",
            block.mark,
            "what a passing run looks like, as text, or a file path relative to the "
            "scenario (rubric: rubrics/plan.md)",
        )
    rubric_value, rubric_mark = check.get(block, "rubric")
    rubric, rubric_file = _rubric(check, rubric_value, rubric_mark, base)
    inputs: tuple[JudgeInput, ...] = DEFAULT_INPUTS
    files: tuple[str, ...] = ()
    if block.get("inputs") is not None:
        inputs, files = _inputs(check, *check.get(block, "inputs"))
    if block.get("judge") is None:
        raise check.fail(
            f"{where}: missing 'judge'",
            block.mark,
            "who grades: judge: {ai_api: {provider: anthropic, model: …}} or "
            "judge: {ai_cmd: 'my-agent --print'} (or ai_cmd_alias)",
        )
    backend = _backend(check, *check.get(block, "judge"))
    votes = 1
    if block.get("votes") is not None:
        votes_value, votes_mark = check.get(block, "votes")
        votes = check.integer(votes_value, votes_mark, f"{where}.votes", 1)
        if votes > MAX_VOTES:
            raise check.fail(f"{where}.votes: at most {MAX_VOTES}, got {votes}", votes_mark)
    rule, at_least = "majority", None
    if block.get("pass") is not None:
        rule, at_least = _pass_rule(check, *check.get(block, "pass"), votes)
    retries = DEFAULT_JUDGE_RETRIES
    if block.get("retries") is not None:
        retries = check.integer(*check.get(block, "retries"), f"{where}.retries", 0)
    examples: tuple[LabelledExample, ...] = ()
    if block.get("examples") is not None:
        examples = read_examples(check, *check.get(block, "examples"), base)
    scope = "run"
    if block.get("judge_cache") is not None:
        scope = check.choice(
            *check.get(block, "judge_cache"), f"{where}.judge_cache", JUDGE_CACHE_SCOPES
        )
    return JudgeSpec(
        rubric=rubric,
        backend=backend,
        inputs=inputs,
        files=files,
        votes=votes,
        pass_rule="at_least" if rule == "at_least" else "all" if rule == "all" else "majority",
        at_least=at_least,
        retries=retries,
        rubric_file=rubric_file,
        examples=examples,
        line=mark.line,
        cache="content" if scope == "content" else "run",
    )


def _rubric(check: Reader, value: Any, mark: Mark, base: Path | None) -> tuple[str, str | None]:
    """The rubric text, and the file it came from when it was given as a path."""
    text = check.text(value, mark, "expect.judge.rubric")
    if not text.strip():
        raise check.fail("expect.judge.rubric: the rubric is empty", mark)
    candidate = text.strip()
    looks_like_path = "\n" not in candidate and (
        candidate.endswith(RUBRIC_SUFFIXES) and " " not in candidate
    )
    if not looks_like_path:
        return text, None
    path = (base or Path.cwd()) / candidate
    if not path.is_file():
        raise check.fail(
            f"expect.judge.rubric: rubric file not found: {candidate} (resolved to {path})",
            mark,
            "a rubric path is relative to the scenario file; write the rubric itself "
            "as a block (rubric: |) if it is not a file",
        )
    return _read_file(check, path, mark, "expect.judge.rubric"), candidate


def _read_file(check: Reader, path: Path, mark: Mark, where: str) -> str:
    from pytest_ooda.errors import ScenarioError
    from pytest_ooda.textfile import read_text_file

    try:
        return read_text_file(
            path, error=ScenarioError, max_bytes=MAX_JUDGE_FILE_BYTES, what="rubric file"
        )
    except OSError as exc:
        raise check.fail(f"{where}: cannot read {path}: {exc.strerror or exc}", mark) from None


def _inputs(
    check: Reader, value: Any, mark: Mark
) -> tuple[tuple[JudgeInput, ...], tuple[str, ...]]:
    where = "expect.judge.inputs"
    items = list(value) if isinstance(value, YamlSequence) else [value]
    marks = value.item_marks if isinstance(value, YamlSequence) else [mark]
    found: list[JudgeInput] = []
    globs: tuple[str, ...] = ()
    for index, item in enumerate(items):
        at = f"{where}[{index}]" if isinstance(value, YamlSequence) else where
        if isinstance(item, YamlMapping):
            check.keys(item, ("files",), at)
            if item.get("files") is None:
                raise check.fail(f"{at}: give files: [globs]", marks[index])
            globs = check.texts(*check.get(item, "files"), f"{at}.files")
            if not globs or any(not glob.strip() for glob in globs):
                raise check.fail(f"{at}.files: a glob cannot be empty", marks[index])
            found.append("files")
            continue
        name = check.choice(item, marks[index], at, [n for n in JUDGE_INPUTS if n != "files"])
        found.append(_input_name(name))
    if not found:
        raise check.fail(f"{where}: name at least one input", mark)
    return tuple(dict.fromkeys(found)), globs


def _input_name(name: str) -> JudgeInput:
    for known in JUDGE_INPUTS:
        if known == name:
            return known
    raise ValueError(name)


def _backend(check: Reader, value: Any, mark: Mark) -> JudgeBackendSpec:
    where = "expect.judge.judge"
    block = check.mapping(value, mark, where)
    check.keys(block, _BACKEND_KEYS, where)
    given = [key for key in ("ai_api", "ai_cmd", "ai_cmd_alias") if block.get(key) is not None]
    if len(given) != 1:
        raise check.fail(
            f"{where}: give exactly one of ai_api, ai_cmd, ai_cmd_alias"
            + (f" (got {', '.join(given)})" if given else ""),
            block.mark,
        )
    api = None
    if block.get("ai_api") is not None:
        api = _api(check, *check.get(block, "ai_api"), f"{where}.ai_api")
    ai_cmd = check.optional(block, "ai_cmd", where, check.text, None)
    if ai_cmd is not None:
        _command_line(check, ai_cmd, check.get(block, "ai_cmd")[1], f"{where}.ai_cmd")
    alias = check.optional(block, "ai_cmd_alias", where, check.text, None)
    if alias is not None and not alias.strip():
        raise check.fail(
            f"{where}.ai_cmd_alias: the alias is empty", check.get(block, "ai_cmd_alias")[1]
        )
    output = None
    if block.get("ai_output") is not None:
        from pytest_ooda.agents import output_formats

        output = check.choice(
            *check.get(block, "ai_output"), f"{where}.ai_output", output_formats()
        )
        if api is not None:
            raise check.fail(
                f"{where}.ai_output: only an agent command's output has a format",
                check.get(block, "ai_output")[1],
            )
    timeout = check.optional(block, "timeout", where, check.positive, DEFAULT_JUDGE_TIMEOUT)
    if api is not None and block.get("timeout") is not None:
        raise check.fail(
            f"{where}.timeout: an ai_api judge takes ai_api.timeout",
            check.get(block, "timeout")[1],
        )
    return JudgeBackendSpec(
        ai_api=api,
        ai_cmd=ai_cmd,
        ai_cmd_alias=alias,
        ai_output=output,
        timeout=timeout,
        line=mark.line,
        column=mark.column,
    )


def _command_line(check: Reader, command: str, mark: Mark, where: str) -> None:
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise check.fail(f"{where}: {exc} in the command line", mark) from None
    if not argv:
        raise check.fail(f"{where}: the command is empty", mark)


def _api(check: Reader, value: Any, mark: Mark, where: str) -> ApiSettings:
    from pytest_ooda.config import API_KEYS, ApiSettings, check_api_value

    block = check.mapping(value, mark, where)
    check.keys(block, API_KEYS, where)
    for required in ("provider", "model"):
        if block.get(required) is None:
            raise check.fail(
                f"{where}: missing required key {required!r}",
                block.mark,
                "an ai_api mapping needs at least provider (anthropic | openai) and model",
            )
    kwargs: dict[str, Any] = {}
    for key in API_KEYS:
        if block.get(key) is None:
            continue
        raw, raw_mark = check.get(block, key)
        try:
            kwargs[key] = check_api_value(key, raw)
        except ValueError as exc:
            raise check.fail(
                f"{where}.{key}: expected {exc}, got {type_name(raw)}", raw_mark
            ) from None
    if "base_url" in kwargs:
        kwargs["base_url"] = kwargs["base_url"].rstrip("/")
    for key in ("timeout", "price_input_per_mtok", "price_output_per_mtok"):
        if key in kwargs:
            kwargs[key] = float(kwargs[key])
    return ApiSettings(**kwargs)


def _pass_rule(check: Reader, value: Any, mark: Mark, votes: int) -> tuple[str, int | None]:
    where = "expect.judge.pass"
    if isinstance(value, YamlMapping):
        check.keys(value, ("at_least",), where)
        if value.get("at_least") is None:
            raise check.fail(f"{where}: give at_least: k", mark)
        k_value, k_mark = check.get(value, "at_least")
        k = check.integer(k_value, k_mark, f"{where}.at_least", 1)
        if k > votes:
            raise check.fail(
                f"{where}.at_least: {k} pass votes can never come from {votes} vote(s)",
                k_mark,
                f"raise votes to at least {k}, or lower at_least",
            )
        return "at_least", k
    rule = check.choice(value, mark, where, [r for r in JUDGE_PASS_RULES if r != "at_least"])
    return rule, None


def read_examples(
    check: Reader, value: Any, mark: Mark, base: Path | None
) -> tuple[LabelledExample, ...]:
    """``examples:`` — a list of labelled examples, or a path (relative to the
    scenario) to a YAML file holding such a list."""
    where = "expect.judge.examples"
    if isinstance(value, str):
        path = (base or Path.cwd()) / value
        if not path.is_file():
            raise check.fail(
                f"{where}: examples file not found: {value} (resolved to {path})", mark
            )
        return load_examples(path)
    if not isinstance(value, YamlSequence):
        raise check.fail(
            f"{where}: expected a list of labelled examples or a file path, got {type_name(value)}",
            mark,
        )
    return tuple(
        _example(check, item, value.item_marks[index], f"{where}[{index}]")
        for index, item in enumerate(value)
    )


def _example(check: Reader, value: Any, mark: Mark, where: str) -> LabelledExample:
    block = check.mapping(value, mark, where)
    check.keys(block, _EXAMPLE_KEYS, where)
    if block.get("label") is None:
        raise check.fail(
            f"{where}: missing 'label'", block.mark, "the verdict a person gave: pass or fail"
        )
    label = check.choice(*check.get(block, "label"), f"{where}.label", JUDGE_VERDICTS)
    texts = {
        key: check.optional(block, key, where, check.text, "")
        for key in ("name", "output", "diff", "transcript")
    }
    files: dict[str, str] = {}
    if block.get("files") is not None:
        table = check.mapping(*check.get(block, "files"), f"{where}.files")
        for key in table:
            name = check.text(key, table.key_marks.get(key, table.mark), f"{where}.files key")
            files[name] = check.text(*check.get(table, key), f"{where}.files[{name!r}]")
    return LabelledExample(
        label="pass" if label == "pass" else "fail",
        output=texts["output"],
        diff=texts["diff"],
        transcript=texts["transcript"],
        files=MappingProxyType(files),
        name=texts["name"] or f"example {where.rsplit('[', 1)[-1].rstrip(']')}",
        line=mark.line,
    )


def load_examples(path: Path) -> tuple[LabelledExample, ...]:
    """A file of labelled examples for judge calibration: a YAML list, or a mapping
    with ``examples:`` (and an optional ``description``)."""
    doc = load_yaml_file(path, error=ScenarioError, max_bytes=MAX_JUDGE_FILE_BYTES)
    check = Reader(str(path), ScenarioError)
    if isinstance(doc, YamlMapping):
        check.keys(doc, ("examples", "description"), "examples file")
        if doc.get("examples") is None:
            raise check.fail("examples file: missing 'examples'", doc.mark)
        value, mark = check.get(doc, "examples")
    else:
        value, mark = doc, Mark(1, 1)
    return read_examples(check, value, mark, path.parent)
