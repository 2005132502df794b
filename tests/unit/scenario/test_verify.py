"""A scenario's expectations (scenario/verify.py): checks, tool expectations, verification
commands."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends import ToolCall
from pytest_ooda.backends.replay import ReplayStep
from pytest_ooda.config import Config, load_config
from pytest_ooda.loop import LoopResult, run_procedure
from pytest_ooda.scenario import (
    assert_expectations,
    load_scenario,
    load_scenario_text,
)
from pytest_ooda.scenario.verify import CommandCheck, ToolExpect

from .helpers import (
    REPEAT_TEXT,
    SAMPLE,
    _alive,
    _calls,
    _replay_result,
    _scripted_result,
    write,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_expect_checks(config: Config, tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("hello alpha")
    (tmp_path / "tmp.txt").write_text("")
    scenario = load_scenario_text(
        "procedure: build\nexpect:\n  status: success\n  iterations: {min: 2, max: 3}\n"
        "  signals: [none, SUCCESS]\n"
        "  files: {AGENTS.md: {contains: [alpha, beta]}, tmp.txt: absent, gone.md: exists}\n"
    )
    result = _scripted_result(config, ["<promise>SUCCESS</promise>"], max_iterations=3)
    problems = scenario.check(result, tmp_path)
    assert problems == [
        "expected 2..3 iterations, ran 1",
        "expected signals ['none', 'SUCCESS'], got ['SUCCESS']",
        "file AGENTS.md: expected to contain 'beta'",
        "file tmp.txt: expected to be absent, but it exists",
        "file gone.md: expected to exist, but it is missing",
    ]
    with pytest.raises(AssertionError) as info:
        assert_expectations(scenario, result, tmp_path)
    assert "5 expectation(s) not met" in str(info.value)
    assert "iteration 1: success" in str(info.value)


def test_expect_met(config: Config, tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SAMPLE))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("alpha beta")
    result = run_procedure(
        config, "build", backend=scenario.replay_backend(), max_iterations=3, workdir=workspace
    )
    assert scenario.check(result, workspace) == []
    assert (workspace / "AGENTS.md").read_text() == "# agents\n"


def test_tool_expectations_check_what_ran(tmp_path: Path) -> None:
    result = _replay_result(
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
    result = _replay_result(tmp_path, ReplayStep(output="x"))
    (problem,) = ToolExpect(called=("Bash",)).check(result)
    assert "the run did not report its tool calls" in problem
    assert "ai_output: claude-stream-json or codex-json" in problem
    empty = _replay_result(tmp_path, _calls())
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


def test_expect_runs_commands_after_the_checks_and_needs_a_workspace(tmp_path: Path) -> None:
    scenario = load_scenario_text(
        "procedure: build\nexpect:\n  commands: ['test -f made.txt']\n"
        "iterations:\n  - output: x\n    files: {made.txt: y}\n"
    )
    result = _replay_result(tmp_path, scenario.iterations[0].to_step())
    assert scenario.check(result, tmp_path) == []
    assert scenario.check(result, None) == [
        "verification commands need a workspace, but the run had none"
    ]


def test_small_cases_of_the_checks(tmp_path: Path) -> None:
    from pytest_ooda.loop import TimingStats
    from pytest_ooda.loop.budget import unenforced_warning

    empty = _replay_result(tmp_path, _calls())
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


def test_a_single_run_never_checks_them(ooda_script: object) -> None:
    from pytest_ooda.loop import run_procedure

    scenario = load_scenario_text(REPEAT_TEXT.replace("  status: success\n", ""), path="s.yml")
    result = run_procedure(
        load_config(None, global_config=False, env={}),
        "build",
        backend=ooda_script(["no", "no", "no", "no"]),  # type: ignore[operator]
        max_iterations=4,
    )
    # 4 iterations > max_mean_iterations, no success: not this run's business.
    assert scenario.check(result) == []


def test_a_file_check_never_reads_through_a_link_out_of_the_workspace(tmp_path: Path) -> None:
    from pytest_ooda.scenario.verify import check_file

    secret = tmp_path / "hidden-key"
    secret.write_text("HOST-SECRET\n")
    workspace = tmp_path / "ws"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "PLAN.md").symlink_to(secret)
    (workspace / "ok.txt").symlink_to("/etc/hostname")
    (workspace / "gone.txt").symlink_to(tmp_path / "nowhere")
    (workspace / "docs" / "real.md").write_text("inside\n")
    (workspace / "inner.md").symlink_to("docs/real.md")
    (workspace / "up").symlink_to("..")
    outside = "file PLAN.md: links outside the workspace (not read)"
    # Whatever the check expects, a link out fails it: a passing `contains: <the
    # secret>` and a failing `contains: NOTTHERE` would both tell what it holds.
    for contains in (("HOST-SECRET",), ("NOTTHERE",), ()):
        assert check_file(workspace, "PLAN.md", exists=True, contains=contains) == outside
    assert check_file(workspace, "PLAN.md", exists=False, contains=()) == outside
    assert check_file(workspace, "ok.txt", exists=True, contains=()) == (
        "file ok.txt: links outside the workspace (not read)"
    )
    assert "links outside" in (check_file(workspace, "gone.txt", exists=None, contains=()) or "")
    assert "links outside" in (
        check_file(workspace, "up/hidden-key", exists=True, contains=()) or ""
    )
    # A link that stays inside is followed like the file it names.
    assert check_file(workspace, "inner.md", exists=True, contains=("inside",)) is None
    assert check_file(workspace, "docs/real.md", exists=True, contains=("inside",)) is None
    assert check_file(workspace, "missing.md", exists=True, contains=()) == (
        "file missing.md: expected to exist, but it is missing"
    )


def test_protected_files_are_put_back_before_the_checks_and_named(tmp_path: Path) -> None:
    import shutil

    # The check the scenario's author wrote, and an agent that rewrote it to pass.
    source = tmp_path / "source"
    (source / "tests").mkdir(parents=True)
    (source / "tests" / "check.sh").write_text("grep -q fixed app.txt\n", encoding="utf-8")
    (source / "app.txt").write_text("broken\n", encoding="utf-8")
    workspace = tmp_path / "workspace"
    shutil.copytree(source, workspace)
    text = (
        "procedure: build\nexpect:\n  protect: [tests/]\n"
        "  files: {tests/check.sh: {contains: grep}}\n"
        "  commands: ['sh tests/check.sh']\n"
        "iterations:\n  - output: x\n    files: {tests/check.sh: 'exit 0'}\n"
    )
    scenario = load_scenario_text(text)
    result = _replay_result(workspace, scenario.iterations[0].to_step())
    assert (workspace / "tests" / "check.sh").read_text() == "exit 0"
    assessment = scenario.assess(result, workspace, source=source)
    assert assessment.protected_changes == ("tests/check.sh",)
    [problem] = assessment.problems
    assert problem.startswith("command 'sh tests/check.sh': exited 1, expected 0")
    # The file checks saw the author's file too (they passed).
    assert (workspace / "tests" / "check.sh").read_text() == "grep -q fixed app.txt\n"
    # Without protect the forged check decides: the unfixed app passes.
    unprotected = load_scenario_text(
        text.replace("  protect: [tests/]\n", "").replace(
            "  files: {tests/check.sh: {contains: grep}}\n", ""
        )
    )
    (workspace / "tests" / "check.sh").write_text("exit 0", encoding="utf-8")
    outcome = unprotected.assess(result, workspace, source=source)
    assert (outcome.problems, outcome.protected_changes) == ([], ())
