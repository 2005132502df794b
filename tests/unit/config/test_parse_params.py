"""Fragment parameters from config files are typed like Go's yaml.v3, the rest like YAML 1.1.

The corpus in tests/conformance/config_params/ holds configs with parameters of every YAML
shape; goldens.json is what the Go implementation (yaml.v3 + text/template) composes from
them, written by tools/gotemplate-oracle/regen_config_params.py.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from external_tools import GO_INSTALL, require
from hypothesis import given, settings, strategies as st

from pytest_ooda import yamlload, yamlnodes
from pytest_ooda.cli import main
from pytest_ooda.compose import compose_phase
from pytest_ooda.config import Config, load_config_file
from pytest_ooda.errors import ConfigError
from pytest_ooda.gotemplate.gofmt import U64, GoTime
from pytest_ooda.gotemplate.yamlv3 import load_params
from pytest_ooda.yamlload import load_yaml_text
from pytest_ooda.yamlnodes import ANY_ITEM, ANY_KEY, YamlMapping

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "conformance" / "config_params"
GOLDENS: dict[str, dict[str, Any]] = json.loads(
    (CORPUS / "goldens.json").read_text(encoding="utf-8")
)
ORACLE_DIR = ROOT / "tools" / "gotemplate-oracle"


@pytest.fixture(params=["libyaml", "pure-python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with libyaml's parser and with PyYAML's pure-Python one."""
    if request.param == "pure-python":
        monkeypatch.setattr(yamlload, "_FastLoader", None)
    elif yamlload._FastLoader is None:
        pytest.fail("PyYAML was built without libyaml; the fast path is untested")
    return str(request.param)


