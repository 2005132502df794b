"""Scenario replay items with agent expectations: ``expect.tools`` against recorded
tool calls and ``expect.commands`` in the replay's workspace, passing and failing with
readable reports, and commands that write never leaking into other replays."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ooda_project import Project

RECORDED = """\
iterations:
  - output: "Done.\\n<promise>SUCCESS</promise>\\n"
    files: {hello.py: "print('hi')\\n"}
    usage: {input_tokens: 100, output_tokens: 10, cost: 0.002}
    tool_calls:
      - {name: Write, summary: hello.py, ok: true}
      - {name: Bash, summary: python3 hello.py, ok: true}
"""


def test_tools_and_commands_hold_on_replay(project: Project) -> None:
    project.scenario(
        "ok",
        "procedure: greet\nexpect:\n  tools: {called: [Write], bash_matches: 'hello\\.py'}\n"
        "  commands: [{run: python3 hello.py, output_contains: hi}]\n" + RECORDED,
    )
    project.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)


def test_unmet_tool_and_command_expectations_fail_the_replay(project: Project) -> None:
    project.scenario(
        "bad",
        "procedure: greet\nexpect:\n  tools: {called: [Edit], not_called: [Bash]}\n"
        "  commands:\n    - {run: 'python3 hello.py; exit 4', exit_code: 0}\n" + RECORDED,
    )
    result = project.run("-k", "scenario")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenario greet/bad (scenarios/greet/bad.yml) replay: status=success, 1 iteration(s)",
            "  - expect.tools: Edit was never called (tool calls: Write, Bash)",
            "  - expect.tools: Bash was called 1 time(s), expected never: python3 hello.py",
            "  - command 'python3 hello.py; exit 4': exited 4, expected 0",
            "      | hi",
            "  iter  signal   outcome  exit  output (tail)",
            "     1  SUCCESS  success     0  *",
            "        tools: Write hello.py · Bash python3 hello.py",
        ]
    )


def test_a_recording_without_tool_calls_says_why_tools_cannot_be_checked(
    project: Project,
) -> None:
    project.scenario(
        "old",
        "procedure: greet\nexpect: {tools: {called: [Bash]}}\n"
        "iterations:\n  - output: '<promise>SUCCESS</promise>'\n",
    )
    result = project.run("-k", "scenario")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(["  - expect.tools: the run did not report its tool calls *"])


def test_commands_that_write_never_leak_into_other_replays(project: Project) -> None:
    body = "iterations:\n  - output: '<promise>SUCCESS</promise>'\n"
    project.scenario(
        "a-writes", "procedure: greet\nexpect: {commands: [touch leaked.txt]}\n" + body
    )
    project.scenario(
        "b-checks", "procedure: greet\nexpect: {commands: ['test ! -e leaked.txt']}\n" + body
    )
    project.scenario("c-plain", "procedure: greet\nexpect: {status: success}\n" + body)
    project.run("-k", "scenario", "-p", "no:randomly").assert_outcomes(passed=3, deselected=9)
    assert not (project.path / "leaked.txt").exists()


def test_a_bad_command_entry_is_a_located_failure(project: Project) -> None:
    project.scenario(
        "broken", "procedure: greet\nexpect:\n  commands:\n    - {exit_code: 1}\n" + RECORDED
    )
    result = project.run("-k", "scenario")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        ["scenarios/greet/broken.yml:4:7: expect.commands[[]0]: missing 'run'", "  > 4 | *"]
    )
