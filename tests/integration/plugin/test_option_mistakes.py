"""A misspelt ``--ooda-*`` option or a wrong value of one: a usage error naming the
closest option or value, and the same words ``ooda run`` says for the same mistake."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.cli import main

if TYPE_CHECKING:
    from ooda_project import Project


@pytest.mark.parametrize("args", [["--ooda-repeats=5"], ["--ooda-repeats", "5"]])
def test_a_misspelt_option_names_the_closest_one(project: Project, args: list[str]) -> None:
    result = project.run(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == (
        "ERROR: unrecognized option --ooda-repeats; did you mean --ooda-repeat?"
    )


def test_an_option_like_none_of_ours_says_where_they_are_listed(project: Project) -> None:
    result = project.run("--ooda-colour=red")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == (
        "ERROR: unrecognized option --ooda-colour; `pytest --help` lists pytest-ooda's options"
    )


def test_a_conftests_own_ooda_option_is_left_alone(project: Project) -> None:
    project.write(
        "conftest.py",
        "def pytest_addoption(parser):\n    parser.addoption('--ooda-repeats', default=None)\n",
    )
    # After the test paths: two words, the value read as the option's.
    assert project.run("--collect-only", "--ooda-repeats=5").ret == pytest.ExitCode.OK


def test_arguments_after_the_separator_are_not_options(project: Project) -> None:
    result = project.run("--collect-only", "--", "--ooda-repeats=5")
    # pytest takes it for a test path that does not exist, not for our option.
    assert "unrecognized option" not in result.stderr.str()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            "--ooda-record-mode=onse",
            "ERROR: --ooda-record-mode: invalid choice: 'onse' (choose from 'none', 'once', "
            "'new', 'all'); did you mean 'once'?",
        ),
        (
            "ini:ooda_drift = warm",
            "ERROR: ini option ooda_drift: invalid choice: 'warm' (choose from 'fail', 'warn', "
            "'ignore'); did you mean 'warn'?",
        ),
        (
            "env:OODA_EXECUTOR= ",
            None,  # an empty variable is no value: the session runs
        ),
    ],
)
def test_a_wrong_value_names_the_closest_choice(
    project: Project, monkeypatch: pytest.MonkeyPatch, where: str, message: str | None
) -> None:
    args: list[str] = []
    if where.startswith("ini:"):
        project.write("pytest.ini", f"[pytest]\n{where.removeprefix('ini:')}\n")
    elif where.startswith("env:"):
        name, _, value = where.removeprefix("env:").partition("=")
        monkeypatch.setenv(name, value)
    else:
        args.append(where)
    result = project.run("--collect-only", *args)
    if message is None:
        assert result.ret == pytest.ExitCode.OK
        return
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == message


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("ai-output", "claude-jsn"),
        ("sandbox", "bwarp"),
        ("max-cost", "cheap"),
        ("max-tokens", "0"),
        ("prompt-format", "roda"),
        ("ai-cmd", "agent 'unclosed"),
    ],
)
def test_pytest_and_ooda_run_say_the_same_of_a_wrong_value(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flag: str,
    value: str,
) -> None:
    result = project.run("--collect-only", f"--ooda-{flag}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    from_pytest = result.stderr.lines[0].removeprefix(f"ERROR: --ooda-{flag}: ")
    monkeypatch.chdir(project.path)
    capsys.readouterr()
    assert main(["run", "greet", f"--{flag}={value}"]) == 1
    from_ooda = capsys.readouterr().err.splitlines()[0].removeprefix(f"ooda: error: --{flag}: ")
    assert from_ooda == from_pytest
    assert "did you mean" in from_pytest or flag in ("max-cost", "max-tokens", "ai-cmd")
