"""The located YAML loader: marks, duplicates, malformed input, and fuzzing."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_ooda import yamlload
from pytest_ooda.config import load_config
from pytest_ooda.errors import ConfigError, OodaError
from pytest_ooda.yamlload import load_yaml_file, load_yaml_text
from pytest_ooda.yamlnodes import Mark, YamlMapping, YamlSequence, to_plain


def err(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, file="x.yml")
    return info.value


def test_marks_for_keys_values_and_items() -> None:
    doc = load_yaml_text("a: 1\nb:\n  - x\n  - {c: d}\n", file="x.yml")
    assert isinstance(doc, YamlMapping)
    assert doc.key_marks["b"] == Mark(2, 1)
    assert doc.value_marks["a"] == Mark(1, 4)
    seq = doc["b"]
    assert isinstance(seq, YamlSequence)
    assert seq.item_marks == [Mark(3, 5), Mark(4, 5)]
    assert seq[1].key_marks["c"] == Mark(4, 6)
    assert to_plain(doc) == {"a": 1, "b": ["x", {"c": "d"}]}
    assert type(to_plain(doc)) is dict


def test_scalars_follow_yaml_but_dates_stay_text() -> None:
    doc = load_yaml_text("a: 0x10\nb: true\nc: ~\nd: 1.5\ne: 2024-01-02\nf: '7'\n")
    assert doc == {"a": 16, "b": True, "c": None, "d": 1.5, "e": "2024-01-02", "f": "7"}


def test_duplicate_key() -> None:
    e = err("a: 1\nb: 2\na: 3\n")
    assert str(e) == "x.yml:3:1: duplicate key 'a'\n  first defined at line 1, column 1"


def test_merge_keys_allowed_and_explicit_wins() -> None:
    doc = load_yaml_text("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n")
    assert doc["use"] == {"x": 1, "y": 3}


def test_tab_indentation() -> None:
    e = err("a:\n\tb: 1\n")
    assert (e.line, e.column) == (2, 1)
    assert e.hint == (
        "YAML does not allow tab characters for indentation; use spaces\n"
        "  YAML cannot be read past this mistake: nothing in the file loaded until it is fixed"
    )


def test_multiple_documents() -> None:
    e = err("a: 1\n---\nb: 2\n")
    assert e.message == "invalid YAML: expected a single YAML document, found more than one ('---')"
    assert e.line == 2


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("a: !!binary aGk=\n", "unsupported YAML tag 'tag:yaml.org,2002:binary'", 1),
        ("a: !custom x\n", "unsupported YAML tag '!custom'", 1),
        ("? [a]\n: 1\n", "mapping keys must be plain scalars, not collections", 1),
        ("a: &x [*x]\n", "recursive alias: a value cannot contain itself", 1),
        ("a: 'open\n", "invalid YAML: while scanning a quoted scalar (at line 1, column 4)", 2),
        ("a: 1\n b: 2\n", "invalid YAML: inconsistent indentation: line 2 is indented 1", 2),
        ("a: \x07\n", "invalid YAML: unacceptable character #x0007", 1),
        ("[" * 300 + "]" * 300, "nesting deeper than 100 levels", 1),
        ("[" * 5000 + "]" * 5000, "nesting deeper than 100 levels", 1),
    ],
    ids=[
        "binary-tag",
        "custom-tag",
        "complex-key",
        "recursive-alias",
        "open-quote",
        "indentation",
        "control-char",
        "deep-nesting",
        "very-deep-nesting",
    ],
)
@pytest.mark.parametrize("parser", ["libyaml", "python"])
def test_malformed(
    text: str, message: str, line: int, parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parser == "python":
        monkeypatch.setattr(yamlload, "_FastLoader", None)
    e = err(text)
    assert e.message.startswith(message)
    assert e.line == line
    assert e.file == "x.yml"


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    e = err("\n".join(lines) + "\n")
    assert "alias expansion" in e.message


def test_files_empty_binary_huge(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yml"
    empty.write_text("# only a comment\n")
    assert load_yaml_file(empty) is None
    junk = tmp_path / "junk.yml"
    junk.write_bytes(b"a: 1\nb: \x00\x01\x02\xff\xfe\n")
    with pytest.raises(ConfigError) as info:
        load_yaml_file(junk, display="junk.yml")
    assert str(info.value).startswith(
        "junk.yml:2:7: YAML file is not valid UTF-8 text (byte 0xff at offset 11)"
    )
    nul = tmp_path / "nul.yml"
    nul.write_bytes(b"a: 1\nb: \x00\n")
    with pytest.raises(ConfigError, match="NUL byte"):
        load_yaml_file(nul)
    huge = tmp_path / "huge.yml"
    huge.write_bytes(b"a: 1\n" + b"#" * 200)
    with pytest.raises(ConfigError) as info:
        load_yaml_file(huge, display="huge.yml", max_bytes=100)
    assert str(info.value) == ("huge.yml:1:1: YAML file is too large: 205 bytes (limit 100 bytes)")


def test_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert load_yaml_file(path) == {"a": 1}


def test_default_size_cap_is_10_mb(tmp_path: Path) -> None:
    path = tmp_path / "ooda-config.yml"
    with path.open("wb") as handle:
        handle.write(b"loop: {}\n")
        handle.truncate(10 * 1024 * 1024 + 1)
    with pytest.raises(ConfigError, match=r"too large: 10485761 bytes \(limit 10485760 bytes\)"):
        load_config(path, env={}, builtin=False, global_config=False)


# Random YAML documents: whatever the shape, the loader and the config schema either
# accept it or raise an OodaError — never anything else.
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["max-iterations", "unlimited", "info", "content", "path", "builtin:x"]),
)
_keys = st.one_of(
    st.sampled_from(
        [
            "loop",
            "procedures",
            "ai_cmd_aliases",
            "lint",
            "observe",
            "act",
            "content",
            "path",
            "parameters",
            "default_max_iterations",
            "ai_api",
            "provider",
            "model",
            "build",
            "ai_cmd_alias",
        ]
    ),
    st.text(max_size=8),
)
_values = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_keys, children, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_values)
def test_random_documents_only_raise_ooda_errors(document: object) -> None:
    text = yaml.safe_dump(document, allow_unicode=True)
    with contextlib.suppress(OodaError):
        load_config_text(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"#\n\t ,?%@`0")), max_size=60))
def test_random_text_only_raises_ooda_errors(text: str) -> None:
    with contextlib.suppress(OodaError):
        load_config_text(text)


def load_config_text(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ooda-config.yml"
        path.write_text(text, encoding="utf-8")
        load_config(path, env={}, builtin=False, global_config=False)


# Schema-shaped documents reach the deeper validation paths (procedures, phases, fragment
# actions, ai_api, aliases) that free-form documents rarely get to.
_leaf = st.one_of(
    _scalars,
    st.lists(st.text(max_size=5), max_size=2),
    st.dictionaries(st.text(max_size=5), _scalars, max_size=2),
)
_action = st.dictionaries(
    st.sampled_from(["content", "path", "parameters", "paramters"]),
    st.one_of(
        _leaf,
        st.sampled_from(["x.md", "builtin:fragments/act/emit_success.md", "builtin:../x", "{{.a}"]),
    ),
    max_size=3,
)
_procedure = st.dictionaries(
    st.sampled_from(
        [
            "display",
            "observe",
            "act",
            "iteration_mode",
            "default_max_iterations",
            "ai_cmd",
            "ai_cmd_alias",
            "ai_api",
        ]
    ),
    st.one_of(_leaf, st.lists(_action, max_size=3)),
    max_size=4,
)
_config = st.fixed_dictionaries(
    {},
    optional={
        "loop": st.dictionaries(st.sampled_from(["ai_cmd", "ai_api", "log_level", "x"]), _leaf),
        "ai_cmd_aliases": st.dictionaries(st.text(max_size=4), _leaf, max_size=2),
        "procedures": st.dictionaries(
            st.sampled_from(["build", "p", "Bad Name", "x-1"]), _procedure, max_size=2
        ),
        "lint": st.dictionaries(st.text(max_size=6), _leaf, max_size=2),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_config)
def test_schema_shaped_documents_only_raise_ooda_errors(document: object) -> None:
    with contextlib.suppress(OodaError):
        load_config_text(yaml.safe_dump(document, allow_unicode=True))


def test_fifo_and_directory_are_refused_without_blocking(tmp_path: Path) -> None:
    import os

    from pytest_ooda.errors import ScenarioError
    from pytest_ooda.textfile import read_text_file

    os.mkfifo(tmp_path / "pipe.yml")
    with pytest.raises(ScenarioError, match="cannot read scenario: not a regular file"):
        read_text_file(tmp_path / "pipe.yml", error=ScenarioError, what="scenario")
    with pytest.raises(OodaError, match="cannot read file: it is a directory"):
        read_text_file(tmp_path)


def test_utf16_config_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "ooda-config.yml"
    path.write_bytes("loop: {}\n".encode("utf-16"))
    with pytest.raises(ConfigError) as info:
        load_config(path, env={}, builtin=False, global_config=False)
    assert info.value.hint == "the file is UTF-16 (its first bytes say so); save it as UTF-8"


def _event_depth(text: str) -> int:
    """The deepest nesting of ``text``, counted from PyYAML's own parser's events."""
    depth = deepest = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
    return deepest


def _compact(value: object, indent: int = 0) -> str:
    """Block YAML in its most compact spelling: ``- - x`` and ``- k:`` on one line,
    sequences at their mapping's own column, so nesting costs the fewest columns."""
    pad = " " * indent
    if isinstance(value, list) and value:
        lines = []
        for item in value:
            body = _compact(item, indent + 2)
            lines.append(f"{pad}- {body[indent + 2 :]}" if body.strip() else f"{pad}- ~")
        return "\n".join(lines)
    if isinstance(value, dict) and value:
        lines = []
        for key, item in value.items():
            if isinstance(item, list) and item:
                lines.append(f"{pad}{key}:\n{_compact(item, indent)}")
            elif isinstance(item, dict) and item:
                lines.append(f"{pad}{key}:\n{_compact(item, indent + 1)}")
            else:
                lines.append(f"{pad}{key}: {json.dumps(item)}")
        return "\n".join(lines)
    return pad + json.dumps(value)


