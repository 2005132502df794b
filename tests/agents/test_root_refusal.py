"""Claude Code refuses --dangerously-skip-permissions (and bypassPermissions) as root
outside a sandbox. ``ooda run`` (dry run too) and live runs say so before the first
iteration, naming IS_SANDBOX=1; a run that reaches the CLI anyway reports that cause,
not "does the command have --output-format stream-json?"; and the failure table prints
each line once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from claude_mock import CLAUDE
from sandbox_images import require_bwrap

from pytest_ooda.live.preflight import root_refusal, sandbox_env

if TYPE_CHECKING:
    from collections.abc import Callable

    from claude_mock import AgentMock

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """\
loop:
  ai_cmd_alias: claude
procedures:
  build:
    act:
      - content: "Write hello.py and say <promise>SUCCESS</promise> when it works."
"""
AS_ROOT = os.geteuid() == 0


def test_the_check_names_is_sandbox() -> None:
    argv = ["claude", "-p", "--dangerously-skip-permissions"]
    problem = root_refusal(argv, env={}, euid=0)
    assert problem is not None
    assert "IS_SANDBOX=1" in problem
    assert root_refusal(argv, env={"IS_SANDBOX": "1"}, euid=0) is None
    assert root_refusal(argv, env={}, euid=1000) is None
    # Inside a sandbox what counts is the environment its env: option gives the agent.
    inside = root_refusal(argv, env={}, euid=0, sandbox="bwrap")
    assert inside is not None
    assert "env: [IS_SANDBOX=1]" in inside
    assert root_refusal(argv, env={"IS_SANDBOX": "1"}, euid=0, sandbox="bwrap") is None
    options = {"env": ("IS_SANDBOX=1", "ANTHROPIC_API_KEY", "MISSING")}
    assert sandbox_env(options, {"ANTHROPIC_API_KEY": "k"}) == {
        "IS_SANDBOX": "1",
        "ANTHROPIC_API_KEY": "k",
    }
    bypass = ["/usr/bin/claude", "-p", "--permission-mode", "bypassPermissions"]
    assert root_refusal(bypass, env={}, euid=0) is not None
    assert root_refusal(["claude", "-p", "--allowedTools", "Bash"], env={}, euid=0) is None
    assert root_refusal(["my-agent", "--dangerously-skip-permissions"], env={}, euid=0) is None


def test_only_is_sandbox_1_counts_and_the_value_seen_is_named() -> None:
    # Claude Code 2.1.197 starts as root with IS_SANDBOX=1 and with nothing else.
    argv = ["claude", "-p", "--dangerously-skip-permissions"]
    for value in ("yes", "true", "TRUE", " 1", "0"):
        problem = root_refusal(argv, env={"IS_SANDBOX": value}, euid=0)
        assert problem is not None
        assert f"IS_SANDBOX={value!r}" in problem
        assert "accepts only IS_SANDBOX=1" in problem
    inside = root_refusal(argv, env={"IS_SANDBOX": "yes"}, euid=0, sandbox="docker")
    assert inside is not None
    assert "the docker sandbox's env: gives IS_SANDBOX='yes'" in inside


def test_in_a_sandbox_the_uid_inside_counts() -> None:
    from pytest_ooda.live import agent_refusal
    from pytest_ooda.sandbox import parse_spec

    require_bwrap()
    argv = ["claude", "-p", "--dangerously-skip-permissions"]
    # bwrap gives the agent an ordinary uid in its own user namespace: no IS_SANDBOX.
    assert (
        agent_refusal(argv, parse_spec({"kind": "bwrap"}), env={"PATH": os.environ["PATH"]}) is None
    )
    if AS_ROOT:
        assert agent_refusal(argv, None, env={"PATH": os.environ["PATH"]}) is not None


def _env(mock: AgentMock | None, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OODA_LOOP_", "IS_SANDBOX"))}
    if mock is not None:
        env.update(mock.env())
    env.pop("IS_SANDBOX", None)
    env["OODA_CONFIG_HOME"] = str(tmp_path / "no-global-config")
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.skipif(not AS_ROOT, reason="Claude Code refuses only as root")
def test_ooda_run_stops_before_the_first_iteration_as_root(tmp_path: Path) -> None:
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    for extra in (["--dry-run"], ["-n", "1"]):
        done = subprocess.run(
            [sys.executable, "-m", "pytest_ooda", "run", "build", *extra],
            cwd=tmp_path,
            env=_env(None, tmp_path),
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert "Claude Code refuses --dangerously-skip-permissions" in done.stderr
        assert "IS_SANDBOX=1" in done.stderr
        assert "Starting loop" not in done.stderr


@pytest.mark.skipif(not AS_ROOT, reason="Claude Code refuses only as root")
def test_the_real_cli_refusing_is_recognised_at_run_time(
    agent_mock: Callable[..., AgentMock], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The library path without the pre-check (a loop started directly): the real CLI
    # refuses, and the iteration's reason says why.
    from pytest_ooda.config import load_config
    from pytest_ooda.loop import run_procedure
    from pytest_ooda.loop.tables import iteration_table

    mock = agent_mock([[{"text": "never reached"}]])
    mock.use(monkeypatch)
    monkeypatch.delenv("IS_SANDBOX", raising=False)
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    config = load_config(tmp_path / "ooda-config.yml", cwd=tmp_path, global_config=False)
    result = run_procedure(
        config,
        "build",
        workdir=tmp_path,
        ai_cmd=CLAUDE.replace(
            "--permission-mode bypassPermissions", "--dangerously-skip-permissions"
        ),
        max_iterations=1,
        handle_signals=False,
    )
    [record] = result.records
    assert record.exit_code == 1
    text = f"{record.reason} {record.error}"
    assert "refuses to skip permission prompts as root" in text
    assert "IS_SANDBOX=1" in text
    assert "does the command have" not in text
    table = iteration_table(result)
    # Each line once: the reason quotes the error, so no separate error line.
    assert sum("IS_SANDBOX=1" in line for line in table) == 1
