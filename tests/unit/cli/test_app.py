"""The ``ooda`` command: help, exit codes, version, ``python -m`` and the command table."""

from __future__ import annotations

import ast
import importlib
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
    modules = {name: importlib.import_module(path) for name, path in cli.COMMANDS.items()}
    for module in modules.values():
        assert callable(module.add_parser)
        assert callable(module.command)
    parser = cli.build_parser()
    minimal = {
        "init": [],
        "list": [],
        "show": ["p"],
        "run": ["p"],
        "lint": [],
        "changed": ["main"],
        "report": ["r.jsonl"],
        "compare": ["a.jsonl", "b.jsonl"],
        "history": [],
        "plan-runs": ["greet/happy", "--detect", "10pp"],
        "ablate": ["s.yml"],
        "canary": ["--agent-cmd", "new-agent"],
        "view": [],
        "judge": ["check", "s.yml"],
        "sandbox": ["image"],
        "help": [],
    }
    assert list(cli.COMMANDS) == list(minimal)
    for name, module in modules.items():
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


@pytest.mark.parametrize("columns", ["50", "200", "", "x", "-3"])
def test_help_is_as_wide_as_argparse_would_make_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    """The help formatter measures the terminal without shutil, as shutil does."""
    import shutil

    from pytest_ooda.cli.common import _terminal_columns

    monkeypatch.setenv("COLUMNS", columns)
    assert _terminal_columns() == shutil.get_terminal_size().columns
    assert cli.main(["show", "--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    if columns == "50":
        # Wrapped at 50, but for the choices lists argparse cannot break.
        unbreakable = ("{observe,orient,decide,act}", "{ooda,rooda,raw}")
        assert all(any(c in line for c in unbreakable) for line in lines if len(line) > 50)
    if columns == "200":
        assert any(len(line) > 100 for line in lines)


def test_show_loads_only_its_own_command(workspace: Path) -> None:
    """`ooda show` imports no other subcommand's module, nor shutil (argparse's way to
    the terminal width, which brings bz2 and lzma): both cost a quick command time.

    Measured against what a bare interpreter already holds: a site directory's ``.pth``
    file may import shutil (certifi's does) before any project code runs."""
    watched = "m.startswith('pytest_ooda.cli.') or m in ('shutil', 'bz2', 'lzma')"
    bare = subprocess.run(
        [sys.executable, "-c", f"import sys; print(sorted(m for m in sys.modules if {watched}))"],
        capture_output=True,
        text=True,
        check=True,
    )
    code = (
        "import sys\n"
        "from pytest_ooda.cli import main\n"
        "assert main(['show', 'alpha', '--phase', 'act']) == 0\n"
        f"print(sorted(m for m in sys.modules if {watched}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    already = set(ast.literal_eval(bare.stdout.strip()))
    added = sorted(set(ast.literal_eval(proc.stdout.splitlines()[-1])) - already)
    assert added == ["pytest_ooda.cli.app", "pytest_ooda.cli.common", "pytest_ooda.cli.show"]
