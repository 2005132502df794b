"""The ``ooda`` console script and ``python -m pytest_ooda``, as a user starts them: the
same command, which writes nothing of its own on disk (no cache, no copy of a secret)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

import pytest_ooda
from pytest_ooda.fragments import builtin_root

OODA = Path(sys.executable).parent / "ooda"
CONFIG = """\
procedures:
  alpha:
    summary: "First one"
    act:
      - content: "Alpha act."
"""


class Project:
    """An empty home, XDG directories and temporary directory of its own, and a config."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "project"
        self.private = tmp_path / "private"
        self.root.mkdir()
        (self.root / "ooda-config.yml").write_text(CONFIG)
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OODA_", "ROODA_", "XDG_"))
        }
        for name in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR"):
            directory = self.private / name.lower()
            directory.mkdir(parents=True)
            self.env[name] = str(directory)
        # Dated back, as a project that has been there a while: a command that kept its
        # results would not hold back for files changed a moment ago.
        moment = time.time() - 60
        for path in [*self.root.rglob("*"), *self.private.rglob("*"), self.root, self.private]:
            os.utime(path, (moment, moment))

    def ooda(
        self, *argv: str, module: bool = False, **env: str
    ) -> subprocess.CompletedProcess[bytes]:
        command = [sys.executable, "-m", "pytest_ooda"] if module else [str(OODA)]
        return subprocess.run(
            [*command, *argv],
            cwd=self.root,
            env={**self.env, **env},
            capture_output=True,
            check=False,
            timeout=60,
        )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    assert OODA.exists(), f"the ooda console script is not installed beside {sys.executable}"
    return Project(tmp_path)


def test_the_console_script_and_the_module_are_the_same_command(project: Project) -> None:
    for argv in (["show", "alpha", "--phase", "act"], ["list"], ["show", "nope"], ["--bogus"]):
        script, module = project.ooda(*argv), project.ooda(*argv, module=True)
        assert (script.returncode, script.stdout, script.stderr) == (
            module.returncode,
            module.stdout,
            module.stderr,
        )
    assert project.ooda("show", "alpha", "--phase", "act").stdout == b"Alpha act.\n"


def _files(root: Path, since: float | None = None) -> list[Path]:
    """Every regular file under ``root`` (changed at or after ``since``, when given)."""
    found: list[Path] = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory, name)
            try:
                info = path.lstat()
            except OSError:
                continue
            if path.is_file() and (since is None or max(info.st_mtime, info.st_ctime) >= since):
                found.append(path)
    return found


def _contents(path: Path) -> bytes:
    """The file's bytes; none when it is gone since it was listed (another test's
    process may remove its own file, such as coverage's data, under the same tree)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def test_show_leaves_no_copy_of_an_api_key_on_disk(project: Project) -> None:
    """Nothing the command writes holds the environment: not under the home or XDG
    directories, the temporary directory, the project, nor the installed package."""
    key = f"sk-ant-api03-{secrets.token_hex(24)}"
    started = time.time() - 1  # file times may be coarser than time.time()
    for _ in range(2):  # a second run is where a cache would answer
        for argv in (["show", "build"], ["show", "alpha"], ["list"]):
            done = project.ooda(*argv, ANTHROPIC_API_KEY=key)
            assert done.returncode == 0, done.stderr
            assert key.encode() not in done.stdout + done.stderr
    package = Path(pytest_ooda.__file__).parent
    install = {package, builtin_root(), Path(sysconfig.get_paths()["purelib"])}
    scanned = _files(project.private) + _files(project.root)
    scanned += [path for root in install for path in _files(root, since=started)]
    holding = [str(path) for path in scanned if key.encode() in _contents(path)]
    assert holding == []
    # What the command left outside the project at all: nothing.
    assert _files(project.private) == []


def test_a_pipe_closed_early_is_not_an_error(project: Project) -> None:
    reader = subprocess.Popen(
        [str(OODA), "show", "build"],
        cwd=project.root,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None
    reader.stdout.read(10)
    reader.stdout.close()
    assert reader.wait(timeout=60) == 0
    assert reader.stderr is not None
    assert b"Traceback" not in reader.stderr.read()