_nested = st.recursive(
    st.one_of(st.integers(), st.text(alphabet="ab -:[{", max_size=4)),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c-d"]), children, min_size=1, max_size=3),
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_nested, style=st.sampled_from(["compact", "block", "flow", "mixed"]))
def test_nesting_bound_is_never_below_the_depth(document: object, style: str) -> None:
    # Shallow documents skip the event pass on this bound, so it must hold for every
    # spelling of a document, the most compact included.
    if style == "compact":
        text = _compact(document) + "\n"
    else:
        flow = {"block": False, "flow": True, "mixed": None}[style]
        text = yaml.safe_dump(document, default_flow_style=flow, indent=2)
    assert yamlload.nesting_bound(text) >= _event_depth(text)
    for breaks in ("\r\n", "\r", "\u2028"):
        spelt = text.replace("\n", breaks)
        with contextlib.suppress(yaml.YAMLError):
            assert yamlload.nesting_bound(spelt) >= _event_depth(spelt)


@pytest.mark.parametrize(
    "text",
    [
        "".join(f"{'  ' * level}k{level}:\n" for level in range(150)) + "  " * 150 + "v: 1\n",
        "- " * 150 + "x\n",
        "".join(f"{' ' * level}- \r" for level in range(0, 300, 2)) + "x\r",
        "a:\n" + "".join(f"{'  ' * level}- b:\n" for level in range(1, 80)),
    ],
    ids=["block-mappings", "compact-sequences", "cr-line-breaks", "sequences-of-mappings"],
)
@pytest.mark.parametrize("parser", ["libyaml", "python"])
def test_deep_block_nesting_is_refused(
    text: str, parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parser == "python":
        monkeypatch.setattr(yamlload, "_FastLoader", None)
    assert yamlload.nesting_bound(text) > yamlload.MAX_DEPTH
    assert "nesting deeper than 100 levels" in err(text).message


def test_a_shallow_document_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The event pass that guards the recursive composer costs a second parse; a
    # document whose text cannot nest past the limit does without it.
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("the event pass ran")

    monkeypatch.setattr(yamlload, "_count_depth", fail)
    assert load_yaml_text("a:\n  - b: [1, {c: 2}]\n") == {"a": [{"b": [1, {"c": 2}]}]}
    with pytest.raises(AssertionError, match="the event pass ran"):
        load_yaml_text("[" * 101 + "]" * 101)
