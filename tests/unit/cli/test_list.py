"""``ooda list``: the procedures, where each comes from, and output the terminal cannot show."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from .helpers import run

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_list_includes_workspace_and_builtins(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    names = [line.split()[0] for line in lines]
    assert names == sorted(names)
    assert "zeta" in names
    assert "alpha" in names
    assert "build" in names
    zeta = next(line for line in lines if line.startswith("zeta"))
    assert "Zeta Proc" in zeta
    assert zeta.endswith("Does zeta things")
    alpha = next(line for line in lines if line.startswith("alpha "))
    assert alpha.split()[1] == "alpha"


def test_list_without_procedures(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda import fragments

    monkeypatch.setattr(fragments, "builtin_root", lambda: workspace / "no-builtins")
    (workspace / "ooda-config.yml").write_text("loop: {}\n")
    assert run(capsys, "list") == (0, "no procedures defined\n", "")


def test_list_escapes_what_the_terminal_cannot_show(workspace: Path) -> None:
    import os

    (workspace / "ooda-config.yml").write_text(
        'procedures:\n  rocket:\n    display: "Launch \\U0001F680"\n', encoding="utf-8"
    )
    env = dict(os.environ, PYTHONIOENCODING="latin-1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "list"],
        capture_output=True,
        cwd=workspace,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Launch \\U0001f680" in proc.stdout
