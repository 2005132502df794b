"""Collection: which files become collectors, item ids and kinds, locations, broken files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ooda_project import TEMPLATED_CONFIG, TEMPLATED_DECIDE_MD, summary_line

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

HAPPY = """\
procedure: greet
expect: {status: success, iterations: 1}
iterations:
  - output: "<promise>SUCCESS</promise>"
"""


def test_each_procedure_yields_config_prompt_scenario_and_live_items(project: Project) -> None:
    project.scenario("happy", HAPPY)
    result = project.run("--collect-only", "-q", "-m", "live or not live")
    result.stdout.fnmatch_lines(
        [
            "ooda-config.yml::greet::config",
            "ooda-config.yml::greet::prompt[[]observe]",
            "ooda-config.yml::greet::prompt[[]orient]",
            "ooda-config.yml::greet::prompt[[]decide]",
            "ooda-config.yml::greet::prompt[[]act]",
            "ooda-config.yml::greet::prompt[[]assembled]",
            "ooda-config.yml::greet::scenario[[]happy]",
            "ooda-config.yml::greet::live[[]happy]",
            "8 tests collected*",
        ]
    )


def test_custom_config_with_every_fragment_kind_passes_after_snapshotting(
    project: Project,
) -> None:
    project.write("ooda-config.yml", TEMPLATED_CONFIG)
    project.write("prompts/decide.md", TEMPLATED_DECIDE_MD)
    project.scenario("happy", HAPPY)
    first = project.run("--snapshot-update")
    first.assert_outcomes(passed=7, deselected=1)
    snapshot = (project.path / "__snapshots__/ooda-config/greet/decide.md").read_text()
    assert snapshot == "Decide whom to greet first, starting with the README.\n"
    observe = (project.path / "__snapshots__/ooda-config/greet/observe.md").read_text()
    assert observe == "Look around the room.\n\nRead the README.\nList the people present.\n"
    orient = (project.path / "__snapshots__/ooda-config/greet/orient.md").read_text()
    assert orient.strip()  # the built-in fragment's text
    project.run().assert_outcomes(passed=7, deselected=1)


def test_files_outside_the_globs_are_not_collected(project: Project) -> None:
    project.write("tests/fixtures/ooda-config.yml", "procedures: {other: {}}\n")
    project.write("procedures/scenarios/greet/x.yml", "procedure: greet\n")
    project.write("notes.yml", "procedures: {notes: {}}\n")
    result = project.run("--collect-only", "-q")
    assert "other" not in result.stdout.str()
    assert "notes" not in result.stdout.str()
    assert "x.yml" not in result.stdout.str()


def test_procedures_directory_files_are_collected(project: Project) -> None:
    project.write(
        "procedures/extra.yaml",
        """\
        procedures:
          wave:
            act:
              - content: "Wave. <promise>SUCCESS</promise> / <promise>FAILURE</promise>"
        """,
    )
    result = project.run("--collect-only", "-q")
    result.stdout.fnmatch_lines(["procedures/extra.yaml::wave::config"])


def test_k_selects_by_procedure_and_by_item_kind(project: Project) -> None:
    project.write(
        "procedures/more.yml",
        """\
        procedures:
          audit:
            act:
              - content: "Audit. <promise>SUCCESS</promise> / <promise>FAILURE</promise>"
        """,
    )
    project.scenario("happy", HAPPY)
    # Scenarios live next to the config file that declares the procedure.
    project.write("procedures/scenarios/audit/happy.yml", HAPPY.replace("greet", "audit"))
    by_procedure = project.run("--collect-only", "-q", "-k", "audit")
    lines = [line for line in by_procedure.stdout.lines if "::" in line]
    assert lines
    assert all("::audit::" in line for line in lines)
    by_kind = project.run("--collect-only", "-q", "-k", "scenario and audit")
    lines = [line for line in by_kind.stdout.lines if "::" in line]
    assert lines == ["procedures/more.yml::audit::scenario[happy]"]
    prompts = project.run("--collect-only", "-q", "-k", "prompt and greet")
    lines = [line for line in prompts.stdout.lines if "::" in line]
    assert len(lines) == 5
    assert all("::greet::prompt[" in line for line in lines)


def test_items_are_located_at_the_procedure_line(project: Project) -> None:
    result = project.run("-v", "-k", "greet and decide", "--snapshot-update")
    # reportinfo: the config file and the procedure name line (line 2, 0-based 1).
    result.stdout.fnmatch_lines(["*ooda-config.yml::greet::prompt[[]decide] PASSED*"])
    items = project.pytester.inline_genitems()[0]
    assert {item.name: item.location for item in items}["config"] == (
        "ooda-config.yml",
        1,
        "greet::config",
    )


def test_scenario_items_are_located_at_the_scenario_file(project: Project) -> None:
    project.scenario("happy", HAPPY)
    items = project.pytester.inline_genitems()[0]
    assert {item.name: item.location for item in items}["scenario[happy]"] == (
        "scenarios/greet/happy.yml",
        0,
        "greet::scenario[happy]",
    )


def test_broken_config_is_one_located_failure_never_internalerror(project: Project) -> None:
    project.write("ooda-config.yml", "procedures:\n  greet: [unclosed\n")
    result = project.run()
    assert result.ret == 1
    assert "INTERNALERROR" not in result.stdout.str()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ config _*",
            "ooda-config.yml:*: invalid YAML*",
            "*",
            summary_line("ooda-config.yml::config", "ooda-config.yml:*"),
        ]
    )
    # The verbose line shows the real node id (a domain with dots would be mangled).
    project.run("-v").stdout.fnmatch_lines(["ooda-config.yml::config FAILED*"])
    assert "Traceback" not in result.stdout.str()
    assert "pytest_ooda/" not in result.stdout.str()


def test_a_broken_procedure_fails_alone(project: Project) -> None:
    project.write(
        "ooda-config.yml",
        """\
        procedures:
          greet:
            observe:
              - content: "Look."
              - path: prompts/missing.md
          other:
            act:
              - content: "Done? Say <promise>SUCCESS</promise>, or <promise>FAILURE</promise>."
        """,
    )
    project.run("--snapshot-update")
    result = project.run("-v")
    assert result.ret == 1
    assert "INTERNALERROR" not in result.stdout.str()
    # One located failure: the procedure's config item; its other items are skipped
    # and the file's other procedure passes.
    result.assert_outcomes(failed=1, passed=6, skipped=5)
    result.stdout.fnmatch_lines(
        [
            "ooda-config.yml::greet::config FAILED*",
            "ooda-config.yml::greet::prompt[[]observe[]] SKIPPED*",
            "ooda-config.yml::other::config PASSED*",
            "*_ greet::config _*",
            "ooda-config.yml:5:*: procedure greet: observe[[]1]*prompts/missing.md*",
            "  > 5 |       - path: prompts/missing.md",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "pytest_ooda/" not in result.stdout.str()


def test_yaml_syntax_error_is_located(project: Project) -> None:
    project.write("ooda-config.yml", "procedures:\n  greet: [unclosed\n")
    result = project.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["ooda-config.yml:*:*"])
    assert "INTERNALERROR" not in result.stdout.str()


def test_header_and_collection_lines(project: Project) -> None:
    project.scenario("happy", HAPPY)
    result = project.run("--collect-only")
    result.stdout.fnmatch_lines(
        [
            "ooda: pytest-ooda * (builtin=off, record-mode=none, drift=fail)",
            "*",
            "ooda: 1 procedure, 1 scenario in 1 config file",
        ]
    )


def test_plugin_fully_off_with_p_no_ooda(project: Project) -> None:
    project.scenario("happy", HAPPY)
    result = project.run("-p", "no:ooda", "--collect-only", "-q")
    assert "ooda-config.yml" not in result.stdout.str()
    assert "ooda:" not in result.stdout.str()
    result.stdout.fnmatch_lines(["no tests collected*"])


def test_unexpected_python_tests_are_untouched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_lint_errors_fail_the_config_item_and_warnings_become_pytest_warnings(
    project: Project,
) -> None:
    project.write(
        "ooda-config.yml",
        """\
        procedures:
          quiet:
            observe:
              - content: "Look around."
            act:
              - content: "Do something."
        """,
    )
    # (-k config alone would also match the file name ooda-config.yml)
    result = project.run("-k", "quiet and not prompt")
    result.assert_outcomes(failed=1, deselected=5, warnings=3)
    result.stdout.fnmatch_lines(
        [
            "ooda-config.yml:2:3: OODA301 error: procedure quiet: no fragment says when to emit "
            "<promise>SUCCESS</promise>",
            "  > 2 |   quiet:",
            "  why: *",
        ]
    )
    result.stdout.fnmatch_lines(["*LintWarning: ooda-config.yml:2:3: OODA101 warning*"])


def test_template_execution_error_shows_yaml_and_template_lines(project: Project) -> None:
    project.write(
        "ooda-config.yml",
        TEMPLATED_CONFIG.replace('target: "the README"', "target: [only]"),
    )
    project.write("prompts/decide.md", "Decide.\nStart with {{index .target 3}}.\n")
    result = project.run("-k", "prompt and decide")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        [
            "ooda-config.yml:*: procedure greet: decide[[]0]: template execution error:*",
            "  in prompts/decide.md:2",
            "",
            "*|     decide:",
            "  > * |       - path: prompts/decide.md",
            "*",
            "  in the template prompts/decide.md:",
            "    1 | Decide.",
            "  > 2 | Start with {{index .target 3}}.",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_file_without_procedures_is_one_item_that_shows_its_warnings(project: Project) -> None:
    # A misspelt `procedures:` must not make the file silently yield nothing.
    project.write(
        "ooda-config.yml",
        "loop:\n  default_max_iterations: 3\nprocedurs:\n  greet:\n    act: []\n",
    )
    result = project.run("-v")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "ooda-config.yml::config PASSED*",
            "*/ooda-config.yml:3: LintWarning: ooda-config.yml:3:1: unknown top-level key "
            "'procedurs' (ignored); did you mean 'procedures'?",
        ]
    )
    project.write("ooda-config.yml", "loop:\n  default_max_iterations: 3\n")
    project.run().assert_outcomes(passed=1)
