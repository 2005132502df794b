"""``--ooda-config``: an explicitly named workspace config is collected and feeds fixtures."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

ROODA = """\
loop:
  default_max_iterations: 7
procedures:
  legacy:
    act:
      - content: "Do it. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"
"""


def test_named_file_is_collected_even_outside_the_globs(project: Project) -> None:
    project.write("conf/rooda-config.yml", ROODA)
    plain = project.run("--collect-only", "-q")
    assert "legacy" not in plain.stdout.str()
    result = project.run("--collect-only", "-q", "--ooda-config=conf/rooda-config.yml")
    result.stdout.fnmatch_lines(["conf/rooda-config.yml::legacy::config"])


def test_named_file_is_the_session_config_of_the_fixture(project: Project) -> None:
    project.write("conf/rooda-config.yml", ROODA)
    project.pytester.makepyfile(
        test_cfg="""
        def test_cfg(ooda_config):
            assert ooda_config.loop.default_max_iterations == 7
            assert "legacy" in ooda_config.procedures
            assert "build" in ooda_config.procedures  # built-ins merged underneath
        """
    )
    project.run("--ooda-config=conf/rooda-config.yml", "test_cfg.py").assert_outcomes(passed=1)


def test_ini_path_is_relative_to_the_ini_file(project: Project) -> None:
    project.write("conf/rooda-config.yml", ROODA)
    project.write("pytest.ini", "[pytest]\nooda_config = conf/rooda-config.yml\n")
    result = project.run("--collect-only", "-q")
    result.stdout.fnmatch_lines(["conf/rooda-config.yml::legacy::config"])


def test_missing_named_file_is_a_usage_error(project: Project) -> None:
    # Collecting nothing would pass silently: a mistyped path must be said out loud.
    project.pytester.makepyfile(test_cfg="def test_cfg(ooda_config):\n    pass\n")
    result = project.run("--ooda-config=nope.yml", "test_cfg.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ooda-config: config file not found: */nope.yml"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_directory_or_missing_ini_path_is_a_usage_error(project: Project) -> None:
    project.write("conf/keep.md", "not a config\n")
    result = project.run("--ooda-config=conf")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ooda-config: not a file: */conf"])
    project.write("pytest.ini", "[pytest]\nooda_config = conf/gone.yml\n")
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: ini option ooda_config: config file not found: */conf/gone.yml"]
    )
