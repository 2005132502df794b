"""Shared helpers of the scenario tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends.replay import ReplayBackend, ReplayStep, script
from pytest_ooda.config import Config, load_config
from pytest_ooda.errors import ScenarioError
from pytest_ooda.loop import LoopResult, run_procedure
from pytest_ooda.scenario import load_scenario

if TYPE_CHECKING:
    from pytest_ooda.backends import ToolCall

SAMPLE = """\
procedure: build
description: implements one task, then finds no ready work
context: "focus on the auth module"
max_iterations: 3
failure_threshold: 2
workspace: fixtures/repo
expect:
  status: success
  iterations: 2
  signals: [none, SUCCESS]
  files: {AGENTS.md: exists, tmp.txt: absent, notes.md: {contains: [alpha, beta]}}
iterations:
  - output: "Implemented task 1\\n"
    exit_code: 0
    prompt_sha256: %s
    duration_s: 41.2
  - output: |
      No ready work.
      <promise>SUCCESS</promise>
    exit_code: 0
    delay: 0.01
    files: {AGENTS.md: "# agents\\n", old.txt: null}
""" % ("ab" * 32)


def write(tmp_path: Path, text: str, name: str = "happy.yml") -> Path:
    path = tmp_path / "scenarios" / "build" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def assert_located(tmp_path: Path, text: str, where: str, message: str) -> ScenarioError:
    """Loading ``text`` as a scenario file fails at ``where`` (``line:column``), saying
    ``message``; the error is returned for more checks."""
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    # A file's mistakes come together (the first, carrying the others): one of them is
    # the mistake at ``where``.
    found = [str(each).splitlines()[0] for each in info.value.every]
    assert any(line.startswith(f"{path}:{where}") and message in line for line in found), found
    return info.value


def _scripted_result(config: Config, outputs: list[str], *, max_iterations: int = 5) -> LoopResult:
    return run_procedure(config, "build", backend=script(outputs), max_iterations=max_iterations)


AGENT_SCENARIO = """\
procedure: build
max_cost: 0.5
max_tokens: 90000
expect:
  status: success
  tools:
    called: [Write, Bash]
    not_called: WebFetch
    bash_matches: ["pytest", "^python3? "]
    max_calls: 5
  commands:
    - run: python3 -c "print(open('hello.py').read())"
      output_contains: hi
    - run: "test -f hello.py"
      exit_code: 0
      timeout: 20
    - "true"
recorded:
  status: success
  iterations: 1
  tokens: 1140
  cost: 0.0532
iterations:
  - output: "done <promise>SUCCESS</promise>"
    usage: {input_tokens: 1000, output_tokens: 100, cache_read_tokens: 40, cost: 0.0532}
    turns: 3
    model: claude-opus-4-8
    files: {hello.py: "print('hi')\\n"}
    tool_calls:
      - {name: Write, summary: hello.py, ok: true}
      - {name: Bash, summary: python3 -m pytest -q, ok: true}
      - {name: Bash, summary: rm -rf /, ok: false, error: permission denied}
    permission_denials:
      - {name: Bash, summary: rm -rf /, ok: false, error: permission denied}
"""


def _agent_config(tmp_path: Path) -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text("procedures:\n  build:\n    act:\n      - content: go\n", encoding="utf-8")
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)


def _replay_result(tmp_path: Path, *steps: ReplayStep) -> LoopResult:
    return run_procedure(
        _agent_config(tmp_path),
        "build",
        backend=ReplayBackend(list(steps)),
        workdir=tmp_path,
        max_iterations=len(steps),
        handle_signals=False,
    )


def _calls(*calls: ToolCall) -> ReplayStep:
    return ReplayStep(output="x", tool_calls=calls, tools_reported=True)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped, as PID 1 of a container may leave
    it, is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


REPEAT_TEXT = """\
procedure: build
repeat: 20
expect:
  status: success
  success_rate: {min: 0.8}
  max_mean_iterations: 3
  max_mean_cost: 0.25
iterations: []
"""
