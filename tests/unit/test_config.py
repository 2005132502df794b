"""Config loading: schema validation, tiers, field-by-field merge, provenance, run settings."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_ooda import fragments
from pytest_ooda.config import (
    ApiSettings,
    Config,
    Provenance,
    load_builtin_config,
    load_config,
    load_config_file,
    resolve_run_settings,
)
from pytest_ooda.errors import ConfigError, ConfigWarning, FragmentError, OodaError, TemplateError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(path: Path, **kwargs: object) -> Config:
    options: dict[str, object] = {"env": {}, "builtin": False, "global_config": False}
    options.update(kwargs)
    return load_config(path, **options)  # type: ignore[arg-type]


@pytest.fixture
def builtin_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake built-in tree with two procedures, so tests do not depend on shipped content."""
    root = tmp_path / "builtin"
    for phase, names in {
        "observe": ["read_agents_md.md", "read_specs.md"],
        "orient": ["search_codebase.md"],
        "decide": ["pick_task.md"],
        "act": ["emit_success.md", "commit_changes.md"],
    }.items():
        for name in names:
            write(root / "fragments" / phase / name, f"Built-in {phase}/{name}.\n")
    write(
        root / "procedures" / "builtin.yml",
        """
        procedures:
          build:
            display: "Build"
            summary: "Implement a task"
            description: "Picks a task and implements it"
            observe:
              - path: "builtin:fragments/observe/read_agents_md.md"
              - path: "builtin:fragments/observe/read_specs.md"
            orient:
              - path: "builtin:fragments/orient/search_codebase.md"
            decide:
              - path: "builtin:fragments/decide/pick_task.md"
            act:
              - path: "builtin:fragments/act/commit_changes.md"
              - path: "builtin:fragments/act/emit_success.md"
          audit-spec:
            display: "Audit Specifications"
            observe:
              - path: "builtin:fragments/observe/read_specs.md"
            act:
              - path: "builtin:fragments/act/emit_success.md"
        """,
    )
    monkeypatch.setattr(fragments, "builtin_root", lambda: root)
    return root


def load_or_use(path: Path, **kwargs: object) -> Config:
    """Load, then ask for every broken procedure: its error is raised only when used."""
    config = load(path, **kwargs)
    for name in config.broken:
        config.procedure(name)
    return config


def raises_config(path: Path, **kwargs: object) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_or_use(path, **kwargs)
    return info.value


# --------------------------------------------------------------------------- schema


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


def test_explicit_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config file not found: nope\.yml"):
        load_config("nope.yml", cwd=tmp_path, env={}, builtin=False, global_config=False)


# --------------------------------------------------------------------------- fragment actions


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


# --------------------------------------------------------------------------- tiers


def test_field_by_field_merge_keeps_builtin_phases(builtin_root: Path, tmp_path: Path) -> None:
    write(tmp_path / "ooda-config.yml", "procedures:\n  build:\n    default_max_iterations: 9\n")
    cfg = load_config(cwd=tmp_path, env={}, global_config=False)
    merged = cfg.procedure("build")
    builtin = load_builtin_config().procedure("build")
    assert merged.default_max_iterations == 9
    assert merged.observe == builtin.observe
    assert merged.display == "Build"
    assert set(cfg.procedures) == {"build", "audit-spec"}
    assert cfg.provenance["procedures.build.default_max_iterations"] == Provenance(
        "workspace", tmp_path / "ooda-config.yml", 3
    )
    assert cfg.provenance["procedures.build.observe"].tier == "builtin"
    assert merged.location.file == tmp_path / "ooda-config.yml"


def test_workspace_phase_replaces_builtin_phase(builtin_root: Path, tmp_path: Path) -> None:
    write(
        tmp_path / "ooda-config.yml",
        "procedures:\n  build:\n    observe:\n      - content: mine\n",
    )
    cfg = load_config(cwd=tmp_path, env={}, global_config=False)
    assert [a.content for a in cfg.procedure("build").observe] == ["mine"]
    assert len(cfg.procedure("build").act) == 2


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


def test_unknown_alias_reference_lists_known(tmp_path: Path) -> None:
    err = raises_config(
        write(
            tmp_path / "c.yml",
            "ai_cmd_aliases:\n  fast: 'x'\nprocedures:\n  p:\n    ai_cmd_alias: fsat\n",
        )
    )
    assert err.message == "procedure p: ai_cmd_alias: unknown AI command alias 'fsat'"
    assert (err.line, err.column) == (5, 5)
    assert err.hint is not None
    assert "did you mean 'fast'?" in err.hint
    assert "claude, copilot, cursor-agent, fast, kiro-cli" in err.hint