def write(tmp_path: Path, text: str, name: str = "ooda-config.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def composed(config: Config) -> dict[str, str]:
    """Every non-empty phase of every procedure, composed as ``ooda show --phase`` does."""
    out = {}
    for name, procedure in config.procedures.items():
        for phase, actions in procedure.phases().items():
            if actions:
                out[f"{name}/{phase}"] = compose_phase(actions, procedure=name, phase=phase)
    return out


def params(path: Path, procedure: str = "t", phase: str = "observe") -> dict[str, Any]:
    action = load_config_file(path).procedures[procedure].phases()[phase][0]
    return dict(action.parameters)


# -- parity with Go ----------------------------------------------------------------------


def test_corpus_and_goldens_match() -> None:
    assert sorted(GOLDENS) == sorted(p.name for p in CORPUS.glob("*.yml"))
    assert any(entry["kind"] != "ok" for entry in GOLDENS.values())


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_composition_matches_go(name: str, parser: str) -> None:
    golden = GOLDENS[name]
    if golden["kind"] != "ok":
        with pytest.raises(ConfigError) as info:
            load_config_file(CORPUS / name)
        assert info.value.line is not None
        go_line = re.search(r"line (\d+):", golden["error"])
        if go_line:
            assert info.value.line == int(go_line[1])
        return
    assert composed(load_config_file(CORPUS / name)) == golden["phases"]


@pytest.mark.skipif(
    not (ORACLE_DIR / "oracle.py").is_file(), reason="the Go oracle is not in this checkout"
)
def test_goldens_are_what_go_produces_now() -> None:
    sys.path.insert(0, str(ORACLE_DIR))
    try:
        oracle = importlib.import_module("oracle")
        regen_config_params = importlib.import_module("regen_config_params")
    finally:
        sys.path.remove(str(ORACLE_DIR))
    require(oracle.go_available(), "Go 1.19 with yaml.v3", GO_INSTALL)
    assert regen_config_params.goldens() == GOLDENS


def test_ooda_show_prints_what_go_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        procedures:
          t:
            observe:
              - content: "flag={{.flag}} n={{.n}} d={{.d}}"
                parameters: {flag: yes, n: 1e3, d: 2024-01-02}
        """,
    )
    assert main(["show", "t", "--phase", "observe", "--config", str(path)]) == 0
    assert capsys.readouterr().out == "flag=yes n=1000 d=2024-01-02 00:00:00 +0000 UTC\n"


# -- the values themselves ----------------------------------------------------------------


def test_values_have_go_types(tmp_path: Path, parser: str) -> None:
    path = write(
        tmp_path,
        """
        procedures:
          t:
            observe:
              - content: "{{.a}}"
                parameters:
                  a: on
                  b: 0o17
                  c: 18446744073709551615
                  d: 2024-01-02T03:04:05+01:00
                  e: .NaN
                  f: 1_000
                  g: [n, 1e3, {Y: ~}]
                  h: !!float 2
                  i: !!binary aGk=
        """,
    )
    got = params(path)
    assert got["a"] == "on"
    assert got["b"] == 15
    assert type(got["b"]) is int
    assert type(got["c"]) is U64
    assert got["c"] == 2**64 - 1
    assert isinstance(got["d"], GoTime)
    assert str(got["d"]) == "2024-01-02 03:04:05 +0100 +0100"
    assert math.isnan(got["e"])
    assert got["f"] == 1000
    assert got["g"] == ["n", 1000.0, {"Y": None}]
    assert type(got["g"]) is list
    assert type(got["g"][2]) is dict
    assert got["h"] == 2.0
    assert type(got["h"]) is float
    assert got["i"] == "hi"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.-+_:eExXoObB ~TtYyNnfalsu'\"[],", max_size=12))
def test_arbitrary_scalars_type_as_the_yaml_v3_loader_does(value: str) -> None:
    text = f"p:\n  a: {value}\n"
    try:
        expected = load_params(text)
    except (yaml.YAMLError, ValueError):
        expected = None
    try:
        doc = load_yaml_text(text, go_typed=("p",))
    except ConfigError:
        return  # located, which is all a malformed value must give
    got = yamlnodes.to_plain(doc)
    if expected is not None:
        assert _same(got["p"]["a"], expected["p"]["a"])


def test_rest_of_config_keeps_yaml_1_1_typing_even_through_shared_anchors(
    tmp_path: Path, parser: str
) -> None:
    path = write(
        tmp_path,
        """
        loop:
          show_ai_output: &flag yes
        lint:
          parameters-without-template: &sev off
        procedures:
          t:
            observe:
              - content: "{{.a}} {{.b}}"
                parameters: {a: *sev, b: *flag}
        """,
    )
    config = load_config_file(path)
    assert config.loop.show_ai_output is True
    assert config.lint["parameters-without-template"] == "off"
    assert dict(config.procedures["t"].observe[0].parameters) == {"a": "off", "b": "yes"}


def test_parameters_merged_into_an_action_are_go_typed(tmp_path: Path, parser: str) -> None:
    path = write(
        tmp_path,
        """
        x-defaults: &defaults
          content: "{{.mode}}"
          parameters: {mode: off, level: 0x0A}
        procedures:
          t:
            observe:
              - <<: *defaults
        """,
    )
    assert params(path) == {"mode": "off", "level": 10}


def test_only_the_named_path_is_go_typed() -> None:
    text = "a:\n  - parameters: {x: yes}\nb:\n  parameters: {x: yes}\n"
    doc = load_yaml_text(text, go_typed=("a", ANY_ITEM, "parameters"))
    assert doc["a"][0]["parameters"] == {"x": "yes"}
    assert doc["b"]["parameters"] == {"x": True}
    plain = load_yaml_text(text)
    assert plain["a"][0]["parameters"] == {"x": True}
    any_key = load_yaml_text(text, go_typed=(ANY_KEY, "parameters"))
    assert any_key["b"]["parameters"] == {"x": "yes"}
    assert any_key["a"][0]["parameters"] == {"x": True}


def test_go_typed_values_keep_their_marks(parser: str) -> None:
    text = "p:\n  x: yes\n  y: [1e3,\n      2024-01-02]\n"
    doc = load_yaml_text(text, go_typed=("p",))
    assert isinstance(doc["p"], YamlMapping)
    assert doc["p"].key_marks["y"] == yamlnodes.Mark(3, 3)
    assert doc["p"]["y"].item_marks == [yamlnodes.Mark(3, 7), yamlnodes.Mark(4, 7)]
    assert doc["p"]["x"] == "yes"


def test_parameter_locations_are_kept(tmp_path: Path, parser: str) -> None:
    path = write(
        tmp_path,
        """
        procedures:
          t:
            observe:
              - content: "{{.yes}}"
                parameters:
                  yes: 1
                  on: 2
        """,
    )
    action = load_config_file(path).procedures["t"].observe[0]
    assert dict(action.parameters) == {"yes": 1, "on": 2}
    where = action.parameter_locations["on"]
    assert (where.line, where.column) == (7, 11)


# -- errors -------------------------------------------------------------------------------


def load_error(tmp_path: Path, parameters: str) -> ConfigError:
    path = write(
        tmp_path,
        f"""
        procedures:
          t:
            observe:
              - content: "{{{{.a}}}}"
                parameters:
                  {parameters}
        """,
    )
    with pytest.raises(ConfigError) as info:
        load_config_file(path)
    return info.value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("!!bool yes", "invalid bool value 'yes': yaml.v3 reads it as str"),
        ("!!int 1e3", "invalid int value '1e3': yaml.v3 reads it as float"),
        ("!!float 18446744073709551615", "yaml.v3 reads it as int"),
        ("!!int 2024-01-02", "invalid int value '2024-01-02': yaml.v3 reads it as str"),
        ("!!timestamp soon", "invalid timestamp value 'soon'"),
        ("!!null x", "invalid null value 'x'"),
        ("!!binary aGk", "invalid binary value 'aGk': not base64"),
    ],
)
def test_tags_that_go_rejects_are_located_errors(
    tmp_path: Path, parser: str, value: str, message: str
) -> None:
    error = load_error(tmp_path, f"a: {value}")
    assert message in error.message
    assert (error.line, error.column) == (6, 14)


def test_unknown_tags_are_still_rejected(tmp_path: Path, parser: str) -> None:
    error = load_error(tmp_path, "a: !custom x")
    assert "unsupported YAML tag '!custom'" in error.message
    assert (error.line, error.column) == (6, 14)


def test_duplicate_names_are_compared_as_go_reads_them(tmp_path: Path, parser: str) -> None:
    error = load_error(tmp_path, 'a: {yes: 1, "yes": 2}')
    assert "duplicate key 'yes'" in error.message
    assert (error.line, error.column) == (6, 23)


def test_keys_with_the_same_text_are_duplicates_as_in_go(tmp_path: Path, parser: str) -> None:
    error = load_error(tmp_path, 'a: {1: x, "1": y}')
    assert "duplicate key '1'" in error.message
    assert (error.line, error.column) == (6, 21)
    assert error.hint == "first defined at line 6, column 15"


def test_parameter_names_are_the_key_text_as_rooda_reads_them(tmp_path: Path, parser: str) -> None:
    # rooda decodes parameters into a map[string]interface{}: yaml.v3 names each
    # parameter by its key's text, whatever the key would resolve to.
    path = write(
        tmp_path,
        """
        procedures:
          t:
            observe:
              - content: "{{.}}"
                parameters:
                  1: one
                  true: yes
                  1.0: onef
                  0x10: hex
                  2024-01-02: d
        """,
    )
    action = load_config_file(path).procedure("t").observe[0]
    assert dict(action.parameters) == {
        "1": "one",
        "true": "yes",
        "1.0": "onef",
        "0x10": "hex",
        "2024-01-02": "d",
    }
    assert action.parameter_locations["0x10"].line == 9


def test_a_null_parameter_name_is_dropped_with_a_warning(tmp_path: Path, parser: str) -> None:
    path = write(
        tmp_path,
        """
        procedures:
          t:
            observe:
              - content: "{{.}}"
                parameters:
                  ~: gone
                  x: kept
        """,
    )
    config = load_config_file(path)
    assert dict(config.procedure("t").observe[0].parameters) == {"x": "kept"}
    (warning,) = config.warnings
    assert "a parameter with a null name is ignored" in warning.message
    assert (warning.line, warning.column) == (6, 11)


def test_parameters_that_are_not_a_mapping(tmp_path: Path, parser: str) -> None:
    path = write(
        tmp_path,
        """
        procedures:
          t:
            observe:
              - content: "{{.a}}"
                parameters: yes
        """,
    )
    with pytest.raises(ConfigError) as info:
        load_config_file(path).procedure("t")
    assert "a string ('yes')" in info.value.message
    assert (info.value.line, info.value.column) == (5, 21)
