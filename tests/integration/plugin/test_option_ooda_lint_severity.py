"""``--ooda-lint-severity`` / ini ``ooda_lint_severity``: lint severities overridden from the
command line and the ini file, and bad values as usage errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ooda_project import Project
from .helpers import UNUSED_PARAMETER, config_item


def test_command_line_and_ini_override_severities(project: Project) -> None:
    project.write("ooda-config.yml", "lint:\n  OODA203: off\n" + UNUSED_PARAMETER)
    assert "OODA203" not in config_item(project).stdout.str()
    # The command line beats the config file's lint: section.
    raised = config_item(project, "--ooda-lint-severity", "OODA203=error")
    raised.assert_outcomes(failed=1)
    raised.stdout.fnmatch_lines(["*OODA203 error*"])
    project.write(
        "pytest.ini", "[pytest]\nooda_lint_severity = parameters-without-template=error\n"
    )
    from_ini = config_item(project)
    from_ini.assert_outcomes(failed=1)
    both = config_item(project, "--ooda-lint-severity", "OODA203=warning,OODA302=off")
    both.assert_outcomes(passed=1, warnings=1)
    both.stdout.fnmatch_lines(["*OODA203 warning*"])


def test_bad_severity_override_is_a_usage_error(project: Project) -> None:
    result = project.run("--ooda-lint-severity", "OODA999=error")
    assert result.ret == 4  # pytest's usage-error exit code
    result.stderr.fnmatch_lines(["*--ooda-lint-severity: unknown lint rule 'OODA999'*"])


def test_bad_ini_severity_names_the_ini_key(project: Project) -> None:
    project.write("pytest.ini", "[pytest]\nooda_lint_severity = OODA203\n")
    result = project.run()
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: ini option ooda_lint_severity: expected RULE=*"])
