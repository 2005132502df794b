"""The built wheel ships the built-in procedures and fragments and works from any directory.

Builds the wheel from this checkout, installs it into a fresh virtual environment (with
system site-packages so its dependencies need no network), and runs the installed
``ooda`` from an unrelated temporary directory.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from wheel_env import clean_env as _clean_env, run as _run

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[3]


def _builtin_procedure() -> str:
    """``build`` when the shipped built-ins define it (they should), else the first one."""
    from pytest_ooda.config import load_builtin_config

    names = sorted(load_builtin_config().procedures)
    assert names, "procedures/builtin.yml defines no procedure"
    return "build" if "build" in names else names[0]


def test_wheel_contains_builtin_content(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "pytest_ooda/_builtin/procedures/builtin.yml" in names
    shipped = {n for n in names if n.startswith("pytest_ooda/_builtin/fragments/")}
    in_tree = {
        "pytest_ooda/_builtin/" + p.relative_to(ROOT).as_posix()
        for p in (ROOT / "fragments").rglob("*.md")
    }
    assert in_tree
    assert in_tree <= shipped
    # `ooda help TOPIC` reads the documentation from the wheel.
    docs = {"pytest_ooda/_builtin/docs/" + p.name for p in (ROOT / "docs").glob("*.md")}
    assert docs <= names
    assert "pytest_ooda/_builtin/README.md" in names


def test_installed_ooda_show_from_any_directory(
    venv: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    workdir = tmp_path / "somewhere" / "else"
    workdir.mkdir(parents=True)
    env = _clean_env(venv, tmp_path_factory.mktemp("home"))
    ooda = venv / "bin" / "ooda"
    procedure = _builtin_procedure()

    where = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import pytest_ooda, pytest_ooda.fragments as f; "
            "print(pytest_ooda.__file__); print(f.builtin_root())",
        ],
        cwd=workdir,
        env=env,
    ).splitlines()
    assert Path(where[0]).is_relative_to(venv), where
    assert Path(where[1]) == Path(where[0]).parent / "_builtin"

    listing = _run([str(ooda), "list"], cwd=workdir, env=env)
    assert procedure in listing.split()

    prompt = _run([str(ooda), "show", procedure], cwd=workdir, env=env)
    assert "OODA PROCEDURE EXECUTION" in prompt
    assert "PHASE 1: OBSERVE" in prompt
    assert prompt.endswith("\n")
    assert not prompt.endswith("\n\n")

    # Messages point a pip user at `ooda help TOPIC`, which the wheel can answer.
    page = _run([str(ooda), "help", "agents"], cwd=workdir, env=env)
    assert page.startswith("# Agent CLIs")
    quickstart = _run([str(ooda), "help", "quickstart"], cwd=workdir, env=env)
    assert quickstart.startswith("# Quick start\n")
    assert "ooda init" in quickstart

    # The checkout's own interpreter (editable install) composes the very same prompt.
    local = _run([sys.executable, "-m", "pytest_ooda", "show", procedure], cwd=workdir, env=env)
    assert prompt == local


def test_the_readmes_install_from_a_wheel_works_as_written(wheel: Path, tmp_path: Path) -> None:
    """The README's "while unpublished" wheel command, with this checkout's wheel in the
    folder it names, installs pytest-ooda with its extra into a fresh venv."""
    import re
    import shlex

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^(pip install '\./pytest_ooda-[^']+\.whl\[xdist\]')", readme, re.M)
    assert found is not None, "the README no longer says how to install from a wheel"
    command = shlex.split(found.group(1))
    assert command[2].startswith(f"./{wheel.name}"), (command, wheel.name)  # the same version
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
         cwd=tmp_path)  # fmt: skip
    folder = tmp_path / "here"
    folder.mkdir()
    (folder / wheel.name).write_bytes(wheel.read_bytes())
    python = str(venv / "bin" / "python")
    _run([python, "-m", *command, "--no-index", "--no-deps"], cwd=folder)
    assert (venv / "bin" / "ooda").exists()
    requires = _run(
        [python, "-c", "import importlib.metadata as m; print(m.requires('pytest-ooda'))"],
        cwd=folder,
    )
    assert "extra == 'xdist'" in requires
    assert "pip install './pytest-ooda[xdist]'" in readme  # and the clone's