def test_unknown_alias_from_env_names_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment variable OODA_LOOP_AI_CMD_ALIAS: unknown"):
        load_config(
            cwd=tmp_path, env={"OODA_LOOP_AI_CMD_ALIAS": "nope"}, builtin=False, global_config=False
        )


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


def test_lint_section(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "lint:\n  OODA201: error\n  OODA301: off\n"))
    assert dict(cfg.lint) == {"OODA201": "error", "OODA301": "off"}
    err = raises_config(write(tmp_path / "d.yml", "lint:\n  OODA201: fatal\n"))
    assert err.message.startswith("lint.OODA201: expected one of error, warning, info, off")


# --------------------------------------------------------------------------- ai_api


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


# --------------------------------------------------------------------------- run settings


def _proc_config(tmp_path: Path, loop: str = "", proc: str = "") -> Config:
    text = "loop:\n" + (loop or "  {}\n").replace("  {}\n", "  log_level: info\n")
    text += "procedures:\n  p:\n    observe:\n      - content: x\n" + proc
    return load(write(tmp_path / "c.yml", text))


def test_iteration_limit_precedence(tmp_path: Path) -> None:
    cfg = _proc_config(
        tmp_path,
        loop="  default_max_iterations: 4\n",
        proc="    default_max_iterations: 2\n",
    )
    assert resolve_run_settings(cfg, "p", require_ai=False).max_iterations == 2
    assert resolve_run_settings(cfg, "p", max_iterations=9, require_ai=False).max_iterations == 9
    run = resolve_run_settings(cfg, "p", unlimited=True, require_ai=False)
    assert run.max_iterations is None
    assert run.provenance["max_iterations"].tier == "cli"
    both = resolve_run_settings(cfg, "p", max_iterations=3, unlimited=True, require_ai=False)
    assert both.max_iterations == 3

    cfg = _proc_config(tmp_path, loop="  default_max_iterations: 4\n")
    run = resolve_run_settings(cfg, "p", require_ai=False)
    assert run.max_iterations == 4
    assert run.provenance["max_iterations"].tier == "workspace"

    cfg = _proc_config(tmp_path)
    run = resolve_run_settings(cfg, "p", require_ai=False)
    assert run.max_iterations == 5
    assert run.provenance["max_iterations"].tier == "default"

    cfg = _proc_config(tmp_path, loop="  iteration_mode: unlimited\n")
    assert resolve_run_settings(cfg, "p", require_ai=False).max_iterations is None
    cfg = _proc_config(
        tmp_path, loop="  iteration_mode: unlimited\n", proc="    iteration_mode: max-iterations\n"
    )
    assert resolve_run_settings(cfg, "p", require_ai=False).max_iterations == 5
    cfg = _proc_config(tmp_path, proc="    iteration_mode: unlimited\n")
    assert resolve_run_settings(cfg, "p", require_ai=False).max_iterations is None


def test_max_iterations_argument_validated(tmp_path: Path) -> None:
    cfg = _proc_config(tmp_path)
    with pytest.raises(ConfigError, match="--max-iterations: expected an integer >= 1"):
        resolve_run_settings(cfg, "p", max_iterations=0, require_ai=False)


def test_timeout_and_buffer_precedence(tmp_path: Path) -> None:
    cfg = _proc_config(
        tmp_path,
        loop="  iteration_timeout: 100\n  max_output_buffer: 50\n",
        proc="    iteration_timeout: 10\n",
    )
    run = resolve_run_settings(cfg, "p", require_ai=False)
    assert (run.iteration_timeout, run.max_output_buffer) == (10, 50)
    assert run.provenance["iteration_timeout"].tier == "workspace"
    assert run.provenance["iteration_timeout"].line == 8
    assert run.provenance["max_output_buffer"].line == 3


