"""Located reading of one value (pytest_ooda/reader.py): what each check accepts, where
and how it refuses the rest, in a YAML file (at the value's line and column) and in a
JSON record (at its line); unknown keys refused or, in a lenient reader, warned about;
nesting bounded."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ooda.errors import ConfigWarning, ResultsError, ScenarioError
from pytest_ooda.reader import MAX_DEPTH, Reader, deeper_than
from pytest_ooda.yamlload import load_yaml_text
from pytest_ooda.yamlnodes import YamlMapping


def _field(text: str) -> tuple[Reader, YamlMapping]:
    """A reader of ``f.yml`` and the mapping ``text`` holds."""
    doc = load_yaml_text(text, file="f.yml", error=ScenarioError)
    assert isinstance(doc, YamlMapping)
    return Reader("f.yml", ScenarioError), doc


def _refused(read: Any) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        read()
    return info.value


def test_values_are_read_as_python_values() -> None:
    check, doc = _field(
        "name: x\nnames: [a, b]\ncount: 3\nrate: 0.5\nflag: false\npattern: '^a+$'\n"
    )
    assert check.text(*check.get(doc, "name"), "name") == "x"
    assert check.texts(*check.get(doc, "name"), "name") == ("x",)
    assert check.texts(*check.get(doc, "names"), "names") == ("a", "b")
    assert check.names(*check.get(doc, "names"), "names") == ("a", "b")
    assert check.integer(*check.get(doc, "count"), "count", 3) == 3
    assert check.number(*check.get(doc, "count"), "count") == 3.0
    assert check.positive(*check.get(doc, "rate"), "rate") == 0.5
    assert check.flag(*check.get(doc, "flag"), "flag") is False
    assert check.patterns(*check.get(doc, "pattern"), "pattern") == ("^a+$",)
    assert check.choice(*check.get(doc, "name"), "name", ("x", "y")) == "x"
    # An absent or null value is the default, unread.
    assert check.optional(doc, "missing", "top", check.text, "dflt") == "dflt"
    assert check.optional(doc, "count", "top", check.integer, None) == 3


@pytest.mark.parametrize(
    ("text", "read", "where", "message"),
    [
        ("v: 1\n", "text", "1:4", "v: expected a string, got an integer (1)"),
        ("v: [a, 1]\n", "texts", "1:8", "v[1]: expected a string, got an integer (1)"),
        ("v: true\n", "integer", "1:4", "v: expected an integer, got a boolean"),
        ("v: 0\n", "integer", "1:4", "v: expected an integer >= 1, got 0"),
        ("v: .nan\n", "number", "1:4", "v: expected a number >= 0, got nan"),
        ("v: -2\n", "number", "1:4", "v: expected a number >= 0, got -2"),
        ("v: 0\n", "positive", "1:4", "v: expected a number > 0, got 0"),
        ("v: yes please\n", "flag", "1:4", "v: expected true or false, got a string"),
        ("v: [a, ' ']\n", "names", "1:8", "v[1]: a tool name cannot be empty"),
        ("v: '(a'\n", "patterns", "1:4", "v: '(a' is not a regular expression"),
        ("v: z\n", "choice", "1:4", "v: expected one of x, y, got 'z'"),
        ("v: [x]\n", "mapping", "1:4", "v: expected a mapping, got a list"),
    ],
)
def test_a_wrong_value_is_refused_where_it_is(
    text: str, read: str, where: str, message: str
) -> None:
    check, doc = _field(text)
    value, mark = check.get(doc, "v")
    extra: tuple[Any, ...] = {"integer": (1,), "choice": (("x", "y"),)}.get(read, ())
    error = _refused(lambda: getattr(check, read)(value, mark, "v", *extra))
    assert str(error).startswith(f"f.yml:{where}: {message}"), str(error)


def test_an_unknown_key_is_refused_at_the_key_with_the_closest_known_one() -> None:
    check, doc = _field("top: 1\nexpext: 2\n")
    error = _refused(lambda: check.keys(doc, ("top", "expect"), "here"))
    assert (error.line, error.column, error.message) == (2, 1, "here: unknown key 'expext'")
    assert error.hint == "did you mean 'expect'?\n  expected one of: expect, top"
    far = _refused(lambda: check.keys(doc, ("top", "zzz"), "here"))
    assert far.hint == "expected one of: top, zzz"
    check, doc = _field("1: x\n")
    error = _refused(lambda: check.keys(doc, ("top",), "here"))
    assert error.message == "here: keys must be strings, got an integer (1)"


def test_a_lenient_reader_warns_about_unknown_keys_and_names_them() -> None:
    doc = load_yaml_text("top: 1\nextra: 2\n", file="rooda-config.yml")
    assert isinstance(doc, YamlMapping)
    check = Reader("rooda-config.yml", ScenarioError, ConfigWarning, lenient=True)
    assert check.keys(doc, ("top",), "loop") == {"extra"}
    [warning] = check.warnings
    assert isinstance(warning, ConfigWarning)
    assert (warning.file, warning.line, warning.column) == ("rooda-config.yml", 2, 1)
    assert (
        warning.message
        == "loop: unknown key 'extra' (ignored, as rooda does); expected one of: top"
    )


def test_a_json_value_is_refused_at_the_line_of_its_record() -> None:
    check = Reader("r.jsonl", ResultsError, line=7)
    record = {"n": "x", "list": [1, "two"]}
    error = _refused_as(ResultsError, lambda: check.integer(record["n"], None, "n"))
    assert (error.file, error.line, error.column) == ("r.jsonl", 7, None)
    assert error.message == "n: expected an integer, got a string ('x')"
    error = _refused_as(ResultsError, lambda: check.texts(record["list"], None, "list"))
    assert (error.line, error.message) == (7, "list[0]: expected a string, got an integer (1)")
    assert check.mapping(record, None, "record") is record


def test_the_depth_of_a_value_is_measured_without_recursion() -> None:
    deep: object = 1
    for _ in range(50_000):  # far past Python's recursion limit
        deep = [deep]
    assert deeper_than(deep)
    level: object = 1
    for _ in range(MAX_DEPTH):
        level = {"a": level}
    assert not deeper_than(level)
    assert deeper_than({"b": level})
    assert not deeper_than([1, "x", None, {}])


def test_a_value_kept_as_it_is_is_refused_when_nested_too_deep() -> None:
    check = Reader("r.jsonl", ResultsError, line=3)
    deep: object = {}
    for _ in range(MAX_DEPTH + 1):
        deep = {"a": deep}
    error = _refused_as(ResultsError, lambda: check.nested(deep, None, "expect"))
    assert (error.line, error.message) == (3, f"expect: nesting deeper than {MAX_DEPTH} levels")
    assert check.nested({"a": [1]}, None, "expect") == {"a": [1]}


def _refused_as(cls: type[Exception], read: Any) -> Any:
    with pytest.raises(cls) as info:
        read()
    return info.value


def test_the_base_folder_of_relative_paths() -> None:
    assert Reader("dir/sub/s.yml").base is not None
    assert str(Reader("dir/sub/s.yml").base) == "dir/sub"
    assert Reader(None).base is None
