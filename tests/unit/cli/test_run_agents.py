"""``ooda run`` with agent CLIs: --ai-output, --max-cost/--max-tokens, the summary's
cost and tokens, live rendering with --verbose, and recordings that say a budget
stopped the run (fake agents printing Claude Code's stream-json; the real CLI is in
tests/agents/test_real_claude.py)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.cli import main
from pytest_ooda.scenario import load_scenario

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  build:\n    act:\n"
        "      - content: Do the work; say <promise>SUCCESS</promise> when done.\n",
        encoding="utf-8",
    )
    home = tmp_path / "config-home"
    home.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("OODA_LOOP_"):
            monkeypatch.delenv(name)
    return tmp_path


def _stream(text: str, cost: float, command: str = "pytest -q") -> str:
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "model": "m"},
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}},
        {"type": "result", "is_error": False, "result": text, "num_turns": 2,
         "total_cost_usd": cost, "usage": {"input_tokens": 900, "output_tokens": 100}},
    ]  # fmt: skip
    return "".join(json.dumps(event) + "\n" for event in events)


def _agent(tmp_path: Path, *outputs: str) -> str:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"print": output} for output in outputs]), encoding="utf-8")
    return shlex.join([sys.executable, str(AGENT), "--plan", str(plan)])


def test_a_budget_stops_the_run_and_the_summary_says_what_it_cost(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cmd = _agent(workspace, _stream("working", 0.05))
    code = main(
        ["run", "build", "--ai-cmd", cmd, "--ai-output", "claude-stream-json",
         "--max-cost", "0.08", "-n", "5", "--verbose"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    assert "warning: Loop aborted: budget reached: the run cost $0.1000, max_cost is $0.08" in err
    assert "Loop completed status=aborted iterations=2" in err
    assert "tokens=2000 cost=$0.1000" in err
    assert "turns=2 tool_calls=1" in err  # the per-iteration detail line
    # --verbose shows the stream as readable lines, never raw JSON.
    assert out.count("→ Bash: pytest -q\n") == 2
    assert "✓ done: 2 turns · 1000 tokens · $0.0500" in out
    assert '"type"' not in out


def test_the_format_follows_the_commands_flags_and_tokens_budget(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The fake takes any arguments; "--output-format stream-json" on a command named
    # claude is what makes a run read stream-json without --ai-output.
    fake_claude = workspace / "bin" / "claude"
    fake_claude.parent.mkdir()
    plan = workspace / "plan.json"
    plan.write_text(json.dumps([{"print": _stream("w", 0.01)}]), encoding="utf-8")
    fake_claude.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(AGENT))} "
        f"--plan {shlex.quote(str(plan))}\n",
        encoding="utf-8",
    )
    fake_claude.chmod(0o755)
    cmd = f"{fake_claude} -p --output-format stream-json --verbose"
    assert main(["run", "build", "--ai-cmd", cmd, "--max-tokens", "1500", "-n", "4"]) == 1
    err = capsys.readouterr().err
    assert "budget reached: the run used 2000 tokens, max_tokens is 1500" in err


def test_dry_run_shows_format_and_budget_with_their_sources(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "ooda-config.yml").write_text(
        "loop:\n  max_tokens: 5000\nprocedures:\n  build:\n    max_cost: 3\n"
        "    act: [{content: 'go; say <promise>SUCCESS</promise>'}]\n",
        encoding="utf-8",
    )
    cmd = _agent(workspace, "x")
    code = main(
        ["run", "build", "--dry-run", "--ai-cmd", cmd, "--ai-output", "claude-json",
         "--max-cost", "2.5"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0
    rows = {line.split()[0]: line.split()[1:] for line in err.splitlines()[1:] if line.strip()}
    assert rows["ai_output"] == ["claude-json", "cli", "(--ai-output)"]
    assert rows["max_cost"] == ["$2.5", "cli", "(--max-cost)"]
    assert rows["max_tokens"][:2] == ["5000", "workspace"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-cost", "cheap"], "expected an amount in US dollars, got 'cheap'"),
        (["--max-cost", "0"], "expected an amount in US dollars > 0, got 0"),
        (["--max-cost", "inf"], "expected an amount in US dollars > 0, got inf"),
        (["--max-tokens", "1.5"], "expected an integer >= 1, got '1.5'"),
        (["--ai-output", "json"], "invalid choice: 'json'"),
    ],
)
def test_bad_values_are_usage_errors(
    workspace: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["run", "build", "--ai-cmd", "x", *args]) == 1
    assert message in capsys.readouterr().err


def test_a_recording_says_a_budget_stopped_the_run_and_replays_to_it(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cmd = _agent(workspace, _stream("working", 0.05, command=f"ls {workspace}/src"))
    args = ["run", "build", "--ai-cmd", cmd, "--ai-output", "claude-stream-json"]
    assert main([*args, "--max-cost", "0.08", "-n", "5", "--record", "rec.yml"]) == 1
    recorded = load_scenario(workspace / "rec.yml")
    assert recorded.recorded is not None
    assert recorded.recorded.status == "aborted"
    assert recorded.recorded.reason == "budget reached: the run cost $0.1000, max_cost is $0.08"
    assert recorded.recorded.cost == pytest.approx(0.10)
    first = recorded.iterations[0]
    assert first.tool_calls is not None
    assert first.tool_calls[0].summary == "ls src"  # the workspace path made relative
    assert first.usage is not None
    assert first.usage.cost == pytest.approx(0.05)
    assert recorded.max_cost == 0.08  # the budget that stopped it, kept for the replay
    capsys.readouterr()
    assert main(["run", "build", "--replay", "rec.yml"]) == 1
    err = capsys.readouterr().err
    assert "Loop completed status=aborted iterations=2" in err
    assert "scenario expectation not met" not in err
