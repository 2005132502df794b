"""Resolving one run's settings (config/run_settings.py): iteration limit, timeouts, AI command
and output, budgets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import (
    ApiSettings,
    Config,
    load_config,
    resolve_run_settings,
)
from pytest_ooda.config.run_settings import infer_ai_output
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config
from .helpers import _config, _with, load, write


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
def test_mistakes_in_agent_settings_are_located(
    tmp_path: Path, loop: str, proc: str, where: str, message: str
) -> None:
    text = "# header\nloop:\n" + (loop or "  log_level: info\n")
    text += "procedures:\n  p:\n    act: [{content: x}]\n" + proc
    with pytest.raises(ConfigError) as info:
        # A mistake inside a procedure breaks that procedure alone: raised when used.
        _config(tmp_path, text).procedure("p")
    assert str(info.value).startswith(f"{tmp_path / 'ooda-config.yml'}:{where}: {message}")
