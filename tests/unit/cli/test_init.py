"""``ooda init``: a commented config, a scenario that replays green at once, one to record
live, the next three commands, every ``--agent`` set-up loading lint-clean, and nothing
ever overwritten."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.cli.init import CI_STEPS, agent_choices, next_commands, planned_files

AGENTS = agent_choices()

if TYPE_CHECKING:
    from pathlib import Path


def _env(tmp_path: Path) -> dict[str, str]:
    keep = {"PATH", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["HOME"] = str(tmp_path / "home")
    env["OODA_CONFIG_HOME"] = str(tmp_path / "no-global-config")
    return env


def _ooda(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", *args],
        cwd=cwd,
        env=_env(cwd),
        capture_output=True,
        text=True,
        check=False,
    )


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=_env(cwd),
        capture_output=True,
        text=True,
        check=False,
    )


def test_init_writes_a_project_whose_replay_passes_at_once(tmp_path: Path) -> None:
    done = _ooda(tmp_path, "init")
    assert done.returncode == 0, done.stderr
    for name in planned_files("claude"):
        assert (tmp_path / name).is_file()
        assert f"wrote {name}" in done.stdout
    config = (tmp_path / "ooda-config.yml").read_text()
    assert config.startswith("# pytest-ooda configuration")
    assert "ai_cmd_alias: claude" in config
    assert "IS_SANDBOX=1" in config
    # The next three commands, as printed, run: the first two right away.
    commands = [text for text, _ in next_commands("claude")]
    assert len(commands) == 3
    assert all(f"  {text}" in done.stdout for text in commands)
    show = _ooda(tmp_path, "show", "hello")
    assert show.returncode == 0
    assert "Write HELLO.md" in show.stdout
    assert _ooda(tmp_path, "lint").stdout.startswith("no findings")
    assert "wrote 5 prompt snapshots in __snapshots__/ooda-config/hello/" in done.stdout
    # Plain pytest is green at once: the snapshots match (not merely written now), the
    # hand-written scenario replays, the live one is skipped with the command that
    # records it.
    plain = _pytest(tmp_path, "-rs")
    assert plain.returncode == 0, plain.stdout
    assert "7 passed, 1 skipped, 2 deselected" in plain.stdout
    assert "5 snapshots passed" in plain.stdout
    assert (
        "scenario hello/first-live is not recorded yet (iterations: []): record it with  "
        "pytest -m live --ooda-record-mode=once 'ooda-config.yml::hello::live[first-live]'"
    ) in " ".join(plain.stdout.split("\n"))
    assert "hello::scenario[hand-written]" in _pytest(tmp_path, "--co", "-q").stdout


@pytest.mark.parametrize("agent", AGENTS)
def test_the_printed_ci_command_passes_in_a_fresh_project(tmp_path: Path, agent: str) -> None:
    done = _ooda(tmp_path, "init", "--agent", agent)
    assert done.returncode == 0, done.stderr
    ci = done.stdout.split("\nin CI ", 1)[1].splitlines()[1:]
    assert [line.strip() for line in ci] == list(CI_STEPS)
    command = shlex.split(ci[-1].strip().removeprefix("- run: "))
    assert command == ["pytest"]
    run = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agent_set_up_loads_lint_clean(tmp_path: Path, agent: str) -> None:
    assert _ooda(tmp_path, "init", "--agent", agent).returncode == 0
    lint = _ooda(tmp_path, "lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    provenance = _ooda(tmp_path, "show", "hello", "--provenance").stdout
    expected = {
        "claude": "claude -p",
        "codex": "codex exec --json",
        "gemini": "gemini --output-format stream-json",
        "qwen": "qwen --output-format stream-json",
        "command": None,
    }[agent]
    if expected is None:
        assert "my-agent" not in provenance
    else:
        assert expected in provenance


def test_the_live_scenario_records_with_the_printed_command(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import pathlib, sys\nsys.stdin.read()\npathlib.Path('HELLO.md').write_text('Hi')\n"
        "print('Wrote it.\\n<promise>SUCCESS</promise>')\n"
    )
    project = tmp_path / "repo"
    project.mkdir()
    assert _ooda(project, "init", "--agent", "command").returncode == 0
    [*_, (live, _)] = next_commands("command")
    assert live.endswith("--ooda-ai-cmd='my-agent --print'")
    args = [*shlex.split(live)[1:-1], f"--ooda-ai-cmd={sys.executable} {agent}"]
    done = _pytest(project, *args)
    assert done.returncode == 0, done.stdout
    recorded = (project / "scenarios/hello/first-live.yml").read_text()
    assert "<promise>SUCCESS</promise>" in recorded
    assert _pytest(project, "--snapshot-update").returncode == 0


def test_init_overwrites_nothing(tmp_path: Path) -> None:
    (tmp_path / "scenarios/hello").mkdir(parents=True)
    mine = tmp_path / "scenarios/hello/first-live.yml"
    mine.write_text("# mine\n")
    done = _ooda(tmp_path, "init")
    assert done.returncode == 1
    assert "writes nothing over existing files: scenarios/hello/first-live.yml" in done.stderr
    assert mine.read_text() == "# mine\n"
    assert not (tmp_path / "ooda-config.yml").exists()
    # A rooda-config.yml would be hidden by a new ooda-config.yml: refused too.
    other = tmp_path / "other"
    other.mkdir()
    (other / "rooda-config.yml").write_text("procedures: {}\n")
    assert _ooda(other, "init").returncode == 1
    assert not (other / "ooda-config.yml").exists()
