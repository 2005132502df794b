"""The real Claude Code CLI (2.1.197) driven through ``ooda run``, ``pytest -m live``
and the ``ooda_runner`` fixture, against the offline agent mock (conftest.py): the
files it writes are recorded and replayed, its cost and tool calls are read from its
own stream-json, verification commands pass and fail, a budget stops a run, and a
crash mid-stream is a reasoned failure. About ten CLI invocations in all (~1 s each).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from claude_mock import ANSWER_COST, CLAUDE

from pytest_ooda.scenario import load_scenario, save_scenario
from pytest_ooda.scenario.verify import CommandCheck, ToolExpect

if TYPE_CHECKING:
    from collections.abc import Callable

    from claude_mock import AgentMock

ROOT = Path(__file__).resolve().parents[2]
CONFIG = f"""\
loop:
  iteration_timeout: 120
  ai_cmd: "{CLAUDE}"
procedures:
  build:
    act:
      - content: "Write hello.py, run it, and say <promise>SUCCESS</promise> when it works."
"""

WRITE = {
    "text": "Writing hello.py.",
    "tool": "Write",
    "input": {"file_path": "hello.py", "content": "print('Hello, mock!')\n"},
}
RUN = {"tool": "Bash", "input": {"command": "python3 hello.py", "description": "Run it"}}
EDIT = {
    "tool": "Edit",
    "read_first": True,
    "input": {"file_path": "hello.py", "old_string": "mock", "new_string": "agent"},
}


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "ooda-config.yml").write_text(CONFIG, encoding="utf-8")
    return project


def _ooda(
    project: Path, mock: AgentMock, *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OODA_LOOP_")}
    for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL"):
        env.pop(name, None)
    env.update(mock.env())
    env["OODA_CONFIG_HOME"] = str(project / "no-global-config")
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "run", "build", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_ooda_run_records_what_claude_did_and_replays_it(
    tmp_path: Path, agent_mock: Callable[..., AgentMock]
) -> None:
    mock = agent_mock(
        [
            [WRITE, RUN, {"text": "Wrote and ran it; one more pass."}],
            [EDIT, RUN, {"text": "Greeting fixed.\n<promise>SUCCESS</promise>"}],
        ]
    )
    project = _project(tmp_path)
    (project / "rec.yml").write_text(
        textwrap.dedent(
            """\
            procedure: build
            expect:
              status: success
              tools: {called: [Write, Read, Edit, Bash], not_called: [WebFetch],
                      bash_matches: "^python3 hello", max_calls: 6}
              commands:
                - run: python3 hello.py
                  output_contains: Hello, agent!
            """
        ),
        encoding="utf-8",
    )
    done = _ooda(project, mock, "--record", "rec.yml", "-n", "3", "--verbose")
    assert done.returncode == 0, done.stderr
    # Live: the CLI's stream rendered, never raw JSON.
    assert "→ Write: " in done.stdout
    assert "→ Bash: python3 hello.py" in done.stdout
    assert '"type":' not in done.stdout
    assert "scenario expectation not met" not in done.stderr
    assert (project / "hello.py").read_text() == "print('Hello, agent!')\n"
    # Cost and tokens, from the CLI's own report: 3 + 4 answers (Edit reads first).
    assert f"tokens=7350 cost=${7 * ANSWER_COST:.4f}" in done.stderr
    recording = load_scenario(project / "rec.yml")
    first, second = recording.iterations
    assert first.files == {"hello.py": "print('Hello, mock!')\n"}
    assert second.files == {"hello.py": "print('Hello, agent!')\n"}
    assert first.tool_calls is not None
    assert second.tool_calls is not None
    assert [(c.name, c.summary, c.ok) for c in first.tool_calls] == [
        ("Write", "hello.py", True),
        ("Bash", "python3 hello.py", True),
    ]
    assert [c.name for c in second.tool_calls] == ["Read", "Edit", "Bash"]
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.output_tokens) == (3000, 150)
    assert first.usage.cost == pytest.approx(3 * ANSWER_COST)
    assert first.turns == 3
    assert first.model is not None
    assert first.model.startswith("claude-")
    assert recording.recorded is not None
    assert recording.recorded.cost == pytest.approx(7 * ANSWER_COST)
    assert mock.sessions() == [1, 2]

    # The replay starts nothing: the files come from the recording, the tool calls too,
    # and the verification command runs in the replay's own workspace.
    (project / "hello.py").unlink()
    replayed = _ooda(project, mock, "--replay", "rec.yml")
    assert replayed.returncode == 0, replayed.stderr
    assert "scenario expectation not met" not in replayed.stderr
    assert not (project / "hello.py").exists()
    assert mock.sessions() == [1, 2]
    assert recording.expect is not None
    wrong = replace(
        recording.expect,
        tools=ToolExpect(not_called=("Edit",)),
        commands=(CommandCheck("python3 hello.py", output_contains=("Goodbye",)),),
    )
    save_scenario(replace(recording, expect=wrong))
    failing = _ooda(project, mock, "--replay", "rec.yml")
    assert (
        "warning: scenario expectation not met: command 'python3 hello.py': its output does "
        "not contain 'Goodbye'\n      | Hello, agent!" in failing.stderr
    )
    assert "expect.tools: Edit was called 1 time(s), expected never: hello.py" in failing.stderr


def test_a_budget_stops_a_run_of_the_real_cli(
    tmp_path: Path, agent_mock: Callable[..., AgentMock]
) -> None:
    mock = agent_mock([[RUN, {"text": "Still working."}]])  # every session: 2 answers
    project = _project(tmp_path)
    done = _ooda(
        project, mock, "--max-cost", "0.02", "-n", "5", "--record", "budget.yml", "--quiet"
    )
    assert done.returncode == 1, done.stderr
    spent = 4 * ANSWER_COST  # two iterations of two answers: the second reaches $0.02
    reason = f"budget reached: the run cost ${spent:.4f}, max_cost is $0.02"
    assert f"warning: Loop aborted: {reason}" in done.stderr
    assert "Loop completed status=aborted iterations=2" in done.stderr
    assert mock.sessions() == [1, 2]  # the third iteration never started
    recording = load_scenario(project / "budget.yml")
    assert recording.recorded is not None
    assert (recording.recorded.status, recording.recorded.reason) == ("aborted", reason)
    assert recording.max_cost == 0.02
    replayed = _ooda(project, mock, "--replay", "budget.yml")
    assert replayed.returncode == 1
    assert "Loop completed status=aborted iterations=2" in replayed.stderr


def test_a_crash_mid_stream_is_a_failure_with_its_reason(
    tmp_path: Path, agent_mock: Callable[..., AgentMock]
) -> None:
    overloaded: dict[str, Any] = {**RUN, "fail": {"status": 529, "times": 5}}
    killed = {"tool": "Bash", "input": {"command": "kill -KILL $PPID"}}
    mock = agent_mock([[WRITE, overloaded, {"text": "never"}], [killed, {"text": "never"}]])
    project = _project(tmp_path)
    # The CLI's "API Error: 529" is its own word: taken here (as_errors), so the loop
    # retries it as the infrastructure's fault (by default it would be a failure).
    config = project / "ooda-config.yml"
    config.write_text(
        config.read_text().replace(
            "loop:\n", "loop:\n  retry: {count_agent_reported_errors: as_errors}\n", 1
        )
    )
    done = _ooda(project, mock, "-n", "2", "--verbose", "--record", "crash.yml")
    assert done.returncode == 3, done.stderr  # max-iters: both failed, threshold not reached
    assert "Traceback" not in done.stderr
    # The API failed past the CLI's own retry; the CLI said so in its result (exit 1):
    # the infrastructure's fault, so the iteration is tried again rather than failed.
    assert "iteration 1: infrastructure error (overloaded: API Error: 529" in done.stderr
    assert "retry 1 of 2 in" in done.stderr
    # The retry and iteration 2: the CLI itself was killed, its stream stopping before
    # the result event — after it had printed, so that is the procedure's failure.
    assert (
        'reason="claude-stream-json: the stream ended without a result event (the CLI '
        'stopped mid-run)"' in done.stderr
    )
    assert (project / "hello.py").exists()  # the work before the crash is on disk
    recording = load_scenario(project / "crash.yml")
    first, second = recording.iterations
    assert first.exit_code == -9
    assert first.retries == 1
    assert second.exit_code == -9
    assert second.tool_calls is not None
    assert [c.name for c in second.tool_calls] == ["Bash"]
    assert second.error is not None
    # The recorded failures replay as failures, for the same reasons.
    replayed = _ooda(project, mock, "--replay", "crash.yml", "--verbose")
    assert replayed.returncode == 3
    assert replayed.stderr.count("status=failure") == 2


LIVE_SCENARIOS = {
    "writes.yml": """\
        procedure: build
        expect:
          status: success
          iterations: 1
          tools: {called: [Write, Bash], bash_matches: hello}
          commands:
            - run: python3 hello.py
              output_contains: Hello, mock!
              timeout: 30
        """,
    "wrong.yml": """\
        procedure: build
        expect:
          commands: [{run: "python3 hello.py | grep Goodbye"}]
        """,
    "costly.yml": """\
        procedure: build
        max_cost: 0.01
        expect: {status: aborted, iterations: 1}
        """,
}


def test_pytest_live_records_checks_and_replays_with_the_real_cli(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Items run in name order: costly.yml's one invocation works without succeeding (its
    # budget stops it); every later one writes, runs and succeeds.
    mock = agent_mock(
        [
            [WRITE, RUN, {"text": "Still working."}],
            [WRITE, RUN, {"text": "Done.\n<promise>SUCCESS</promise>"}],
        ]
    )
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / "no-global-config"))
    pytester.makefile(".yml", **{"ooda-config": CONFIG})
    for name, text in LIVE_SCENARIOS.items():
        path = pytester.path / "scenarios" / "build" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    live = pytester.runpytest_subprocess(
        "-m", "live", "-s", "-p", "no:cacheprovider",
        f"--ooda-ai-cmd={CLAUDE}", "--ooda-record-mode=once",
    )  # fmt: skip
    live.assert_outcomes(passed=2, failed=1)
    out = live.stdout.str()
    assert "→ Write: " in out  # -s: the agent's stream, rendered live
    assert "command 'python3 hello.py | grep Goodbye': exited 1, expected 0" in out
    # A line per finished run, then a row per scenario in the summary.
    live.stdout.fnmatch_lines(
        [f"ooda: build/writes: success status=success iterations=1 *cost=${3 * ANSWER_COST:.4f}*"]
    )
    assert "ooda: build/costly: success status=aborted iterations=1" in out
    summary = out.split("ooda live runs", 1)[1]
    live.stdout.fnmatch_lines(
        [f"build/writes  *1   1       0  100%  *${3 * ANSWER_COST:.4f}  success 1"],
        consecutive=False,
    )
    assert "build/costly " in summary
    writes = load_scenario(pytester.path / "scenarios" / "build" / "writes.yml")
    assert writes.iterations[0].tool_calls is not None
    assert [c.name for c in writes.iterations[0].tool_calls] == ["Write", "Bash"]
    assert writes.iterations[0].files == {"hello.py": "print('Hello, mock!')\n"}
    costly = load_scenario(pytester.path / "scenarios" / "build" / "costly.yml")
    assert costly.recorded is not None
    assert costly.recorded.reason is not None
    assert costly.recorded.reason.startswith("budget reached")
    assert mock.sessions() == [1, 2, 3]
    # The run that missed its command check is not recorded (once records only a run
    # that met every expectation): its replay would be red for ever.
    assert "not recorded: the run missed its expectations" in out
    assert load_scenario(pytester.path / "scenarios" / "build" / "wrong.yml").iterations == ()
    # Replays: nothing starts; tools and commands are checked against the recordings,
    # and the unrecorded scenario is skipped with the command that records it.
    replay = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "scenario")
    replay.assert_outcomes(passed=2, skipped=1)
    assert mock.sessions() == [1, 2, 3]


def test_ooda_runner_reports_cost_tool_calls_and_permission_denials(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mock = agent_mock([[WRITE, RUN, {"text": "Done.\n<promise>SUCCESS</promise>"}]])
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / "no-global-config"))
    pytester.makefile(".yml", **{"ooda-config": CONFIG})
    pytester.makepyfile(
        test_agent=f"""
        import pytest

        @pytest.mark.live
        def test_unattended_flags_missing(ooda_runner):
            result = ooda_runner.run("build", max_iterations=1)
            # Claude Code exits 0 with its text even though every tool was denied.
            assert result.status == "success"
            assert [c.name for c in result.permission_denials] == ["Write", "Bash"]
            assert all(c.ok is False for c in result.tool_calls)
            assert result.cost == pytest.approx({3 * ANSWER_COST})
            assert result.total_tokens == 3150
        """
    )
    # The command without --permission-mode: what a user forgets.
    without_flags = "claude -p --no-session-persistence --output-format stream-json --verbose"
    result = pytester.runpytest_subprocess(
        "-m", "live", "-p", "no:cacheprovider", f"--ooda-ai-cmd={without_flags}"
    )
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "AgentWarning: procedure build: iteration 1: the agent was denied 2 tool calls" in out
    assert not (pytester.path / "hello.py").exists()
