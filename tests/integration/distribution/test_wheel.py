"""The built wheel ships the built-in procedures and fragments and works from any directory.

Builds the wheel from this checkout, installs it into a fresh virtual environment (with
system site-packages so its dependencies need no network), and runs the installed
``ooda`` from an unrelated temporary directory.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    argv = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
    if importlib.util.find_spec("hatchling") is not None:
        # No isolated build env needed (and no index access) when hatchling is here.
        argv.append("--no-isolation")
    _run([*argv, str(ROOT)], cwd=ROOT)
    (built,) = out.glob("pytest_ooda-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("venv")
    _run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env_dir)],
        cwd=env_dir,
    )
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # pip comes from the system site-packages; it installs into the venv it runs in.
    _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
        cwd=env_dir,
    )
    return env_dir


def _clean_env(venv: Path, home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OODA_", "PYTHON", "XDG_"))
    }
    env["HOME"] = str(home)
    env["PATH"] = str(venv / "bin") + os.pathsep + env.get("PATH", "")
    return env


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

    # The checkout's own interpreter (editable install) composes the very same prompt.
    local = _run([sys.executable, "-m", "pytest_ooda", "show", procedure], cwd=workdir, env=env)
    assert prompt == local
