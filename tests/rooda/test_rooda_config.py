"""Real rooda configs load unchanged: each form in the corpus, and where we find them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_ooda import lint
from pytest_ooda.config import PROCEDURE_KEYS, Config, load_config, resolve_run_settings
from pytest_ooda.errors import ConfigError
from pytest_ooda.fragments import ROODA_BUILTIN_NAMES, builtin_root, read_fragment_file

CORPUS = Path(__file__).resolve().parent / "corpus"
CASES = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())


def load(case: str, **kwargs: object) -> Config:
    options: dict[str, object] = {"env": {}, "global_config": False}
    options.update(kwargs)
    return load_config(cwd=CORPUS / case, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES)
def test_every_corpus_config_loads_from_its_directory(case: str) -> None:
    config = load(case)
    file = CORPUS / case / "rooda-config.yml"
    assert file in config.files
    declared = [p for p in config.procedures.values() if p.location.file == file]
    assert declared or config.broken
    # Found under rooda's name, and the provenance says so.
    for procedure in declared:
        for key, where in procedure.field_locations.items():
            if where.file == file:
                provenance = str(config.provenance[f"procedures.{procedure.name}.{key}"])
                assert provenance.startswith("workspace (")
                assert "rooda-config.yml:" in provenance


def test_the_documented_example_loads_as_documented() -> None:
    config = load("docs_example")
    # An empty ai_cmd / ai_cmd_alias means "not set", as in rooda.
    assert config.loop.ai_cmd is None
    assert config.loop.ai_cmd_alias is None
    assert "loop.ai_cmd" not in config.locations
    assert config.loop.log_timestamp_format == "relative"
    assert config.loop.log_level == "debug"
    # A partial override of a built-in keeps its phases.
    build = config.procedure("build")
    assert build.default_max_iterations == 10
    assert build.ai_cmd_alias == "claude"
    assert len(build.observe) == 5
    run = resolve_run_settings(config, "custom-procedure")
    assert run.ai_cmd == ("my-ai-tool", "--flag", "value")
    assert run.max_iterations == 2


def test_the_string_phase_form_is_one_fragment_and_lint_suggests_a_list() -> None:
    config = load("string_phase")
    legacy = config.procedure("legacy")
    (observe,) = legacy.observe
    assert observe.path == "prompts/observe.md"
    assert observe.string_form
    assert observe.file == CORPUS / "string_phase" / "prompts" / "observe.md"
    assert (observe.location.line, observe.location.column) == (6, 14)
    assert not legacy.decide[0].string_form
    findings = [f for f in lint.lint_procedure(config, "legacy") if f.id == "OODA104"]
    assert [(f.line, f.severity) for f in findings] == [(6, "info"), (7, "info"), (10, "info")]
    assert findings[0].message == (
        "procedure legacy: observe is one string; write it as a list: "
        "`observe: [{path: prompts/observe.md}]`"
    )


def test_an_empty_string_phase_is_that_procedures_error(tmp_path: Path) -> None:
    (tmp_path / "rooda-config.yml").write_text(
        "procedures:\n  p:\n    observe: ''\n  q:\n    act: [{content: ok}]\n"
    )
    config = load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    assert list(config.procedures) == ["q"]
    with pytest.raises(ConfigError, match="observe: fragment must specify either content"):
        config.procedure("p")


def test_unknown_keys_in_a_rooda_config_are_located_warnings() -> None:
    config = load("unknown_keys")
    found = sorted((w.line, w.column, w.message) for w in config.warnings)
    assert found == [
        (
            3,
            1,
            "unknown top-level key 'version' (ignored); known top-level keys: "
            "ai_cmd_aliases, claude, lint, loop, procedures, redact, replay_normalise",
        ),
        (
            6,
            3,
            "loop: unknown key 'log_format' (ignored, as rooda does); "
            "did you mean 'prompt_format'?",
        ),
        (
            10,
            5,
            "procedure audit: unknown key 'owner' (ignored, as rooda does); "
            "expected one of: " + ", ".join(sorted(PROCEDURE_KEYS)),
        ),
        (
            13,
            9,
            "procedure audit: observe[0]: unknown key 'note' (ignored, as rooda does); "
            "expected one of: content, parameters, path",
        ),
    ]
    assert config.loop.default_max_iterations == 2
    report = lint.lint_path(cwd=CORPUS / "unknown_keys")
    assert [(f.id, f.line) for f in report.findings if f.id == "OODA003"] == [
        ("OODA003", 3),
        ("OODA003", 6),
        ("OODA003", 10),
        ("OODA003", 13),
    ]


def test_unknown_keys_stay_errors_in_our_own_file(tmp_path: Path) -> None:
    text = (CORPUS / "unknown_keys" / "rooda-config.yml").read_text(encoding="utf-8")
    (tmp_path / "ooda-config.yml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="loop: unknown key 'log_format'"):
        load_config(cwd=tmp_path, env={}, global_config=False)


def test_rooda_builtin_fragment_names_resolve_to_ours() -> None:
    config = load("builtin_names")
    procedure = config.procedure("rooda-names")
    actions = [action for actions in procedure.phases().values() for action in actions]
    assert len(actions) == 10
    for action in actions:
        assert action.path is not None
        assert action.file is not None
        written = action.path.removeprefix("builtin:")
        expected = builtin_root() / ROODA_BUILTIN_NAMES.get(written, written)
        assert action.file == expected
        assert action.source_label() == action.path  # shown as written
        assert read_fragment_file(action.file).strip()


def test_the_rooda_only_fragments_are_real_prompts() -> None:
    for name in ("understand_chore_request", "understand_refactor_request"):
        text = (builtin_root() / "fragments" / "orient" / f"{name}.md").read_text()
        assert text.startswith("## ")
        assert len(text.split()) > 80
        assert "task input" in text


def test_ooda_config_wins_over_rooda_config(tmp_path: Path) -> None:
    (tmp_path / "ooda-config.yml").write_text("loop: {default_max_iterations: 7}\n")
    (tmp_path / "rooda-config.yml").write_text("loop: {default_max_iterations: 9}\n")
    config = load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    assert config.loop.default_max_iterations == 7
    assert [path.name for path in config.files] == ["ooda-config.yml"]


def test_rooda_environment_variables_are_read_where_ours_are_not_set(tmp_path: Path) -> None:
    env = {
        "ROODA_LOOP_AI_CMD": "rooda-cli --x",
        "ROODA_LOOP_DEFAULT_MAX_ITERATIONS": "4",
        "ROODA_LOOP_LOG_TIMESTAMP_FORMAT": "iso",
        "OODA_LOOP_DEFAULT_MAX_ITERATIONS": "6",
        "ROODA_LOOP_LOG_LEVEL": " ",
    }
    config = load_config(cwd=tmp_path, env=env, global_config=False, builtin=False)
    assert config.loop.ai_cmd == "rooda-cli --x"
    assert config.loop.default_max_iterations == 6  # OODA_* wins
    assert config.loop.log_timestamp_format == "iso"
    assert config.loop.log_level == "info"  # blank: not set
    assert str(config.provenance["loop.ai_cmd"]) == "env (ROODA_LOOP_AI_CMD)"
    assert str(config.provenance["loop.default_max_iterations"]) == (
        "env (OODA_LOOP_DEFAULT_MAX_ITERATIONS)"
    )


def test_a_bad_rooda_variable_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={"ROODA_LOOP_FAILURE_THRESHOLD": "x"}, global_config=False)
    assert str(info.value) == (
        "environment variable ROODA_LOOP_FAILURE_THRESHOLD: expected an integer >= 1, got 'x'"
    )


def test_rooda_config_home_holds_a_global_rooda_config(tmp_path: Path) -> None:
    home = tmp_path / "rooda-home"
    home.mkdir()
    (home / "rooda-config.yml").write_text(
        textwrap.dedent(
            """\
            loop:
              ai_cmd_alias: kiro-cli
              log_timestamp_format: none
            """
        )
    )
    workspace = tmp_path / "work"
    workspace.mkdir()
    config = load_config(cwd=workspace, env={"ROODA_CONFIG_HOME": str(home)}, builtin=False)
    assert config.loop.ai_cmd_alias == "kiro-cli"
    assert config.provenance["loop.ai_cmd_alias"].tier == "global"
    assert config.files == (home / "rooda-config.yml",)
    # OODA_CONFIG_HOME, when set, is the one used.
    ours = tmp_path / "ooda-home"
    ours.mkdir()
    config = load_config(
        cwd=workspace,
        env={"ROODA_CONFIG_HOME": str(home), "OODA_CONFIG_HOME": str(ours)},
        builtin=False,
    )
    assert config.files == ()


def test_prompt_format_is_read_at_loop_and_procedure_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ooda-config.yml").write_text(
        "loop:\n  prompt_format: rooda\nprocedures:\n  a: {act: [{content: x}]}\n"
        "  b:\n    prompt_format: ooda\n    act: [{content: y}]\n"
    )
    config = load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    assert config.procedure("a").prompt_format == "rooda"
    assert config.procedure("b").prompt_format == "ooda"
    a = resolve_run_settings(config, "a", require_ai=False)
    b = resolve_run_settings(config, "b", require_ai=False)
    assert (a.prompt_format, str(a.provenance["prompt_format"])) == (
        "rooda",
        "workspace (ooda-config.yml:2)",
    )
    assert (b.prompt_format, str(b.provenance["prompt_format"])) == (
        "ooda",
        "workspace (ooda-config.yml:6)",
    )
    # A command-line choice beats both.
    forced = load_config(
        cwd=tmp_path,
        env={},
        global_config=False,
        builtin=False,
        overrides={"prompt_format": "rooda"},
    )
    assert forced.procedure("b").prompt_format == "rooda"
    settings = resolve_run_settings(forced, "b", require_ai=False)
    assert str(settings.provenance["prompt_format"]) == "cli (prompt_format)"


def test_a_bad_prompt_format_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ooda-config.yml").write_text("loop:\n  prompt_format: go\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    assert str(info.value) == (
        "ooda-config.yml:2:18: loop.prompt_format: expected one of ooda, rooda, raw, "
        "got a string ('go')"
    )


def test_empty_strings_mean_not_set_as_in_rooda(tmp_path: Path) -> None:
    (tmp_path / "rooda-config.yml").write_text(
        'loop: {iteration_mode: "", log_level: "", log_timestamp_format: ""}\n'
        'procedures:\n  build: {display: "", summary: "", description: ""}\n'
    )
    config = load_config(cwd=tmp_path, env={}, global_config=False)
    assert (config.loop.iteration_mode, config.loop.log_level) == ("max-iterations", "info")
    assert config.procedure("build").display == "Build"  # the built-in's, as rooda keeps it
    assert config.procedure("build").summary


def test_zero_buffer_and_threshold_mean_not_set_in_a_rooda_config(tmp_path: Path) -> None:
    text = "loop:\n  failure_threshold: 0\n  max_output_buffer: 0\n"
    (tmp_path / "rooda-config.yml").write_text(text)
    config = load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    assert (config.loop.failure_threshold, config.loop.max_output_buffer) == (3, 10_485_760)
    assert [(w.line, w.message) for w in config.warnings] == [
        (2, "loop.failure_threshold: 0 means not set (as in rooda): the default applies"),
        (3, "loop.max_output_buffer: 0 means not set (as in rooda): the default applies"),
    ]
    # Our own file keeps refusing it.
    (tmp_path / "ooda-config.yml").write_text(text)
    with pytest.raises(ConfigError, match=r"loop\.failure_threshold: expected an integer >= 1"):
        load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)


def test_a_string_phase_naming_a_missing_file_is_that_procedures_located_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "rooda-config.yml").write_text("procedures:\n  p:\n    observe: prompts/x.md\n")
    config = load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    with pytest.raises(ConfigError) as info:
        config.procedure("p")
    assert info.value.message.startswith("procedure p: observe: fragment file not found")
    assert (info.value.line, info.value.column) == (3, 14)


def test_a_non_string_key_in_a_rooda_config_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "rooda-config.yml").write_text("loop:\n  1: x\n  default_max_iterations: 4\n")
    config = load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    assert config.loop.default_max_iterations == 4
    (warning,) = config.warnings
    assert warning.message == (
        "loop: keys must be strings, got an integer (1) (ignored, as rooda does); "
        'quote the key, e.g. "on": or "1":'
    )


def test_merged_parameter_keys_are_named_by_their_text(tmp_path: Path) -> None:
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    act:\n"
        "      - content: x\n        parameters: &base {0x10: sixteen, name: n}\n"
        "      - content: '{{.}}'\n        parameters:\n          <<: *base\n          y: z\n"
    )
    config = load_config(cwd=tmp_path, env={}, global_config=False, builtin=False)
    assert dict(config.procedure("p").act[1].parameters) == {
        "0x10": "sixteen",
        "name": "n",
        "y": "z",
    }
