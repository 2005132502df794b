"""Scenario replay: each expectation passing and failing, with readable reports; agent
expectations (``expect.tools`` against recorded tool calls, ``expect.commands`` in the
replay's workspace), and commands that write never leaking into other replays."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

TWO_STEPS = """\
iterations:
  - output: "Greeted Ann."
  - output: "Everyone greeted.\\n<promise>SUCCESS</promise>\\n"
"""


def run_scenario(project: Project, body: str, *args: str) -> pytest.RunResult:
    project.scenario("case", "procedure: greet\n" + body)
    return project.run("-k", "scenario", *args)


@pytest.mark.parametrize(
    "expect",
    [
        "expect: {status: success}",
        "expect: {iterations: 2}",
        "expect: {iterations: {min: 1, max: 3}}",
        "expect: {signals: [none, SUCCESS]}",
        "expect: {status: success, iterations: 2, signals: [none, SUCCESS]}",
    ],
)
def test_met_expectations_pass(project: Project, expect: str) -> None:
    run_scenario(project, expect + "\n" + TWO_STEPS).assert_outcomes(passed=1, deselected=7)


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("expect: {status: max-iters}", "  - expected status 'max-iters', got 'success'"),
        ("expect: {iterations: 3}", "  - expected 3 iteration(s), ran 2"),
        ("expect: {iterations: {min: 3, max: 4}}", "  - expected 3..4 iterations, ran 2"),
        (
            "expect: {signals: [SUCCESS, none]}",
            "  - expected signals ['SUCCESS', 'none'], got ['none', 'SUCCESS']",
        ),
    ],
)
def test_unmet_expectations_fail_with_the_iteration_table(
    project: Project, expect: str, message: str
) -> None:
    result = run_scenario(project, expect + "\n" + TWO_STEPS)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenario greet/case (scenarios/greet/case.yml) replay: status=success, 2 iteration(s)",
            message,
            "",
            "  iter  signal   outcome  exit  output (tail)",
            "     1  none     ok          0  Greeted Ann.",
            "     2  SUCCESS  success     0  Everyone greeted.",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_failure_until_abort_reports_exit_codes_and_output_tail(project: Project) -> None:
    body = """\
failure_threshold: 2
expect: {status: success}
iterations:
  - output: "tests fail\\nline 2\\n<promise>FAILURE</promise>\\n"
    exit_code: 0
  - output: "crashed"
    exit_code: 3
"""
    result = run_scenario(project, body)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "*replay: status=aborted, 2 iteration(s)",
            "  - expected status 'success', got 'aborted'",
            "*",
            "  iter  signal   outcome  exit  output (tail)",
            "     1  FAILURE  failure     0  tests fail",
            "                                line 2",
            "                                <promise>FAILURE</promise>",
            "        reason: *",
            "     2  none     failure     3  crashed",
            "        reason: *",
        ]
    )


def test_workspace_file_checks(project: Project) -> None:
    project.write("scenarios/greet/ws/README.md", "Hello\n")
    body = """\
workspace: ws
expect:
  status: success
  files:
    README.md: exists
    GREETED.md: {contains: "Ann"}
    LOG.md: absent
iterations:
  - output: "<promise>SUCCESS</promise>"
    files: {GREETED.md: "Ann was greeted\\n"}
"""
    run_scenario(project, body).assert_outcomes(passed=1, deselected=7)
    failing = body.replace('{contains: "Ann"}', '{contains: "Bob"}')
    result = run_scenario(project, failing)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(["  - file GREETED.md: expected to contain 'Bob'"])
    # The scenario's own workspace is never modified: replay runs in a temp copy.
    assert not (project.path / "scenarios/greet/ws/GREETED.md").exists()


def test_replay_asking_for_too_many_iterations_is_a_clear_failure(project: Project) -> None:
    body = """\
max_iterations: 3
expect: {status: max-iters}
iterations:
  - output: "working"
  - output: "still working"
"""
    result = run_scenario(project, body)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/case.yml: scenario 'greet/case' has 2 iterations, "
            "loop asked for a 3rd",
            "*",
            "  iter  signal   exit  output (tail)",
            "     1  none        0  working",
            "     2  none        0  still working",
        ]
    )
    assert "pytest_ooda/" not in result.stdout.str()


def test_no_signal_until_max_iterations(project: Project) -> None:
    body = """\
max_iterations: 2
expect: {status: max-iters, iterations: 2, signals: [none, none]}
iterations:
  - output: "working"
  - output: "still working"
