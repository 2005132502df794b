"""Config for agent CLIs: ``ai_output`` (and how a run resolves it), budgets
``max_cost``/``max_tokens`` at loop and procedure level and from the environment, and
every mistake in them located."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import load_config, resolve_run_settings
from pytest_ooda.config.run_settings import infer_ai_output
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config


def _config(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return load_config(path, env=env or {}, builtin=False, global_config=False)


def _with(tmp_path: Path, loop: str = "", proc: str = "", **env: str) -> Config:
    text = "loop:\n" + (loop or "  log_level: info\n")
    text += "procedures:\n  p:\n    act:\n      - content: x\n" + proc
    return _config(tmp_path, text, env)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["claude", "-p", "--output-format", "stream-json", "--verbose"], "claude-stream-json"),
        (["/usr/bin/claude", "-p", "--output-format=json"], "claude-json"),
        (["claude", "-p", "--output-format", "text"], "text"),
        (["claude", "-p"], None),
        (["codex", "exec", "--json", "-"], "codex-json"),
        (["codex", "--json"], None),
        (["my-agent", "--output-format", "stream-json"], None),
        ([], None),
    ],
)
def test_an_agent_clis_own_flags_say_how_to_read_it(argv: list[str], expected: str | None) -> None:
    assert infer_ai_output(argv) == expected


def test_ai_output_resolution_order(tmp_path: Path) -> None:
    plain = _with(tmp_path)
    run = resolve_run_settings(plain, "p", ai_cmd="claude -p --output-format json")
    assert (run.ai_output, run.provenance["ai_output"].source) == (
        "claude-json",
        "the command's own flags",
    )
    assert resolve_run_settings(plain, "p", ai_cmd="my-agent").ai_output == "text"
    looped = _with(tmp_path, loop="  ai_output: codex-json\n")
    assert resolve_run_settings(looped, "p", ai_cmd="claude -p --output-format json").ai_output == (
        "codex-json"
    )
    both = _with(tmp_path, loop="  ai_output: codex-json\n", proc="    ai_output: claude-json\n")
    run = resolve_run_settings(both, "p", ai_cmd="x")
    assert run.ai_output == "claude-json"
    assert run.provenance["ai_output"].tier == "workspace"
    given = resolve_run_settings(both, "p", ai_cmd="x", ai_output="text")
    assert (given.ai_output, given.provenance["ai_output"].tier) == ("text", "cli")
    with pytest.raises(ConfigError, match="ai_output: expected one of text, claude-json"):
        resolve_run_settings(plain, "p", ai_cmd="x", ai_output="yaml")  # type: ignore[arg-type]
    assert resolve_run_settings(plain, "p", require_ai=False).ai_output == "text"


def test_the_builtin_claude_alias_is_read_as_stream_json(tmp_path: Path) -> None:
    config = _with(tmp_path)
    run = resolve_run_settings(config, "p", ai_cmd_alias="claude")
    assert run.ai_output == "claude-stream-json"
    assert run.provenance["ai_output"].source == "built-in alias claude"
    assert run.ai_cmd is not None
    assert run.ai_cmd[-3:] == ("--output-format", "stream-json", "--verbose")
    # Asked for json instead: the alias gets json's flag.
    json_run = resolve_run_settings(config, "p", ai_cmd_alias="claude", ai_output="claude-json")
    assert json_run.ai_cmd is not None
    assert json_run.ai_cmd[-2:] == ("--output-format", "json")
    # Plain text: the spec's command, untouched.
    text_run = resolve_run_settings(config, "p", ai_cmd_alias="claude", ai_output="text")
    assert text_run.ai_cmd == ("claude", "-p", "--dangerously-skip-permissions")
    # Another built-in alias keeps text.
    assert resolve_run_settings(config, "p", ai_cmd_alias="copilot").ai_output == "text"


def test_a_redefined_claude_alias_is_the_users_command(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        """
        ai_cmd_aliases:
          claude: "claude -p --model haiku"
        procedures:
          p:
            ai_cmd_alias: claude
            act: [{content: x}]
        """,
    )
    run = resolve_run_settings(config, "p")
    assert run.ai_cmd == ("claude", "-p", "--model", "haiku")
    assert run.ai_output == "text"


def test_budgets_every_one_applies_the_smallest_wins(tmp_path: Path) -> None:
    config = _with(
        tmp_path,
        loop="  max_cost: 2\n  max_tokens: 5000\n",
        proc="    max_cost: 0.5\n    max_tokens: 90000\n",
    )
    run = resolve_run_settings(config, "p", ai_cmd="x")
    assert (run.max_cost, run.max_tokens) == (0.5, 5000)
    assert run.provenance["max_cost"].tier == "workspace"
    assert run.provenance["max_tokens"].line == 3
    tighter = resolve_run_settings(config, "p", ai_cmd="x", max_cost=0.1, max_tokens=10)
    assert (tighter.max_cost, tighter.max_tokens) == (0.1, 10)
    assert tighter.provenance["max_cost"].tier == "cli"
    none = resolve_run_settings(_with(tmp_path), "p", ai_cmd="x")
    assert (none.max_cost, none.max_tokens) == (None, None)
    assert "max_cost" not in none.provenance


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


@pytest.mark.parametrize(
    ("loop", "proc", "where", "message"),
    [
        ("  max_cost: -1\n", "", "3:13", "loop.max_cost: expected an amount in US dollars > 0"),
        ("  max_cost: yes\n", "", "3:13", "loop.max_cost: expected an amount in US dollars"),
        ("  max_tokens: 0\n", "", "3:15", "loop.max_tokens: expected an integer >= 1"),
        ("  ai_output: json\n", "", "3:14", "loop.ai_output: expected one of text, claude-json"),
        ("", "    max_cost: .nan\n", "7:15", "procedure p: max_cost: expected an amount"),
        ("", "    ai_output: 3\n", "7:16", "procedure p: ai_output: expected one of text"),
    ],
)
def test_mistakes_are_located(
    tmp_path: Path, loop: str, proc: str, where: str, message: str
) -> None:
    text = "# header\nloop:\n" + (loop or "  log_level: info\n")
    text += "procedures:\n  p:\n    act: [{content: x}]\n" + proc
    with pytest.raises(ConfigError) as info:
        # A mistake inside a procedure breaks that procedure alone: raised when used.
        _config(tmp_path, text).procedure("p")
    assert str(info.value).startswith(f"{tmp_path / 'ooda-config.yml'}:{where}: {message}")


def test_an_unknown_key_suggests_the_new_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _with(tmp_path, loop="  max_costs: 3\n")
    assert "did you mean 'max_cost'?" in str(info.value)


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
