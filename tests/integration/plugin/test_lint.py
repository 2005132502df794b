"""Lint inside pytest: each procedure's ``config`` item fails on error findings and
reports warnings as pytest warnings carrying the rule id."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from ooda_project import summary_line

if TYPE_CHECKING:
    from ooda_project import Project
from .helpers import NO_SIGNALS, TEMPLATED_DECIDE, UNUSED_PARAMETER, config_item


def test_clean_procedure_passes_without_lint_warnings(project: Project) -> None:
    result = config_item(project)
    result.assert_outcomes(passed=1)
    assert "LintWarning" not in result.stdout.str()


def test_error_finding_fails_the_config_item(project: Project) -> None:
    project.write("ooda-config.yml", NO_SIGNALS)
    result = config_item(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ooda-config.yml:2:3: OODA301 error: procedure greet: no fragment says when "
            "to emit <promise>SUCCESS</promise>",
            "*why: *",
        ]
    )
    # The FAILURE guidance is only a warning: reported, not failing.
    result.stdout.fnmatch_lines(["*LintWarning*OODA302 warning*"])


def test_warning_finding_is_a_pytest_warning_with_the_rule_id(project: Project) -> None:
    project.write("ooda-config.yml", UNUSED_PARAMETER)
    result = config_item(project)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        ["*LintWarning: ooda-config.yml:*: OODA203 warning: procedure greet: decide[[]0]:*"]
    )
    # Located at the YAML line (the summary quotes it), not at the plugin's warn() call.
    result.stdout.fnmatch_lines(["  */ooda-config.yml:*: LintWarning: *", "    - path: *"])
    assert "pytest_ooda/" not in result.stdout.str()


def test_warnings_can_be_made_errors_or_filtered_like_any_warning(project: Project) -> None:
    project.write("ooda-config.yml", UNUSED_PARAMETER)
    strict = config_item(project, "-W", "error::pytest_ooda.lint.LintWarning")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(
        [
            "LintWarning (an error under -W / filterwarnings): ooda-config.yml:*OODA203*",
            "",
            "*>*| *- path: *",
        ]
    )
    assert "pytest_ooda/" not in strict.stdout.str()
    project.write(
        "pytest.ini",
        "[pytest]\nfilterwarnings =\n    ignore:.*OODA203:pytest_ooda.lint.LintWarning\n",
    )
    quiet = project.run("ooda-config.yml::greet::config")
    quiet.assert_outcomes(passed=1)
    assert "OODA203" not in quiet.stdout.str()


def test_template_parameter_rules_fire_and_not(project: Project) -> None:
    project.write("prompts/decide.md", TEMPLATED_DECIDE)
    missing = config_item(project)
    missing.stdout.fnmatch_lines(["*OODA204 warning*prompts/decide.md has template syntax*"])
    project.write("ooda-config.yml", UNUSED_PARAMETER)
    supplied = config_item(project)
    supplied.assert_outcomes(passed=1)
    assert "LintWarning" not in supplied.stdout.str()


def test_lint_section_overrides_severity_and_switches_rules_off(project: Project) -> None:
    project.write("ooda-config.yml", "lint:\n  OODA301: warning\n" + NO_SIGNALS)
    downgraded = config_item(project)
    downgraded.assert_outcomes(passed=1, warnings=2)
    downgraded.stdout.fnmatch_lines(["*OODA301 warning*"])
    project.write(
        "ooda-config.yml", "lint:\n  OODA301: off\n  no-failure-signal: off\n" + NO_SIGNALS
    )
    silenced = config_item(project)
    silenced.assert_outcomes(passed=1)
    assert "OODA30" not in silenced.stdout.str()
    project.write("ooda-config.yml", "lint:\n  OODA203: error\n" + UNUSED_PARAMETER)
    upgraded = config_item(project)
    upgraded.assert_outcomes(failed=1)
    upgraded.stdout.fnmatch_lines(["*OODA203 error*"])


def test_builtin_procedures_pass_lint_without_warnings(project: Project) -> None:
    (project.path / "ooda-config.yml").unlink()
    result = project.run(
        "--ooda-builtin", "-k", "config and not prompt and not scenario", "-W", "always"
    )
    result.assert_outcomes(passed=16)
    assert "LintWarning" not in result.stdout.str()


SIGNALS = (
    '      - content: "Done: <promise>SUCCESS</promise>. Blocked: <promise>FAILURE</promise>."\n'
)


def procedure(name: str, body: str, *, act: str = SIGNALS) -> str:
    phases = {
        "observe": '      - content: "Look."\n',
        "orient": '      - content: "Think."\n',
        "decide": '      - content: "Choose."\n',
        "act": act,
    }
    head = f"  {name}:\n"
    custom = textwrap.indent(textwrap.dedent(body), "    ")
    for phase in list(phases):
        if f"    {phase}:" in custom:
            del phases[phase]
    return head + custom + "".join(f"    {p}:\n{text}" for p, text in phases.items())


# Each procedure breaks exactly one rule (first) and has a fixed twin (second).
CASES: dict[str, tuple[str, str]] = {
    "OODA002": (
        'orient:\n  - {content: "{{index .t 5}}", parameters: {t: [a]}}\n',
        'orient:\n  - {content: "{{index .t 0}}", parameters: {t: [a]}}\n',
    ),
    "OODA101": ("orient: []\n", 'orient:\n  - content: "Think."\n'),
    "OODA102": (
        'observe:\n  - content: "Look."\n  - content: "Look."\n',
        'observe:\n  - content: "Look."\n  - content: "Look again."\n',
    ),
    "OODA103": (
        "iteration_mode: unlimited\n",
        "iteration_mode: unlimited\niteration_timeout: 60\n",
    ),
    "OODA201": (
        'observe:\n  - {content: "{{.a}}{{if .b}} and b{{end}}", parameters: {a: 1}}\n',
        'observe:\n  - {content: "{{.a}}{{if .b}} and b{{end}}", parameters: {a: 1, b: 2}}\n',
    ),
    "OODA202": (
        'observe:\n  - {content: "{{.a}}", parameters: {a: 1, z: 2}}\n',
        'observe:\n  - {content: "{{.a}}", parameters: {a: 1}}\n',
    ),
    "OODA203": (
        'observe:\n  - {content: "Plain.", parameters: {x: 1}}\n',
        'observe:\n  - {content: "Plain."}\n',
    ),
    "OODA204": ('observe:\n  - {content: "Use {{.x}}"}\n', 'observe:\n  - {content: "Use x"}\n'),
    "OODA205": (
        'observe:\n  - {content: "{{.a}} {{.b}}", parameters: {a: 1}}\n',
        'observe:\n  - {content: "{{.a}} {{.b}}", parameters: {a: 1, b: 2}}\n',
    ),
    "OODA301": (
        'act:\n  - content: "Blocked: <promise>FAILURE</promise>."\n',
        "act:\n" + SIGNALS.replace("      ", "  "),
    ),
    "OODA302": (
        'act:\n  - content: "Done: <promise>SUCCESS</promise>."\n',
        "act:\n" + SIGNALS.replace("      ", "  "),
    ),
}


ERRORS = {"OODA002", "OODA205", "OODA301"}


def rule_config(fixed: bool) -> str:
    parts = [
        procedure(f"p{rule[4:]}", pair[1] if fixed else pair[0]) for rule, pair in CASES.items()
    ]
    # OODA403 is info: only visible in pytest once the lint: section raises it.
    display = '    display: "Audit Specifications"\n' if not fixed else '    display: "Mine"\n'
    parts.append("  audit-spec:\n" + display)
    return "lint:\n  OODA403: warning\nprocedures:\n" + "".join(parts)


def test_every_procedure_rule_fires_in_its_config_item_and_not_once_fixed(
    project: Project,
) -> None:
    project.write("ooda-config.yml", rule_config(fixed=False))
    broken = project.run("-k", "not prompt", "-W", "always")
    text = broken.stdout.str()
    broken.assert_outcomes(passed=len(CASES) - len(ERRORS) + 1, failed=len(ERRORS))
    for rule in CASES:
        severity = "error" if rule in ERRORS else "warning"
        assert f"{rule} {severity}: procedure p{rule[4:]}:" in text, rule
    assert "OODA403 warning: procedure audit-spec: overrides the built-in" in text
    # One finding per procedure: nothing else fired.
    assert text.count("LintWarning: ") == len(CASES) - len(ERRORS) + 1
    for rule in ERRORS:
        broken.stdout.fnmatch_lines(
            [summary_line(f"ooda-config.yml::p{rule[4:]}::config", f"*: {rule} error: *")]
        )

    project.write("ooda-config.yml", rule_config(fixed=True))
    fixed = project.run("-k", "not prompt", "-W", "always")
    fixed.assert_outcomes(passed=len(CASES) + 1)
    assert "LintWarning" not in fixed.stdout.str()
