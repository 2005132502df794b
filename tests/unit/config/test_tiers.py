"""The tiers besides the workspace file (config/tiers.py): global config, environment,
overrides, aliases."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ooda.config import (
    ApiSettings,
    Provenance,
    load_config,
    resolve_run_settings,
)
from pytest_ooda.errors import ConfigError

from .helpers import _with, load, raises_config, write


def test_precedence_cli_env_workspace_global_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / "ooda-config.yml", "loop:\n  failure_threshold: 4\n  log_level: warn\n")
    write(tmp_path / "ooda-config.yml", "loop:\n  failure_threshold: 5\n  iteration_timeout: 9\n")
    env = {"OODA_CONFIG_HOME": str(home), "OODA_LOOP_ITERATION_TIMEOUT": "11"}
    cfg = load_config(cwd=tmp_path, env=env, builtin=False, overrides={"log_level": "error"})
    assert cfg.loop.failure_threshold == 5
    assert cfg.loop.iteration_timeout == 11
    assert cfg.loop.log_level == "error"
    assert cfg.loop.max_output_buffer == 10_485_760
    assert cfg.provenance["loop.failure_threshold"].tier == "workspace"
    assert cfg.provenance["loop.iteration_timeout"] == Provenance("env")
    assert cfg.provenance["loop.iteration_timeout"].source == "OODA_LOOP_ITERATION_TIMEOUT"
    assert cfg.provenance["loop.log_level"].tier == "cli"
    assert cfg.provenance["loop.max_output_buffer"].tier == "default"


def test_global_config_locations(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    write(xdg / "ooda" / "ooda-config.yml", "loop:\n  failure_threshold: 7\n")
    cfg = load_config(cwd=tmp_path, env={"XDG_CONFIG_HOME": str(xdg)}, builtin=False)
    assert cfg.loop.failure_threshold == 7
    home = tmp_path / "h"
    write(home / ".config" / "ooda" / "ooda-config.yml", "loop:\n  failure_threshold: 8\n")
    cfg = load_config(cwd=tmp_path, env={"HOME": str(home)}, builtin=False)
    assert cfg.loop.failure_threshold == 8
    assert cfg.provenance["loop.failure_threshold"].tier == "global"


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("OODA_LOOP_DEFAULT_MAX_ITERATIONS", "abc", "expected an integer >= 1, got 'abc'"),
        ("OODA_LOOP_FAILURE_THRESHOLD", "0", "expected an integer >= 1, got '0'"),
        ("OODA_LOOP_ITERATION_MODE", "forever", "expected one of max-iterations, unlimited"),
        ("OODA_LOOP_SHOW_AI_OUTPUT", "maybe", "expected a boolean"),
        ("OODA_LOOP_LOG_LEVEL", "loud", "expected one of debug, info, warn, error"),
    ],
)
def test_env_var_errors_name_the_variable(
    tmp_path: Path, var: str, value: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={var: value}, builtin=False, global_config=False)
    assert str(info.value).startswith(f"environment variable {var}: {expected}")


def test_env_values_parse(tmp_path: Path) -> None:
    env = {
        "OODA_LOOP_SHOW_AI_OUTPUT": "yes",
        "OODA_LOOP_AI_CMD": "x --y 'a b'",
        "OODA_LOOP_ITERATION_MODE": "unlimited",
        "OODA_LOOP_AI_CMD_ALIAS": "",
    }
    cfg = load_config(cwd=tmp_path, env=env, builtin=False, global_config=False)
    assert cfg.loop.show_ai_output is True
    assert cfg.loop.ai_cmd == "x --y 'a b'"
    assert cfg.loop.iteration_mode == "unlimited"
    assert cfg.loop.ai_cmd_alias is None


@pytest.mark.parametrize(
    ("text", "what", "where"),
    [
        (
            "ai_cmd_aliases:\n  fast: 'x'\nprocedures:\n  p:\n    ai_cmd_alias: fsat\n",
            "procedure p: ai_cmd_alias",
            (5, 5),
        ),
        (
            "ai_cmd_aliases:\n  fast: 'x'\nloop:\n  ai_cmd_alias: fsat\nprocedures:\n  p: {}\n",
            "loop.ai_cmd_alias",
            (4, 3),
        ),
    ],
    ids=["procedure", "loop"],
)
def test_an_unknown_alias_warns_at_load_and_fails_the_run_that_needs_it(
    tmp_path: Path, text: str, what: str, where: tuple[int, int]
) -> None:
    """Showing and linting a procedure need no alias (it may be defined in a config
    they do not read): loading warns; resolving a run raises, located, with the
    closest known alias."""
    path = write(tmp_path / "c.yml", text)
    config = load_config(path, env={}, builtin=False, global_config=False)
    assert "p" in config.procedures
    [warning] = config.warnings
    assert warning.message == (
        f"{what}: unknown AI command alias 'fsat' (a run of it will fail until the alias "
        "is defined)"
    )
    assert (warning.line, warning.column) == where
    with pytest.raises(ConfigError) as info:
        resolve_run_settings(config, "p")
    err = info.value
    assert err.message == f"{what}: unknown AI command alias 'fsat'"
    assert (err.file, err.line, err.column) == (str(path), *where)
    assert err.hint is not None
    assert "did you mean 'fast'?" in err.hint
    assert "claude, copilot, cursor-agent, fast, kiro-cli" in err.hint


def test_unknown_alias_from_env_names_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment variable OODA_LOOP_AI_CMD_ALIAS: unknown"):
        load_config(
            cwd=tmp_path, env={"OODA_LOOP_AI_CMD_ALIAS": "nope"}, builtin=False, global_config=False
        )


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (
            "podman",
            "did you mean 'docker'? (podman is an engine of the docker kind: "
            "sandbox: {kind: docker, engine: podman})\n  known kinds: bwrap, docker, none",
        ),
        ("bwarp", "did you mean 'bwrap'?\n  known kinds: bwrap, docker, none"),
        ("vm", "known kinds: bwrap, docker, none"),
    ],
)
def test_an_unknown_sandbox_kind_from_the_environment_reads_as_did_you_mean(
    tmp_path: Path, value: str, hint: str
) -> None:
    # As the unknown alias above: the problem, then "did you mean" and the known names
    # (never "expected unknown sandbox kind …, got …").
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, env={"OODA_SANDBOX": value}, builtin=False, global_config=False)
    assert (
        caught.value.message == f"environment variable OODA_SANDBOX: unknown sandbox kind {value!r}"
    )
    assert caught.value.hint == hint
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, overrides={"sandbox": value}, builtin=False, global_config=False)
    assert caught.value.message == f"option sandbox: unknown sandbox kind {value!r}"
    assert caught.value.hint == hint


def test_empty_alias_value_is_an_error(tmp_path: Path) -> None:
    err = raises_config(write(tmp_path / "c.yml", "ai_cmd_aliases:\n  fast: ''\n"))
    assert err.message.startswith("ai_cmd_aliases.fast: expected a non-empty command string")


def test_user_alias_overrides_builtin(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "ai_cmd_aliases:\n  claude: 'claude -p'\n"))
    assert cfg.aliases["claude"] == "claude -p"
    assert cfg.provenance["aliases.claude"].tier == "workspace"
    assert cfg.provenance["aliases.copilot"].tier == "default"


def test_overrides_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="option failure_threshold: expected an integer >= 1"):
        load_config(cwd=tmp_path, env={}, builtin=False, overrides={"failure_threshold": 0})
    with pytest.raises(ConfigError, match="did you mean 'ai_cmd'"):
        load_config(cwd=tmp_path, env={}, builtin=False, overrides={"ai_cdm": "x"})


def test_overrides_accept_api_settings_and_skip_none(tmp_path: Path) -> None:
    api = ApiSettings("openai", "m", max_tokens=10)
    cfg = load_config(
        cwd=tmp_path, env={}, builtin=False, overrides={"ai_api": api, "ai_cmd": None}
    )
    assert cfg.loop.ai_api is api
    assert cfg.loop.ai_cmd is None
    assert str(cfg.provenance["loop.ai_api"]) == "cli (ai_api)"
    with pytest.raises(ConfigError, match="override ai_api: expected an ApiSettings"):
        load_config(cwd=tmp_path, env={}, builtin=False, overrides={"ai_api": {"x": 1}})


def test_unknown_alias_from_override_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={}, builtin=False, overrides={"ai_cmd_alias": "nope"})
    assert info.value.message == "option ai_cmd_alias: unknown AI command alias 'nope'"


def test_env_boolean_false_and_whitespace(tmp_path: Path) -> None:
    env = {"OODA_LOOP_SHOW_AI_OUTPUT": " Off ", "OODA_LOOP_FAILURE_THRESHOLD": " 4 "}
    cfg = load_config(cwd=tmp_path, env=env, builtin=False, global_config=False)
    assert cfg.loop.show_ai_output is False
    assert cfg.loop.failure_threshold == 4


def test_global_config_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "h" / ".config" / "ooda" / "ooda-config.yml").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"global config .*ooda-config.yml is a directory"):
        load_config(cwd=tmp_path, env={"HOME": str(tmp_path / "h")}, builtin=False)


def test_config_home_naming_a_file_names_the_variable(tmp_path: Path) -> None:
    write(tmp_path / "not-a-dir", "x\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={"OODA_CONFIG_HOME": str(tmp_path / "not-a-dir")})
    assert str(info.value).startswith("environment variable OODA_CONFIG_HOME: expected a directory")


def test_missing_config_home_directory_is_skipped(tmp_path: Path) -> None:
    cfg = load_config(
        cwd=tmp_path, env={"OODA_CONFIG_HOME": str(tmp_path / "nowhere")}, builtin=False
    )
    assert cfg.files == ()


def test_unreadable_global_directory_is_an_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root in CI, where chmod 000 does not stop stat(); simulate EACCES.
    import os

    xdg = tmp_path / "xdg"
    write(xdg / "ooda" / "ooda-config.yml", "loop: {}\n")
    real_stat = os.stat

    def fake_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if str(path).startswith(str(xdg / "ooda")):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", fake_stat)
    with pytest.raises(ConfigError, match=r"global config: cannot access .*Permission denied"):
        load_config(cwd=tmp_path, env={"XDG_CONFIG_HOME": str(xdg)}, builtin=False)


def test_relative_xdg_config_home_is_ignored(tmp_path: Path) -> None:
    write(tmp_path / "rel" / "ooda" / "ooda-config.yml", "loop:\n  failure_threshold: 9\n")
    home = tmp_path / "h"
    write(home / ".config" / "ooda" / "ooda-config.yml", "loop:\n  failure_threshold: 4\n")
    cfg = load_config(cwd=tmp_path, env={"XDG_CONFIG_HOME": "rel", "HOME": str(home)})
    assert cfg.loop.failure_threshold == 4


def test_no_home_directory_means_no_global_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    cfg = load_config(cwd=tmp_path, env={}, builtin=False)
    assert cfg.files == ()


def test_budgets_and_format_from_the_environment(tmp_path: Path) -> None:
    config = _with(
        tmp_path,
        OODA_LOOP_MAX_COST="1.25",
        OODA_LOOP_MAX_TOKENS="800",
        OODA_LOOP_AI_OUTPUT="claude-json",
    )
    assert (config.loop.max_cost, config.loop.max_tokens, config.loop.ai_output) == (
        1.25,
        800,
        "claude-json",
    )
    assert config.provenance["loop.max_cost"].source == "OODA_LOOP_MAX_COST"


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("OODA_LOOP_MAX_COST", "cheap", "an amount in US dollars > 0"),
        ("OODA_LOOP_MAX_COST", "0", "an amount in US dollars > 0"),
        ("OODA_LOOP_MAX_COST", "inf", "an amount in US dollars > 0"),
        ("OODA_LOOP_MAX_TOKENS", "1.5", "an integer >= 1"),
        ("OODA_LOOP_AI_OUTPUT", "json", "one of text, claude-json, claude-stream-json"),
    ],
)
def test_bad_environment_values_name_the_variable(
    tmp_path: Path, var: str, value: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _with(tmp_path, **{var: value})
    assert str(info.value).startswith(f"environment variable {var}: expected {expected}")


def test_overrides_accept_the_new_keys(tmp_path: Path) -> None:
    path = tmp_path / "ooda-config.yml"
    path.write_text("procedures:\n  p:\n    act: [{content: x}]\n", encoding="utf-8")
    config = load_config(
        path,
        env={},
        builtin=False,
        global_config=False,
        overrides={"max_cost": 3, "ai_output": "codex-json"},
    )
    assert (config.loop.max_cost, config.loop.ai_output) == (3.0, "codex-json")
    with pytest.raises(ConfigError, match="option max_tokens: expected an integer >= 1"):
        load_config(path, env={}, builtin=False, global_config=False, overrides={"max_tokens": 0})
