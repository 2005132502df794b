"""``ooda show``: the prompt of an iteration, phases, context, provenance and its errors."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from pytest_ooda.compose import BAR

from .helpers import run

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_show_prints_the_prompt_of_iteration_one(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", "zeta")
    assert code == 0, err
    assert out.startswith(f"{BAR}\nOODA PROCEDURE EXECUTION\n")
    assert "Procedure: Zeta Proc\n" in out
    assert "\nIteration: 1 of 3\n" in out
    assert "Look at the repository." in out
    assert out.endswith("Emit the signal.\n")
    code, out, err = run(capsys, "show", "zeta", "--iteration", "2")
    assert "\nIteration: 2 of 3\n" in out


def test_show_is_byte_for_byte_what_run_pipes_to_the_agent(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = workspace / "agent.py"
    agent.write_text(
        "import sys\nopen('received.txt', 'wb').write(sys.stdin.buffer.read())\n"
        "print('<promise>SUCCESS</promise>')\n"
    )
    code, shown, err = run(capsys, "show", "zeta")
    assert code == 0, err
    code, _, err = run(capsys, "run", "zeta", "--no-lint", "--ai-cmd", f"{sys.executable} {agent}")
    assert code == 0, err
    assert (workspace / "received.txt").read_bytes() == shown.encode("utf-8")


def test_show_phase_and_context(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "zeta", "--phase", "observe")
    assert (code, out) == (0, "Look at the repository.\n")
    code, out, _ = run(capsys, "show", "zeta", "--phase", "orient")
    assert (code, out) == (0, "")
    (workspace / "task.md").write_text("The task.\n")
    code, out, _ = run(capsys, "show", "zeta", "--context", "task.md", "--context", "note")
    assert "CONTEXT\n" in out
    assert "Source: task.md\n\nThe task.\n\nnote\n" in out


def test_show_provenance(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "zeta", "--provenance")
    assert code == 0
    assert "max_iterations" in out
    line = next(line for line in out.splitlines() if "max_iterations" in line)
    assert "3" in line
    assert "workspace (ooda-config.yml:3)" in line
    assert "failure_threshold" in out
    assert "default" in out
    assert "observe[0]  prompts/look.md  (ooda-config.yml:9:9)" in out


def test_config_option_with_rooda_file(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "rooda-config.yml").write_text(
        "procedures:\n  only-here:\n    act:\n      - content: from rooda\n"
    )
    code, out, _ = run(capsys, "show", "only-here", "--config", "rooda-config.yml")
    assert code == 0
    assert out.endswith("from rooda\n")


def test_unknown_procedure_is_config_error(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", "zeat")
    assert code == 2
    assert out == ""
    assert "unknown procedure 'zeat'" in err
    assert "did you mean 'zeta'?" in err


def test_render_error_is_exit_2_with_location(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    act:\n      - content: '{{index .xs 3}}'\n"
        "        parameters: {xs: [1]}\n"
    )
    code, out, err = run(capsys, "show", "p")
    assert code == 2
    assert out == ""
    assert err.startswith(
        "ooda: error: ooda-config.yml:4:9: procedure p: act[0]: template execution error:"
    )
    assert "in line 1 of the inline content" in err


def test_provenance_shows_ai_backend(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    ai_api: {provider: openai, model: gpt-x}\n"
        "    iteration_mode: unlimited\n    iteration_timeout: 30\n"
        "  q:\n    ai_cmd: \"my-cli --flag 'a b'\"\n"
    )
    _, out, _ = run(capsys, "show", "p", "--provenance")
    assert "ai_api                openai model=gpt-x" in out
    assert "max_iterations        unlimited" in out
    assert "iteration_timeout     30s" in out
    assert "log_timestamp_format  none" in out
    _, out, _ = run(capsys, "show", "q", "--provenance")
    assert "ai_cmd                my-cli --flag 'a b'  workspace (ooda-config.yml:7)" in out


def test_provenance_shows_output_format_and_budgets(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "ooda-config.yml").write_text(
        "loop:\n  max_cost: 2.5\nprocedures:\n  p:\n    ai_cmd: my-cli\n"
        "    ai_output: codex-json\n    max_tokens: 90000\n"
    )
    _, out, _ = run(capsys, "show", "p", "--provenance")
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in out.splitlines()[1:]}
    assert rows["ai_output"] == ["codex-json", "workspace (ooda-config.yml:6)"]
    assert rows["max_cost"] == ["$2.5", "workspace (ooda-config.yml:2)"]
    assert rows["max_tokens"] == ["90000", "workspace (ooda-config.yml:7)"]
    (workspace / "ooda-config.yml").write_text("procedures:\n  q:\n    ai_cmd: my-cli\n")
    _, out, _ = run(capsys, "show", "q", "--provenance")
    assert "  max_cost              none" in out


def test_show_writes_utf8_bytes_whatever_the_locale(workspace: Path) -> None:
    import os

    env = dict(os.environ, PYTHONIOENCODING="latin-1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "show", "alpha"],
        capture_output=True,
        cwd=workspace,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.startswith(BAR.encode("utf-8") + b"\nOODA PROCEDURE EXECUTION\n")
