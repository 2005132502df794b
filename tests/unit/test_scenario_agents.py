"""Scenarios with what agents report: the new keys read and written back, each mistake
located, ``expect.tools`` and ``expect.commands`` checked on replays, recordings that
carry tool calls, usage and how the run ended (redacted), and budgets on replay."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.backends.replay import ReplayBackend, ReplayStep
from pytest_ooda.config import Config, load_config
from pytest_ooda.errors import ScenarioError
from pytest_ooda.loop import LoopResult, run_procedure
from pytest_ooda.scenario import (
    load_scenario,
    load_scenario_text,
    save_scenario,
    scenario_from_result,
)
from pytest_ooda.scenario.replay import replay_scenario
from pytest_ooda.scenario.store import dump_scenario
from pytest_ooda.scenario.verify import CommandCheck, ToolExpect

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


def _config(tmp_path: Path) -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text("procedures:\n  build:\n    act:\n      - content: go\n", encoding="utf-8")
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)


def test_the_new_keys_load_and_write_back_the_same(tmp_path: Path) -> None:
    scenario = load_scenario_text(AGENT_SCENARIO, path=tmp_path / "s.yml")
    assert (scenario.max_cost, scenario.max_tokens) == (0.5, 90000)
    assert scenario.expect is not None
    assert scenario.expect.tools == ToolExpect(
        ("Write", "Bash"), ("WebFetch",), ("pytest", "^python3? "), 5
    )
    assert [c.run for c in scenario.expect.commands][1:] == ["test -f hello.py", "true"]
    assert scenario.expect.commands[1].timeout == 20
    (it,) = scenario.iterations
    assert it.usage == Usage(1000, 100, 0.0532, 40, 0)
    assert it.tool_calls is not None
    assert it.tool_calls[2] == ToolCall("Bash", "rm -rf /", False, "permission denied")
    assert scenario.recorded is not None
    assert scenario.recorded.cost == 0.0532
    again = load_scenario_text(dump_scenario(scenario), path=tmp_path / "s.yml")
    assert again == scenario


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("expect:\n  tools: {calld: [Bash]}\n", "2:11", "unknown key 'calld' in expect.tools"),
        ("expect:\n  tools: {bash_matches: '(unclosed'}\n", "2:25", "is not a regular expr"),
        (
            "expect:\n  tools: {called: [Bash], not_called: [Bash]}\n",
            "2:10",
            "Bash cannot be both called and not_called",
        ),
        ("expect:\n  tools: {max_calls: -1}\n", "2:22", "expected an integer >= 0"),
        ("expect:\n  tools: {called: ['']}\n", "2:20", "called[0]: a tool name cannot be empty"),
        ("expect:\n  commands: {run: x}\n", "2:13", "expect.commands: expected a list"),
        ("expect:\n  commands:\n    - exit_code: 1\n", "3:7", "expect.commands[0]: missing 'run'"),
        ("expect:\n  commands:\n    - run: x\n      timeout: 0\n", "4:16", "expected a number > 0"),
        ("expect:\n  commands:\n    - run: '  '\n", "3:12", "the command is empty"),
        ("expect:\n  commands: ['']\n", "2:14", "the command is empty"),
        ("max_cost: 0\n", "1:11", "max_cost: expected a number > 0"),
        ("max_tokens: 0.5\n", "1:13", "max_tokens: expected an integer"),
        ("recorded: {reason: x}\n", "1:11", "recorded: missing 'status'"),
        ("recorded: {status: done}\n", "1:20", "recorded.status: expected one of success"),
        (
            "iterations:\n  - usage: {input: 3}\n",
            "2:13",
            "unknown key 'input' in iterations[0].usage",
        ),
        (
            "iterations:\n  - tool_calls: [{summary: x}]\n",
            "2:18",
            "iterations[0].tool_calls[0]: missing 'name'",
        ),
        ("iterations:\n  - tool_calls: {name: x}\n", "2:17", "tool_calls: expected a list"),
        ("iterations:\n  - turns: many\n", "2:12", "iterations[0].turns: expected an integer"),
        (
            "iterations:\n  - tool_calls: [{name: x, ok: maybe}]\n",
            "2:32",
            "tool_calls[0].ok: expected true or false",
        ),
    ],
)
def test_mistakes_in_the_new_keys_are_located(body: str, where: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text("procedure: build\n" + body, path="s.yml")
    line, column = where.split(":")
    error = info.value
    assert (error.file, error.line, error.column) == ("s.yml", int(line) + 1, int(column)), error
    assert message in error.message


def _result(tmp_path: Path, *steps: ReplayStep) -> LoopResult:
    return run_procedure(
        _config(tmp_path),
        "build",
        backend=ReplayBackend(list(steps)),
        workdir=tmp_path,
        max_iterations=len(steps),
        handle_signals=False,
    )


def _calls(*calls: ToolCall) -> ReplayStep:
    return ReplayStep(output="x", tool_calls=calls, tools_reported=True)


def test_tool_expectations_check_what_ran(tmp_path: Path) -> None:
    result = _result(
        tmp_path,
        _calls(ToolCall("Write", "a.py"), ToolCall("Bash", "python -m pytest -q")),
        _calls(ToolCall("WebFetch", "https://x", ok=False, error="permission denied")),
    )
    assert ToolExpect(("Write", "Bash"), bash_matches=("pytest",), max_calls=3).check(result) == []
    problems = ToolExpect(
        called=("Edit", "WebFetch"),
        not_called=("WebFetch",),
        bash_matches=("ruff",),
        max_calls=2,
    ).check(result)
    assert problems == [
        "expect.tools: Edit was never called (tool calls: Write, Bash, WebFetch)",
        # A denied call did not run …
        "expect.tools: WebFetch was never called (tool calls: Write, Bash, WebFetch)",
        # … but the agent tried.
        "expect.tools: WebFetch was called 1 time(s), expected never: https://x",
        "expect.tools: no command matched 'ruff' (commands run: python -m pytest -q)",
        "expect.tools: 3 tool calls, expected at most 2 (tool calls: Write, Bash, WebFetch)",
    ]


def test_tool_expectations_need_a_format_that_lists_calls(tmp_path: Path) -> None:
    result = _result(tmp_path, ReplayStep(output="x"))
    (problem,) = ToolExpect(called=("Bash",)).check(result)
    assert "the run did not report its tool calls" in problem
    assert "ai_output: claude-stream-json or codex-json" in problem
    empty = _result(tmp_path, _calls())
    assert ToolExpect(not_called=("Bash",), max_calls=0).check(empty) == []
    assert ToolExpect(bash_matches=("x",)).check(empty) == [
        "expect.tools: no command matched 'x' (commands run: none)"
    ]


def test_a_verification_command_passes_and_fails_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text("print('hi')\n", encoding="utf-8")
    assert (
        CommandCheck("python3 hello.py | tr a-z A-Z", output_contains=("HI",)).check(tmp_path)
        is None
    )
    problem = CommandCheck(
        "echo first; echo 'tests failed'; exit 3", output_contains=("passed",)
    ).check(tmp_path)
    assert problem == (
        "command \"echo first; echo 'tests failed'; exit 3\": exited 3, expected 0; its output "
        "does not contain 'passed'\n      | first\n      | tests failed"
    )
    assert CommandCheck("exit 1", exit_code=1).check(tmp_path) is None
    assert "<no output>" in (CommandCheck("false").check(tmp_path) or "")
    assert "does not exist" in (CommandCheck("true").check(tmp_path / "gone") or "")


def test_a_hanging_command_is_killed_with_its_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    check = CommandCheck(f"sleep 60 & echo $! > {pidfile}; echo started; wait", timeout=0.5)
    started = time.monotonic()
    problem = check.check(tmp_path)
    assert time.monotonic() - started < 10
    assert problem is not None
    assert problem.startswith(
        f"command {check.run!r}: timed out after 0.5s (its process group was killed)"
    )
    assert "| started" in problem
    assert not _alive(int(pidfile.read_text()))


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped, as PID 1 of a container may leave
    it, is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_expect_runs_commands_after_the_checks_and_needs_a_workspace(tmp_path: Path) -> None:
    scenario = load_scenario_text(
        "procedure: build\nexpect:\n  commands: ['test -f made.txt']\n"
        "iterations:\n  - output: x\n    files: {made.txt: y}\n"
    )
    result = _result(tmp_path, scenario.iterations[0].to_step())
    assert scenario.check(result, tmp_path) == []
    assert scenario.check(result, None) == [
        "verification commands need a workspace, but the run had none"
    ]


def test_a_recording_carries_what_the_agent_reported_relative_and_redacted(
    tmp_path: Path,
) -> None:
    secret = "sk-ant-api03-AbCdEf0123456789xyzXYZ_-q"
    calls = (
        ToolCall("Write", f"{tmp_path}/src/app.py", ok=True),
        ToolCall("Bash", f"curl -H 'x-api-key: {secret}' http://x", ok=False, error="exit 7"),
    )
    result = _result(
        tmp_path,
        ReplayStep(
            output="x", usage=Usage(10, 2, 0.001), tool_calls=calls, tools_reported=True,
            turns=4, model="m", error="claude-stream-json: line 9 is not JSON (x)",
        ),
        ReplayStep(output="y", usage=Usage(10, 2, 0.001)),
    )  # fmt: skip
    recorded = scenario_from_result(load_scenario_text("procedure: build\n"), result)
    first, second = recorded.iterations
    assert first.tool_calls is not None
    assert first.tool_calls[0].summary == "src/app.py"
    assert first.error == "claude-stream-json: line 9 is not JSON (x)"
    assert second.tool_calls is None  # not reported: not "none were made"
    assert recorded.recorded is not None
    assert (recorded.recorded.status, recorded.recorded.tokens) == ("max-iters", 24)
    assert recorded.recorded.reason is None
    path = save_scenario(recorded, tmp_path / "rec.yml")
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    assert "summary: 'curl -H ''x-api-key: <redacted>'' http://x'" in text
    back = load_scenario(path)
    assert back.iterations[0].usage == Usage(10, 2, 0.001)
    assert back.iterations[0].turns == 4
    assert back.iterations[1].tool_calls is None


def test_a_budget_stop_is_recorded_and_replays_the_same(tmp_path: Path) -> None:
    spend = Usage(1000, 100, 0.05)
    live = run_procedure(
        _config(tmp_path),
        "build",
        backend=ReplayBackend([ReplayStep(output="w", usage=spend)] * 5),
        workdir=tmp_path,
        max_cost=0.08,
        handle_signals=False,
    )
    assert (live.status, live.iterations) == ("aborted", 2)
    base = load_scenario_text("procedure: build\nmax_cost: 0.08\n", path=tmp_path / "b.yml")
    recorded = scenario_from_result(base, live)
    assert recorded.recorded is not None
    assert recorded.recorded.reason == "budget reached: the run cost $0.1000, max_cost is $0.08"
    path = save_scenario(recorded)
    assert "reason: 'budget reached: the run cost $0.1000, max_cost is $0.08'" in (
        path.read_text(encoding="utf-8")
    )
    replayed = replay_scenario(_config(tmp_path), load_scenario(path), workdir=tmp_path)
    assert (replayed.result.status, replayed.result.iterations) == ("aborted", 2)
    assert replayed.problems == ()
    # A tighter budget given for the replay wins; a looser one does not loosen it.
    tighter = replay_scenario(
        _config(tmp_path), load_scenario(path), workdir=tmp_path, max_cost=0.01
    )
    assert tighter.result.iterations == 1
    looser = replay_scenario(_config(tmp_path), load_scenario(path), workdir=tmp_path, max_cost=9)
    assert looser.result.iterations == 2


def test_a_recorded_error_fails_its_iteration_on_replay(tmp_path: Path) -> None:
    scenario = load_scenario_text(
        "procedure: build\nfailure_threshold: 1\niterations:\n"
        "  - output: 'partial <promise>SUCCESS</promise>'\n"
        "    error: 'claude-stream-json: the stream ended without a result event'\n"
    )
    replayed = replay_scenario(_config(tmp_path), scenario, workdir=tmp_path, drift=False)
    assert replayed.result.status == "aborted"
    assert replayed.result.records[0].reason == (
        "claude-stream-json: the stream ended without a result event"
    )


def test_an_existing_scenario_file_keeps_its_tool_checks(tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    path.write_text(AGENT_SCENARIO, encoding="utf-8")
    scenario = load_scenario(path)
    (tmp_path / "w").mkdir()
    replayed = replay_scenario(_config(tmp_path), scenario, workdir=tmp_path / "w", drift=False)
    assert replayed.problems == ()
    assert Path(tmp_path / "w" / "hello.py").read_text(encoding="utf-8") == "print('hi')\n"


def test_small_cases_of_the_checks(tmp_path: Path) -> None:
    from pytest_ooda.loop import LoopResult, TimingStats
    from pytest_ooda.loop.budget import unenforced_warning

    empty = _result(tmp_path, _calls())
    assert ToolExpect(called=("Bash",)).check(empty) == [
        "expect.tools: Bash was never called (no tool calls)"
    ]
    check = CommandCheck("make test", exit_code=2, timeout=9, output_contains=("a", "b"))
    assert check.to_yaml() == {
        "run": "make test",
        "exit_code": 2,
        "timeout": 9,
        "output_contains": ["a", "b"],
    }
    none_ran = LoopResult("build", "aborted", (), TimingStats(), 0.0, 1, 3, max_cost=1.0)
    assert unenforced_warning(none_ran) is None