def test_ai_command_precedence(tmp_path: Path) -> None:
    loop = "  ai_cmd: loop-cmd\n  ai_cmd_alias: copilot\n"
    proc = "    ai_cmd: proc-cmd --x\n    ai_cmd_alias: claude\n"
    cfg = _proc_config(tmp_path, loop=loop, proc=proc)
    assert resolve_run_settings(cfg, "p", ai_cmd="cli 'a b'").ai_cmd == ("cli", "a b")
    by_alias = resolve_run_settings(cfg, "p", ai_cmd_alias="kiro-cli")
    assert by_alias.ai_cmd == ("kiro-cli", "chat", "--no-interactive", "--trust-all-tools")
    assert by_alias.provenance["ai_cmd"].source == "--ai-cmd-alias"
    assert resolve_run_settings(cfg, "p").ai_cmd == ("proc-cmd", "--x")
    cfg = _proc_config(tmp_path, loop=loop, proc="    ai_cmd_alias: claude\n")
    # The built-in claude alias is read as stream-json (docs/agents.md): its flags join.
    assert resolve_run_settings(cfg, "p").ai_cmd == (
        "claude",
        "-p",
        "--dangerously-skip-permissions",
        "--output-format",
        "stream-json",
        "--verbose",
    )
    api = "    ai_api: {provider: anthropic, model: claude-x}\n"
    cfg = _proc_config(tmp_path, loop=loop, proc=api)
    run = resolve_run_settings(cfg, "p")
    assert run.ai_cmd is None
    assert run.ai_api == ApiSettings("anthropic", "claude-x")
    cfg = _proc_config(tmp_path, loop=loop)
    assert resolve_run_settings(cfg, "p").ai_cmd == ("loop-cmd",)
    cfg = _proc_config(tmp_path, loop="  ai_cmd_alias: copilot\n")
    assert resolve_run_settings(cfg, "p").ai_cmd == ("copilot", "--yolo")
    cfg = _proc_config(tmp_path, loop="  ai_api: {provider: openai, model: m}\n")
    assert resolve_run_settings(cfg, "p").ai_api == ApiSettings("openai", "m")


def test_env_ai_cmd_beats_file(tmp_path: Path) -> None:
    write(tmp_path / "ooda-config.yml", "loop:\n  ai_cmd: from-file\nprocedures:\n  p: {}\n")
    cfg = load_config(
        cwd=tmp_path, env={"OODA_LOOP_AI_CMD": "from-env"}, builtin=False, global_config=False
    )
    run = resolve_run_settings(cfg, "p")
    assert run.ai_cmd == ("from-env",)
    assert run.provenance["ai_cmd"].source == "OODA_LOOP_AI_CMD"


def test_no_ai_command_lists_every_way(tmp_path: Path) -> None:
    cfg = _proc_config(tmp_path)
    with pytest.raises(ConfigError) as info:
        resolve_run_settings(cfg, "p")
    text = str(info.value)
    assert text.startswith("no AI command configured for procedure 'p'")
    for way in ("--ai-cmd", "OODA_LOOP_AI_CMD", "procedures.p", "loop:", "claude, copilot"):
        assert way in text
    assert resolve_run_settings(cfg, "p", require_ai=False).ai_cmd is None


def test_unknown_cli_alias_and_unsplittable_command(tmp_path: Path) -> None:
    cfg = _proc_config(tmp_path)
    with pytest.raises(ConfigError, match="--ai-cmd-alias: unknown AI command alias 'claud'"):
        resolve_run_settings(cfg, "p", ai_cmd_alias="claud")
    with pytest.raises(ConfigError, match="cannot split --ai-cmd"):
        resolve_run_settings(cfg, "p", ai_cmd="x 'unterminated")


def test_load_config_file_ignores_other_tiers(builtin_root: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "c.yml", "procedures:\n  p:\n    ai_cmd_alias: claude\n")
    cfg = load_config_file(path)
    assert set(cfg.procedures) == {"p"}
    assert cfg.files == (path,)


def test_builtin_config_is_cached_and_reloaded_on_change(builtin_root: Path) -> None:
    first = load_builtin_config()
    assert load_builtin_config().procedures["build"] == first.procedures["build"]
    yml = builtin_root / "procedures" / "builtin.yml"
    yml.write_text(yml.read_text() + "  extra:\n    observe:\n      - content: x\n")
    assert "extra" in load_builtin_config().procedures


# --------------------------------------------------------------------------- broken corpus

CORPUS = Path(__file__).resolve().parent.parent / "broken_configs"


def _expectations(case: Path) -> tuple[str, str | None]:
    sidecar = case.with_suffix(".expected")
    if sidecar.exists():
        lines = sidecar.read_text(encoding="utf-8").splitlines()
    else:
        lines = [
            line[2:]
            for line in case.read_text(encoding="utf-8").splitlines()
            if line.startswith(("# error: ", "# hint: "))
        ]
    error = next(line[len("error: ") :] for line in lines if line.startswith("error: "))
    hint = next((line[len("hint: ") :] for line in lines if line.startswith("hint: ")), None)
    return error, hint


