"""A wheel of this checkout installed into a fresh virtual environment (with system
site-packages, so its dependencies need no network): the ``wheel`` and ``venv`` session
fixtures in conftest.py build them once for every test that uses them."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def build_wheel(out: Path) -> Path:
    argv = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
    if importlib.util.find_spec("hatchling") is not None:
        # No isolated build env needed (and no index access) when hatchling is here.
        argv.append("--no-isolation")
    run([*argv, str(ROOT)], cwd=ROOT)
    (built,) = out.glob("pytest_ooda-*.whl")
    return built


def make_venv(wheel: Path, env_dir: Path) -> Path:
    run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env_dir)],
        cwd=env_dir,
    )
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # pip comes from the system site-packages; it installs into the venv it runs in.
    run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
        cwd=env_dir,
    )
    return env_dir


def clean_env(venv: Path, home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OODA_", "PYTHON", "XDG_"))
    }
    env["HOME"] = str(home)
    env["PATH"] = str(venv / "bin") + os.pathsep + env.get("PATH", "")
    return env
