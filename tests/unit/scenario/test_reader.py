"""Located reading of one value (scenario/reader.py): what each reader accepts, where
and how it refuses the rest; and a judge's labelled-examples file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.errors import ScenarioError
from pytest_ooda.scenario.reader import Reader, load_examples
from pytest_ooda.yamlload import load_yaml_text
from pytest_ooda.yamlnodes import YamlMapping

if TYPE_CHECKING:
    from pathlib import Path


def _field(text: str) -> tuple[Reader, YamlMapping]:
    """A reader of ``f.yml`` and the mapping ``text`` holds."""
    doc = load_yaml_text(text, file="f.yml", error=ScenarioError)
    assert isinstance(doc, YamlMapping)
    return Reader("f.yml"), doc


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
    assert (error.line, error.column, error.message) == (2, 1, "unknown key 'expext' in here")
    assert error.hint == "did you mean 'expect'?"
    far = _refused(lambda: check.keys(doc, ("top", "zzz"), "here"))
    assert far.hint == "expected one of: top, zzz"


def test_the_base_folder_of_relative_paths() -> None:
    assert Reader("dir/sub/s.yml").base is not None
    assert str(Reader("dir/sub/s.yml").base) == "dir/sub"
    assert Reader(None).base is None


def test_an_examples_file_a_list_or_a_mapping(tmp_path: Path) -> None:
    listed = tmp_path / "listed.yml"
    listed.write_text("- {name: good, label: pass, output: fine}\n- {label: fail, output: nope}\n")
    assert [example.label for example in load_examples(listed)] == ["pass", "fail"]
    described = tmp_path / "described.yml"
    described.write_text("description: two\nexamples:\n  - {label: pass, output: ok}\n")
    assert [example.output for example in Reader(None).examples_file(described)] == ["ok"]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("description: none\n", "1:1", "examples file: missing 'examples'"),
        ("exampels: []\n", "1:1", "unknown key 'exampels' in examples file"),
        ("- {label: maybe, output: x}\n", "1:11", "label"),
    ],
)
def test_mistakes_in_an_examples_file_are_located(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = tmp_path / "examples.yml"
    path.write_text(text)
    error = _refused(lambda: load_examples(path))
    assert str(error).startswith(f"{path}:{where}: "), str(error)
    assert message in error.message