def test_corpus_is_big_enough() -> None:
    assert len(sorted(CORPUS.glob("*.yml"))) >= 40


def _corpus_error(name: str) -> OodaError:
    """The error a corpus file reports: the file's own when it does not load, else that of
    its one broken procedure (the others load; asking for it raises the same error)."""
    try:
        config = load_config(name, env={}, global_config=False)
    except OodaError as exc:
        return exc
    declared = [b for b in config.broken.values() if b.location.file is not None]
    assert len(declared) == 1, config.broken
    with pytest.raises(OodaError) as info:
        config.procedure(declared[0].name)
    assert str(info.value) == str(declared[0].error)
    assert type(info.value) is type(declared[0].error)
    return info.value


@pytest.mark.parametrize("case", sorted(CORPUS.glob("*.yml")), ids=lambda p: p.stem)
def test_broken_config_corpus(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected_error, expected_hint = _expectations(case)
    monkeypatch.chdir(CORPUS)
    err = _corpus_error(case.name)
    substitutions = {"{file}": case.name, "{dir}": str(CORPUS)}
    for key, value in substitutions.items():
        expected_error = expected_error.replace(key, value)
    assert str(err).splitlines()[0] == expected_error
    assert err.line is not None
    assert err.column is not None
    if expected_hint is not None:
        assert err.hint is not None
        assert expected_hint in err.hint


# --------------------------------------------------------------------------- templates at load


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


# --------------------------------------------------------------------------- odd corners


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


def test_procedure_without_body_and_null_fields(tmp_path: Path) -> None:
    cfg = load(write(tmp_path / "c.yml", "procedures:\n  p:\n  q:\n    display:\n    act:\n"))
    assert cfg.procedure("p").phases() == {"observe": (), "orient": (), "decide": (), "act": ()}
    assert cfg.procedure("q").display == ""
    assert "procedures.q.display" not in cfg.provenance


def test_non_string_keys_are_errors(tmp_path: Path) -> None:
    err = raises_config(write(tmp_path / "c.yml", "loop:\n  1: 2\n"))
    assert err.message == "loop: keys must be strings, got an integer (1)"
    assert (err.line, err.column) == (2, 3)


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


def test_missing_builtin_file_means_no_builtin_procedures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fragments, "builtin_root", lambda: tmp_path / "nothing")
    cfg = load_config(cwd=tmp_path, env={}, global_config=False)
    assert dict(cfg.procedures) == {}
    assert load_builtin_config().files == ()


def test_load_config_file_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config_file(tmp_path / "absent.yml")


def test_empty_cli_command_is_an_error(tmp_path: Path) -> None:
    cfg = _proc_config(tmp_path)
    with pytest.raises(ConfigError, match="--ai-cmd is empty"):
        resolve_run_settings(cfg, "p", ai_cmd="   ")


def test_procedure_output_buffer_beats_loop(tmp_path: Path) -> None:
    cfg = _proc_config(
        tmp_path, loop="  max_output_buffer: 50\n", proc="    max_output_buffer: 7\n"
    )
    run = resolve_run_settings(cfg, "p", require_ai=False)
    assert run.max_output_buffer == 7
    assert run.provenance["max_output_buffer"].line == 7


# --------------------------------------------------------------------------- config paths


def test_config_option_naming_a_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "confdir").mkdir()
    with pytest.raises(ConfigError, match=r"config file .*confdir is a directory"):
        load(tmp_path / "confdir")


def test_workspace_config_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "ooda-config.yml").mkdir()
    with pytest.raises(ConfigError, match=r"workspace config .*ooda-config.yml is a directory"):
        load_config(cwd=tmp_path, env={}, builtin=False, global_config=False)


def test_global_config_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "h" / ".config" / "ooda" / "ooda-config.yml").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"global config .*ooda-config.yml is a directory"):
        load_config(cwd=tmp_path, env={"HOME": str(tmp_path / "h")}, builtin=False)


def test_config_symlink_loop_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.yml").symlink_to(tmp_path / "b.yml")
    (tmp_path / "b.yml").symlink_to(tmp_path / "a.yml")
    with pytest.raises(ConfigError, match="symbolic link loop"):
        load(tmp_path / "a.yml")


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
