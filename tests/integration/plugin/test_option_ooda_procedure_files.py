"""ini ``ooda_procedure_files``: which files are procedure configs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

WAVE = """\
procedures:
  wave:
    act:
      - content: "Wave. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"
"""


def test_custom_globs_replace_the_default(project: Project) -> None:
    project.write("agents/flows/wave.yml", WAVE)
    project.write("agents/flows/deep/ignored.yml", WAVE.replace("wave", "deep"))
    project.write("pytest.ini", "[pytest]\nooda_procedure_files = agents/flows/*.yml\n")
    result = project.run("--collect-only", "-q")
    result.stdout.fnmatch_lines(["agents/flows/wave.yml::wave::config"])
    assert "greet" not in result.stdout.str()  # ooda-config.yml no longer matches
    assert "deep" not in result.stdout.str()  # * stays within one directory


def test_double_star_spans_directories(project: Project) -> None:
    project.write("agents/a/b/wave.yml", WAVE)
    project.write(
        "pytest.ini", "[pytest]\nooda_procedure_files = agents/**/*.yml ooda-config.yml\n"
    )
    result = project.run("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["agents/a/b/wave.yml::wave::config", "ooda-config.yml::greet::config"], consecutive=False
    )


def test_glob_outside_the_rootdir_is_a_usage_error(project: Project) -> None:
    # An absolute or ``..`` glob can never match a path relative to the rootdir, so
    # the session would silently collect nothing.
    for glob in ("../shared/*.yml", "/etc/*.yml"):
        project.write("pytest.ini", f"[pytest]\nooda_procedure_files = {glob}\n")
        result = project.run("--collect-only", "-q")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(
            [f"ERROR: ini option ooda_procedure_files: '{glob}' can never match*"]
        )