"""
    run_scenario(project, body).assert_outcomes(passed=1, deselected=7)


def test_malformed_scenario_is_a_located_failure(project: Project) -> None:
    result = run_scenario(project, "expect: {status: done}\niterations: []\n")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(["scenarios/greet/case.yml:2:*status*"])
    assert "INTERNALERROR" not in result.stdout.str()


def test_scenario_for_another_procedure_is_rejected(project: Project) -> None:
    project.scenario("case", "procedure: build\niterations: []\n")
    result = project.run("-k", "scenario")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "*scenario is stored under procedure 'greet' but declares procedure: build*",
            "  move it to the build/ scenario folder or fix `procedure:`",
        ]
    )


def test_the_ai_command_is_never_started_in_replay(project: Project) -> None:
    marker = project.path / "started"
    project.write(
        "ooda-config.yml",
        (project.path / "ooda-config.yml").read_text() + f'loop:\n  ai_cmd: "touch {marker}"\n',
    )
    run_scenario(project, "expect: {status: success}\n" + TWO_STEPS).assert_outcomes(
        passed=1, deselected=7
    )
    assert not marker.exists()


def test_missing_workspace_is_a_located_failure(project: Project) -> None:
    result = run_scenario(project, "workspace: nope\n" + TWO_STEPS)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/case.yml:2:1: workspace directory not found: nope (resolved to *)",
            "  workspace is relative to the scenario file's directory",
            "*",
            "  > 2 | workspace: nope",
        ]
    )


def test_unrecorded_scenario_is_skipped_saying_how_to_record_it(project: Project) -> None:
    result = run_scenario(project, "expect: {status: success}\niterations: []\n", "-rs")
    result.assert_outcomes(skipped=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED * scenarios/greet/case.yml:1: scenario greet/case is not recorded yet "
            "(iterations: *): record it with  pytest -m live --ooda-record-mode=once "
            "'ooda-config.yml::greet::live[[]case[]]'*",
        ]
    )


def test_workspace_outside_the_project_is_a_located_failure(project: Project) -> None:
    # The check is on the path as written: ``..`` out of the rootdir, or an absolute path.
    for workspace in ("../../..", "/tmp"):
        result = run_scenario(project, f"workspace: {workspace}\n" + TWO_STEPS)
        result.assert_outcomes(failed=1, deselected=7)
        result.stdout.fnmatch_lines(
            [
                f"scenarios/greet/case.yml:2:1: workspace '{workspace}' is outside the project (*)",
                "  keep scenario workspaces inside the project*",
                "*",
                f"  > 2 | workspace: {workspace}",
            ]
        )


def test_workspace_elsewhere_in_the_project_is_fine(project: Project) -> None:
    project.write("fixtures/repo/README.md", "Hello\n")
    body = "workspace: ../../fixtures/repo\nexpect: {files: {README.md: {contains: Hello}}}\n"
    run_scenario(project, body + TWO_STEPS).assert_outcomes(passed=1, deselected=7)


def test_replayed_file_change_outside_the_workspace_is_located(project: Project) -> None:
    body = (
        "iterations:\n"
        "  - output: Greeted Ann.\n"
        "  - output: <promise>SUCCESS</promise>\n"
        "    files: {../escaped.txt: nope}\n"
    )
    result = run_scenario(project, body)
    result.assert_outcomes(failed=1, deselected=7)
    # Rejected when the scenario loads (at the key) or, failing that, when the replay
    # applies it (at the iteration): either way at a line of the scenario file.
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/case.yml:[45]*: iterations[[]1]*'../escaped.txt'*",
            "*",
            "  > [45] |*",
        ]
    )
    assert "pytest_ooda/" not in result.stdout.str()
    assert not (project.path / "scenarios/escaped.txt").exists()


def test_two_files_with_one_scenario_name_fail_instead_of_clashing(project: Project) -> None:
    project.scenario("case", "procedure: greet\n" + TWO_STEPS)
    project.write("scenarios/greet/case.yaml", "procedure: greet\n" + TWO_STEPS)
    result = project.run("-v", "-m", "live or not live", "-k", "case")
    # One item per kind and name, so node ids stay unique (-k, --lf and xdist rely on it).
    result.stdout.fnmatch_lines(["*collected 8 items*"])
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/case.yml: more than one scenario file is named 'case': "
            "case.yaml, case.yml",
            "  scenario names must be unique per procedure; rename or remove one",
        ]
    )


def test_scenarios_under_a_misspelt_procedure_folder_are_reported(project: Project) -> None:
    project.scenario("case", "procedure: greet\n" + TWO_STEPS, procedure="gret")
    project.write("scenarios/fixtures/repo/README.md", "not a scenario folder\n")
    project.write("scenarios/loose.yml", "procedure: greet\n" + TWO_STEPS)
    result = project.run("-k", "not prompt")
    # An error in an item of its own, not only a warning: the session fails.
    result.assert_outcomes(passed=1, failed=2, deselected=5)
    result.stdout.fnmatch_lines(
        [
            "scenarios/gret/case.yml:1: scenarios/gret/ holds 1 scenario file(s) that never "
            "run: no collected procedure is named 'gret'",
            "  did you mean 'greet'? (rename the folder)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "scenarios/loose.yml:1:1: scenarios/loose.yml never runs: a scenario file belongs "
            "in the folder of the procedure it tests, not beside the folders",
            "  move it to scenarios/<procedure>/loose.yml",
        ]
    )
    result.stdout.fnmatch_lines(["*FAILED ooda-config.yml::scenarios[[]gret[]]*"])
    result.stdout.fnmatch_lines(["*FAILED ooda-config.yml::scenarios[[]loose.yml[]]*"])
    # Naming a file runs part of the tree: the folder may belong to what was left out.
    assert "scenarios[" not in project.run("ooda-config.yml").stdout.str()
    # Under xdist every worker collects the same items.
    project.run("-k", "not prompt", "-n", "2").assert_outcomes(passed=1, failed=2)


def test_control_characters_in_outputs_are_shown_escaped(project: Project) -> None:
    body = (
        "expect: {status: success}\n"
        "iterations:\n"
        '  - output: "\\x1b[2J cleared \\u202e reversed \\x00 héllo 😀"\n'
        "    exit_code: 3\n"
    )
    result = run_scenario(project, body + "max_iterations: 1\n")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        ["     1  none     failure     3  \\x1b[[]2J cleared \\u202e reversed \\x00 héllo 😀"]
    )
    assert "\x1b[2J" not in result.stdout.str()


def test_lone_surrogate_in_an_output_is_located(project: Project) -> None:
    result = run_scenario(project, 'iterations:\n  - output: "half \\ud800 a pair"\n')
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/case.yml:3: iterations[[]0]: the text holds '\\ud800', which is "
            "not a character (a lone surrogate)",
        ]
    )
    assert "pytest_ooda/" not in result.stdout.str()


def test_replayed_file_change_through_a_symlink_out_of_the_workspace_is_located(
    project: Project,
) -> None:
    project.write("scenarios/greet/repo/README.md", "Hello\n")
    (project.path / "scenarios/greet/repo/out").symlink_to(project.path)
    body = (
        "workspace: repo\n"
        "iterations:\n"
        "  - output: Greeted Ann.\n"
        "  - output: <promise>SUCCESS</promise>\n"
        "    files: {out/escaped.txt: nope}\n"
    )
    result = run_scenario(project, body)
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/case.yml:5: iterations[[]1]: replayed file change "
            "'out/escaped.txt' points outside the workspace",
        ]
    )
    assert "pytest_ooda/" not in result.stdout.str()
    assert not (project.path / "escaped.txt").exists()


def test_replays_with_files_start_from_a_clean_workspace_each(project: Project) -> None:
    # Replays share one working directory that is emptied in between: nothing the first
    # scenario wrote may be seen by the second.
    project.write("scenarios/greet/repo/README.md", "Hello\n")
    writes = (
        "workspace: repo\n"
        "iterations:\n"
        "  - output: <promise>SUCCESS</promise>\n"
        "    files: {LEFT.md: behind, sub/deep.md: x}\n"
    )
    checks = (
        "workspace: repo\n"
        "expect: {files: {LEFT.md: absent, sub: absent, README.md: {contains: Hello}}}\n"
        "iterations:\n"
        "  - output: <promise>SUCCESS</promise>\n"
    )
    project.scenario("a-writes", "procedure: greet\n" + writes)
    project.scenario("b-checks", "procedure: greet\n" + checks)
    project.run("-k", "scenario", "-p", "no:randomly").assert_outcomes(passed=2, deselected=8)
    assert not (project.path / "scenarios/greet/repo/LEFT.md").exists()


# --------------------------------------------------------------------------- agents


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


def test_a_file_with_three_mistakes_reports_the_three_in_one_run(project: Project) -> None:
    result = run_scenario(
        project,
        "expect:\n  status: sucess\n  files: {HELLO.md: exits}\nmax_iterations: -1\n" + TWO_STEPS,
    )
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/case.yml:3:11: expect.status: expected one of *, got 'sucess'",
            "  did you mean 'success'?",
            "*",
            "scenarios/greet/case.yml:4:21: expect.files*HELLO.md*: * got 'exits'",
            "  did you mean 'exists'?",
            "*",
            "scenarios/greet/case.yml:5:17: max_iterations: expected an integer >= 1, got -1",
            "*",
            "3 mistakes in this file",
        ]
    )


def test_a_procedure_typo_is_a_did_you_mean_not_a_move(project: Project) -> None:
    project.scenario("typo", "procedure: gret\n" + TWO_STEPS)
    result = project.run("-k", "scenario")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenarios/greet/typo.yml:1:12: procedure: no procedure is named 'gret' "
            "(the file is in the greet/ scenario folder)",
            "  did you mean 'greet'?",
        ]
    )
    result.stdout.no_fnmatch_line("*move it*")
