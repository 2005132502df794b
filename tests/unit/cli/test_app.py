"""The ``ooda`` command: help, exit codes, version, ``python -m`` and the command table."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda import __version__, cli

from .helpers import run

if TYPE_CHECKING:
    from pathlib import Path


def test_broken_config_exit_2_with_location(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "ooda-config.yml").write_text("loop:\n  failure_threshold: lots\n")
    code, _, err = run(capsys, "list")
    assert code == 2
    assert err.startswith("ooda: error: ooda-config.yml:2:22: loop.failure_threshold: expected")
    assert "Traceback" not in err


def test_warnings_go_to_stderr(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "ooda-config.yml").write_text("procedurs: {}\n")
    code, out, err = run(capsys, "list")
    assert code == 0
    assert "unknown top-level key 'procedurs'" in err
    assert "unknown top-level key" not in out


@pytest.mark.parametrize(
    "argv",
    [
        ["show"],
        ["show", "x", "--phase", "nope"],
        ["show", "x", "--phase", "act", "--provenance"],
        ["frobnicate"],
        ["list", "--bogus"],
        [],
    ],
)
def test_usage_errors_exit_1(
    workspace: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert cli.main(argv) == 1
    assert "usage: ooda" in capsys.readouterr().err


def test_help_lists_commands_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for word in ("list", "show", "exit codes", "OODA_*"):
        assert word in out
    assert cli.main(["show", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--phase", "--context", "--config", "--provenance", "PROCEDURE"):
        assert option in out


def test_every_registered_command_has_a_parser_and_handler() -> None:
    for module in cli.COMMANDS.values():
        assert callable(module.add_parser)
        assert callable(module.command)
    parser = cli.build_parser()
    minimal = {
        "init": [],
        "list": [],
        "show": ["p"],
        "run": ["p"],
        "lint": [],
        "report": ["r.jsonl"],
        "compare": ["a.jsonl", "b.jsonl"],
        "judge": ["check", "s.yml"],
        "help": [],
    }
    assert list(cli.COMMANDS) == list(minimal)
    for name, module in cli.COMMANDS.items():
        assert parser.parse_args([name, *minimal[name]]).func is module.command


def test_python_dash_m(workspace: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "show", "alpha", "--phase", "act"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, "Alpha act.\n")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"ooda {__version__}\n"


@pytest.mark.parametrize("command", ["list", "lint", "show build"])
def test_config_option_naming_a_directory(
    workspace: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    (workspace / "confdir").mkdir()
    code, _, err = run(capsys, *command.split(), "--config", "confdir")
    assert code == 2
    assert err == (
        "ooda: error: config file confdir is a directory\n  give the path of a YAML file\n"
    )
