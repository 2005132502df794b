"""The config file schema (config/schema.py, config/model.py): types, immutability, unknown
keys, ``ai_api``, located settings and warnings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import (
    ApiSettings,
    load_config,
)
from pytest_ooda.errors import ConfigError, ConfigWarning

if TYPE_CHECKING:
    from pathlib import Path

from .helpers import _with, load, raises_config, write


def test_full_schema_loads_with_types(tmp_path: Path) -> None:
    write(tmp_path / "prompts" / "x.md", "Do X.\n")
    cfg = load(
        write(
            tmp_path / "ooda-config.yml",
            """
            loop:
              iteration_mode: max-iterations
              default_max_iterations: 7
              iteration_timeout: 300
              max_output_buffer: 2048
              failure_threshold: 2
              log_level: debug
              show_ai_output: true
              ai_cmd: "my-cli --flag"
            ai_cmd_aliases:
              fast: "claude -p --model haiku"
            procedures:
              custom:
                display: "Custom"
                summary: "s"
                description: "d"
                observe:
                  - content: "Look around."
                  - path: prompts/x.md
                iteration_mode: unlimited
                iteration_timeout: 60
                max_output_buffer: 100
                ai_cmd_alias: fast
            """,
        )
    )
    assert cfg.loop.default_max_iterations == 7
    assert cfg.loop.show_ai_output is True
    assert cfg.loop.log_level == "debug"
    assert cfg.aliases["fast"] == "claude -p --model haiku"
    assert cfg.aliases["claude"] == "claude -p --dangerously-skip-permissions"
    proc = cfg.procedure("custom")
    assert proc.display == "Custom"
    assert proc.iteration_mode == "unlimited"
    assert [a.source_label() for a in proc.observe] == ["inline", "prompts/x.md"]
    assert proc.observe[1].file == (tmp_path / "prompts" / "x.md").resolve()
    assert proc.orient == ()
    assert proc.location.line == 13
    assert list(proc.phases()) == ["observe", "orient", "decide", "act"]


def test_dataclasses_are_immutable(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "procedures:\n  p:\n    observe:\n      - content: x\n"))
    proc = cfg.procedure("p")
    with pytest.raises(AttributeError):
        proc.display = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        cfg.procedures["q"] = proc  # type: ignore[index]


def test_string_where_int_belongs_names_location_and_type(tmp_path: Path) -> None:
    err = raises_config(
        write(tmp_path / "c.yml", "loop:\n  default_max_iterations: five\n"),
    )
    assert (err.line, err.column) == (2, 27)
    assert "loop.default_max_iterations: expected an integer >= 1, got a string ('five')" in str(
        err
    )


def test_booleans_are_not_integers(tmp_path: Path) -> None:
    err = raises_config(write(tmp_path / "c.yml", "loop:\n  failure_threshold: true\n"))
    assert "expected an integer >= 1, got a boolean (true)" in err.message


def test_unknown_procedure_key_suggests(tmp_path: Path) -> None:
    err = raises_config(
        write(tmp_path / "c.yml", "procedures:\n  p:\n    default_max_iteration: 3\n")
    )
    assert err.message == "procedure p: unknown key 'default_max_iteration'"
    assert err.hint is not None
    assert "did you mean 'default_max_iterations'?" in err.hint
    assert (err.line, err.column) == (3, 5)


def test_unknown_top_level_key_is_a_located_warning(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "procedure:\n  x: 1\nloop: {}\n"))
    assert len(cfg.warnings) == 1
    assert str(cfg.warnings[0]).endswith(
        "c.yml:1:1: unknown top-level key 'procedure' (ignored); did you mean 'procedures'?"
    )


def test_misspelt_procedure_name_suggests(builtin_root: Path, tmp_path: Path) -> None:
    cfg = load_config(cwd=tmp_path, env={}, global_config=False)
    with pytest.raises(ConfigError) as info:
        cfg.procedure("biuld")
    assert "unknown procedure 'biuld'" in str(info.value)
    assert "did you mean 'build'?" in str(info.value)


def test_rooda_config_loads_unchanged(tmp_path: Path) -> None:
    path = write(
        tmp_path / "rooda-config.yml",
        """
        loop:
          default_max_iterations: 3
        procedures:
          hello:
            observe:
              - content: "hi"
        """,
    )
    cfg = load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)
    assert cfg.procedure("hello").observe[0].content == "hi"
    assert cfg.files == (path,)


def test_lint_section(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "lint:\n  OODA201: error\n  OODA301: off\n"))
    assert dict(cfg.lint) == {"OODA201": "error", "OODA301": "off"}
    err = raises_config(write(tmp_path / "d.yml", "lint:\n  OODA201: fatal\n"))
    assert err.message.startswith("lint.OODA201: expected one of error, warning, info, off")


def test_ai_api_mapping(tmp_path: Path) -> None:
    cfg = load(
        write(
            tmp_path / "c.yml",
            """
            loop:
              ai_api:
                provider: openai
                model: gpt-4o-mini
                base_url: http://localhost:8080/v1/
                api_key_env: MY_KEY
                max_tokens: 100
                timeout: 2.5
                price_input_per_mtok: 0.15
                price_output_per_mtok: 0
            """,
        )
    )
    assert cfg.loop.ai_api == ApiSettings(
        provider="openai",
        model="gpt-4o-mini",
        base_url="http://localhost:8080/v1",
        api_key_env="MY_KEY",
        max_tokens=100,
        timeout=2.5,
        price_input_per_mtok=0.15,
        price_output_per_mtok=0.0,
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{provider: gemini, model: x}", "loop.ai_api.provider: expected one of anthropic, openai"),
        ("{provider: openai}", "loop.ai_api: missing required key 'model'"),
        ("{provider: openai, model: m, max_token: 3}", "loop.ai_api: unknown key 'max_token'"),
        ("{provider: openai, model: m, timeout: 0}", "loop.ai_api.timeout: expected a number"),
        ("{provider: openai, model: m, base_url: ftp://x}", "loop.ai_api.base_url: expected an"),
        ("{provider: openai, model: m, api_key_env: 'a b'}", "loop.ai_api.api_key_env: expected"),
        ("{provider: openai, model: m, max_tokens: true}", "loop.ai_api.max_tokens: expected"),
    ],
)
def test_ai_api_validation(tmp_path: Path, body: str, message: str) -> None:
    err = raises_config(write(tmp_path / "c.yml", f"loop:\n  ai_api: {body}\n"))
    assert err.message.startswith(message)
    assert err.line == 2


def test_ai_api_prices_must_be_non_negative(tmp_path: Path) -> None:
    err = raises_config(
        write(
            tmp_path / "c.yml",
            "loop:\n  ai_api: {provider: openai, model: m, price_input_per_mtok: -1}\n",
        )
    )
    assert err.message.startswith(
        "loop.ai_api.price_input_per_mtok: expected a price per million tokens >= 0"
    )


def test_every_setting_read_from_a_file_is_located(tmp_path: Path) -> None:
    text = (
        "loop:\n"
        "  failure_threshold: 2\n"
        "ai_cmd_aliases:\n"
        "  mine: my-cli -p\n"
        "lint:\n"
        "  OODA201: off\n"
        "procedures:\n"
        "  p:\n"
        "    display: P\n"
        "    act:\n"
        "      - content: do it\n"
    )
    cfg = load(write(tmp_path / "c.yml", text))
    where = {key: (loc.line, loc.column) for key, loc in cfg.locations.items()}
    assert where["loop.failure_threshold"] == (2, 3)
    assert where["aliases.mine"] == (4, 3)
    assert where["lint.OODA201"] == (6, 3)
    assert where["procedures.p.display"] == (9, 5)
    assert where["procedures.p.act"] == (10, 5)
    assert cfg.locations["loop.failure_threshold"].file == tmp_path / "c.yml"
    # defaults and the environment have no place in a file
    assert "loop.log_level" not in cfg.locations


def test_config_warnings_are_located_objects(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "loop: {}\nprocedure: {}\n"))
    (warning,) = cfg.warnings
    assert isinstance(warning, ConfigWarning)
    assert (warning.line, warning.column) == (2, 1)
    assert warning.file == str(tmp_path / "c.yml")
    assert warning.message.startswith("unknown top-level key 'procedure'")


def test_an_unknown_key_suggests_the_new_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _with(tmp_path, loop="  max_costs: 3\n")
    assert "did you mean 'max_cost'?" in str(info.value)
