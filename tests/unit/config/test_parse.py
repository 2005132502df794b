"""Reading one config file (config/parse.py): fragment actions, templates at load, odd YAML,
the built-in procedures' cache."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda import fragments
from pytest_ooda.config import (
    load_config,
    parse,
)
from pytest_ooda.errors import ConfigError, FragmentError, TemplateError

if TYPE_CHECKING:
    from pathlib import Path
from .helpers import load, load_or_use, raises_config, write


def test_fragment_with_both_content_and_path(tmp_path: Path) -> None:
    write(tmp_path / "x.md", "x")
    path = write(
        tmp_path / "ooda-config.yml",
        """
        procedures:
          build:
            observe:
              - content: "a"
              - content: "b"
                path: x.md
        """,
    )
    err = raises_config(path)
    assert str(err) == (
        f"{err.file}:5:9: procedure build: observe[1]: "
        "fragment cannot specify both content and path"
    )


@pytest.mark.parametrize("body", ["{}", "{content: ''}", "{path: ''}", "{parameters: {a: 1}}"])
def test_fragment_with_neither_content_nor_path(tmp_path: Path, body: str) -> None:
    err = raises_config(write(tmp_path / "c.yml", f"procedures:\n  p:\n    act:\n      - {body}\n"))
    assert err.message == "procedure p: act[0]: fragment must specify either content or path"
    assert err.line == 4


def test_missing_relative_fragment_names_resolved_path(tmp_path: Path) -> None:
    path = write(
        tmp_path / "conf" / "ooda-config.yml",
        "procedures:\n  build:\n    observe:\n      - content: a\n      - content: b\n"
        "      - path: prompts/x.md\n",
    )
    with pytest.raises(FragmentError) as info:
        load_or_use(path)
    resolved = tmp_path / "conf" / "prompts" / "x.md"
    assert info.value.message == (
        f"procedure build: observe[2]: fragment file not found: prompts/x.md "
        f"(resolved to {resolved})"
    )
    assert (info.value.line, info.value.column) == (6, 9)


def test_missing_builtin_lists_available_for_phase(builtin_root: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.yml",
        "procedures:\n  p:\n    observe:\n      - path: builtin:fragments/observe/read_spec.md\n",
    )
    with pytest.raises(FragmentError) as info:
        load_or_use(path)
    err = info.value
    assert err.message == (
        "procedure p: observe[0]: embedded fragment not found: "
        "builtin:fragments/observe/read_spec.md"
    )
    assert err.hint is not None
    assert "did you mean 'builtin:fragments/observe/read_specs.md'?" in err.hint
    assert "available built-ins for phase observe: read_agents_md.md, read_specs.md" in err.hint
    assert "search_codebase" not in err.hint


@pytest.mark.parametrize(
    "bad", ["builtin:../pyproject.toml", "builtin:/etc/passwd", "builtin:fragments/../../x.md"]
)
def test_builtin_paths_may_not_escape(builtin_root: Path, tmp_path: Path, bad: str) -> None:
    (builtin_root.parent / "pyproject.toml").write_text("secret")
    path = write(tmp_path / "c.yml", f"procedures:\n  p:\n    act:\n      - path: '{bad}'\n")
    with pytest.raises(FragmentError, match="leaves the built-in tree"):
        load_or_use(path)


def test_relative_paths_resolve_against_declaring_file(builtin_root: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / "prompts" / "g.md", "global fragment")
    write(
        home / "ooda-config.yml",
        "procedures:\n  g:\n    observe:\n      - path: prompts/g.md\n",
    )
    ws = tmp_path / "ws"
    write(ws / "prompts" / "w.md", "workspace fragment")
    write(ws / "ooda-config.yml", "procedures:\n  w:\n    observe:\n      - path: prompts/w.md\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cfg = load_config(ws / "ooda-config.yml", cwd=elsewhere, env={"OODA_CONFIG_HOME": str(home)})
    assert cfg.procedure("g").observe[0].file == (home / "prompts" / "g.md").resolve()
    assert cfg.procedure("w").observe[0].file == (ws / "prompts" / "w.md").resolve()
    assert cfg.files == (
        builtin_root / "procedures" / "builtin.yml",
        home / "ooda-config.yml",
        ws / "ooda-config.yml",
    )


def test_template_parse_error_at_load_names_config_and_fragment_line(tmp_path: Path) -> None:
    write(tmp_path / "prompts" / "t.md", "ok line\n{{if .x}}\nunterminated\n")
    path = write(
        tmp_path / "ooda-config.yml",
        """
        procedures:
          build:
            orient:
              - path: prompts/t.md
                parameters:
                  x: 1
        """,
    )
    with pytest.raises(TemplateError) as info:
        load(path).procedure("build")
    err = info.value
    assert err.kind == "parse"
    assert (err.line, err.column) == (4, 9)
    assert err.message.startswith("procedure build: orient[0]: template parse error: template: ")
    assert err.template_line is not None
    assert err.hint == f"in {tmp_path / 'prompts' / 't.md'}:{err.template_line}"


def test_template_not_parsed_without_parameters(tmp_path: Path) -> None:
    write(tmp_path / "t.md", "{{if unbalanced")
    cfg = load(write(tmp_path / "c.yml", "procedures:\n  p:\n    act:\n      - path: t.md\n"))
    assert cfg.procedure("p").act[0].is_template is False


def test_undefined_function_is_a_load_time_parse_error(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.yml",
        "procedures:\n  p:\n    act:\n      - content: '{{nosuch .x}}'\n"
        "        parameters: {x: 1}\n",
    )
    with pytest.raises(TemplateError) as info:
        load(path).procedure("p")
    assert 'function "nosuch" not defined' in info.value.message
    assert info.value.hint == "in line 1 of the inline content"


def test_parameters_keep_yaml_types_and_locations(tmp_path: Path) -> None:
    cfg = load(
        write(
            tmp_path / "c.yml",
            "procedures:\n  p:\n    act:\n      - content: '{{.n}}'\n        parameters:\n"
            "          n: 3\n          l: [a, {b: true}]\n",
        )
    )
    action = cfg.procedure("p").act[0]
    assert dict(action.parameters) == {"n": 3, "l": ["a", {"b": True}]}
    assert action.parameter_locations["l"].line == 7
    with pytest.raises(TypeError):
        action.parameters["n"] = 4  # type: ignore[index]


def test_unbalanced_quotes_in_a_command_fail_at_load(tmp_path: Path) -> None:
    err = raises_config(write(tmp_path / "c.yml", 'ai_cmd_aliases:\n  x: "cli \'oops"\n'))
    assert err.message == (
        "ai_cmd_aliases.x: expected a command line with balanced quotes (No closing quotation), "
        'got a string ("cli \'oops")'
    )
    with pytest.raises(ConfigError, match="environment variable OODA_LOOP_AI_CMD: expected a"):
        load_config(cwd=tmp_path, env={"OODA_LOOP_AI_CMD": "a 'b"}, builtin=False)


def test_actions_and_procedures_are_hashable(tmp_path: Path) -> None:
    cfg = load(
        write(
            tmp_path / "c.yml",
            "procedures:\n  p:\n    act:\n      - content: a\n        parameters: {x: 1}\n"
            "      - content: a\n        parameters: {x: 2}\n",
        )
    )
    first, second = cfg.procedure("p").act
    assert first != second
    assert len({first, second, first}) == 2
    assert {cfg.procedure("p"): 1}[cfg.procedure("p")] == 1


def test_procedure_without_body_and_null_fields(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "procedures:\n  p:\n  q:\n    display:\n    act:\n"))
    assert cfg.procedure("p").phases() == {"observe": (), "orient": (), "decide": (), "act": ()}
    assert cfg.procedure("q").display == ""
    assert "procedures.q.display" not in cfg.provenance


def test_non_string_keys_are_errors(tmp_path: Path) -> None:
    err = raises_config(write(tmp_path / "c.yml", "loop:\n  1: 2\n"))
    assert err.message == "loop: keys must be strings, got an integer (1)"
    assert (err.line, err.column) == (2, 3)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('procedures:\n  p:\n    act:\n      - content: "half \\ud800 pair"\n', "4:18"),
        ('procedures:\n  p:\n    display: "\\udc80"\n', "3:14"),
        (
            'procedures:\n  p:\n    act:\n      - content: x\n        parameters: {x: "\\ud800"}\n',
            "5:25",
        ),
    ],
)
def test_lone_surrogate_escapes_are_located_errors(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "ooda-config.yml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:{where}: the text holds ")
    assert "which is not a character (a lone surrogate)" in str(info.value)


@pytest.fixture
def builtin_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of builtin.yml that builtin_layer() reads, with no cache yet."""
    copy = tmp_path / "procedures" / "builtin.yml"
    copy.parent.mkdir()
    shutil.copyfile(fragments.builtin_procedures_file(), copy)
    monkeypatch.setattr(fragments, "builtin_procedures_file", lambda: copy)
    monkeypatch.setattr(parse, "_builtin_cache", {})
    return copy


def test_the_builtins_are_parsed_and_leave_nothing_beside_the_file(builtin_copy: Path) -> None:
    layer = parse.builtin_layer()
    assert layer is not None
    assert "build" in layer.procedures
    assert list(builtin_copy.parent.iterdir()) == [builtin_copy]


def _builtins() -> parse.Layer:
    layer = parse.builtin_layer()
    assert layer is not None
    return layer


def test_an_edit_to_the_file_is_read_again(builtin_copy: Path) -> None:
    assert "extra" not in _builtins().procedures
    text = builtin_copy.read_text()
    builtin_copy.write_text(text + "  extra:\n    act:\n      - content: Extra.\n")
    assert "extra" in _builtins().procedures


def test_a_broken_builtin_template_is_found_on_every_load(builtin_copy: Path) -> None:
    text = builtin_copy.read_text()
    broken = '  broken:\n    act:\n      - content: "{{ .x "\n        parameters: {x: 1}\n'
    builtin_copy.write_text(text + broken)
    for _ in range(2):  # each process parses the file: nothing kept on disk skips the check
        error = _builtins().broken["broken"].error
        assert isinstance(error, TemplateError)
        assert error.line == builtin_copy.read_text().count("\n") - 1
        parse._builtin_cache.clear()
