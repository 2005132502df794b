"""A misspelt ``--ooda-*`` option or a wrong value of one: a usage error naming the
closest option or value, and the same words ``ooda run`` says for the same mistake."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.cli import main
from pytest_ooda.settings import SETTINGS

if TYPE_CHECKING:
    from ooda_project import Project

    from pytest_ooda.settings import Setting


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


#: A wrong value for every row both front ends have (not a bare flag), and the words
#: each says of it after the flag's name. A row added to the table with both flags and
#: no value here fails test_every_row_both_front_ends_have_is_tried.
WRONG_VALUES = {
    "config": ("nope.yml", "config file not found: "),
    "ai_cmd": ("agent 'unclosed", "cannot split "),
    # Checked where it acts (the config may name more aliases): a live item fails.
    "ai_cmd_alias": ("claud", "unknown AI command alias 'claud'"),
    "ai_output": ("claude-jsn", "expected one of text, "),
    "max_cost": ("cheap", "expected an amount in US dollars > 0, got 'cheap'"),
    "max_tokens": ("0", "expected an integer >= 1, got '0'"),
    "budget": ("cheap", "expected an amount in US dollars > 0, got 'cheap'"),
    "budget_tokens": ("0", "expected an integer >= 1, got '0'"),
    "prompt_format": ("roda", "invalid choice: 'roda' (choose from 'ooda', 'rooda'"),
    "sandbox": ("bwarp", "unknown sandbox kind 'bwarp'"),
}

#: The rows a user gives a value to on both front ends.
ON_BOTH = [row for row in SETTINGS if row.pytest and row.ooda and row.kind != "flag"]


def test_every_row_both_front_ends_have_is_tried() -> None:
    assert sorted(WRONG_VALUES) == sorted(row.name for row in ON_BOTH)


@pytest.mark.parametrize("row", ON_BOTH, ids=[row.name for row in ON_BOTH])
def test_pytest_and_ooda_run_say_the_same_of_a_wrong_value(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    row: Setting[Any],
) -> None:
    value, words = WRONG_VALUES[row.name]
    assert row.pytest is not None
    if row.name == "ai_cmd_alias":
        project.scenario("hello", "procedure: greet\n")
        result = project.run("-m", "live", f"{row.pytest}={value}")
        result.assert_outcomes(failed=1)
        said = result.stdout.lines
        start = said.index(next(line for line in said if line.startswith(f"{row.pytest}: ")))
        from_pytest = "\n".join(said[start : start + 3]).removeprefix(f"{row.pytest}: ")
    else:
        result = project.run("--collect-only", f"{row.pytest}={value}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        from_pytest = result.stderr.lines[0].removeprefix(f"ERROR: {row.pytest}: ")
    assert from_pytest.startswith(words)
    monkeypatch.chdir(project.path)
    capsys.readouterr()
    assert main(["run", "greet", f"{row.ooda[0]}={value}"]) != 0
    said = capsys.readouterr().err.splitlines()
    start = said.index(next(line for line in said if line.startswith("ooda: error: ")))
    lines = 3 if row.name == "ai_cmd_alias" else 1
    from_ooda = "\n".join(said[start : start + lines])
    assert from_ooda.removeprefix(f"ooda: error: {row.ooda[0]}: ") == from_pytest
    if row.choices or row.name in ("ai_output", "sandbox", "ai_cmd_alias"):
        # A closed vocabulary (or a registry of them): the near miss is offered.
        assert "did you mean" in from_pytest


@pytest.mark.parametrize(
    "row",
    [row for row in SETTINGS if row.choices and row.pytest],
    ids=[row.name for row in SETTINGS if row.choices and row.pytest],
)
def test_every_choice_option_offers_the_near_miss(project: Project, row: Setting[Any]) -> None:
    """``--ooda-record-mode=oncex``: did you mean 'once'? — for every row with choices."""
    meant = max(row.choices, key=len)
    result = project.run("--collect-only", f"{row.pytest}={meant}x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0].startswith(f"ERROR: {row.pytest}: invalid choice: '{meant}x'")
    assert result.stderr.lines[0].endswith(f"did you mean {meant!r}?")
