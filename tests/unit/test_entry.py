"""The ``ooda`` entry point's result cache (``pytest_ooda/_entry.py``), through real
``ooda`` and ``python -m pytest_ooda`` processes: a repeated ``ooda show``/``ooda list``
answers from the cache byte for byte, and every change to what the run read, its
environment or its command line runs the command again.

A cache hit is told apart from a run by "poisoning" the saved entries: their output is
replaced with ``CACHED``, so a command that prints ``CACHED`` was answered from the
cache and one that prints the real output ran.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pytest_ooda
from pytest_ooda import _entry as entry

OODA = Path(sys.executable).parent / "ooda"
PACKAGE = Path(pytest_ooda.__file__).parent
CACHED = b"CACHED\n"
CONFIG = """\
procedures:
  alpha:
    summary: "First one"
    act:
      - content: "Alpha act."
  zeta:
    observe:
      - path: prompts/look.md
    act:
      - content: "Zeta act."
"""


@pytest.fixture(scope="module", autouse=True)
def _settled_package() -> None:
    """The package's sources out of the racy window (a file edited a moment ago keeps
    any entry from being saved for two seconds), and the built-in layer's cache written."""
    subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "show", "build"],
        env={**os.environ, "OODA_NO_CACHE": "1"},
        capture_output=True,
        check=True,
    )
    roots = [PACKAGE, PACKAGE.parent / "procedures", PACKAGE.parent / "fragments"]
    newest = max(
        (
            path.stat().st_mtime
            for root in roots
            if root.is_dir()
            for path in [root, *root.rglob("*")]
            if "__pycache__" not in path.parts
        ),
        default=0.0,
    )
    time.sleep(max(0.0, newest + 2.2 - time.time()))


class Project:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "project"
        self.home = tmp_path / "home"
        self.cache = tmp_path / "cache"
        self.root.mkdir()
        self.home.mkdir()
        (self.root / "prompts").mkdir()
        (self.root / "prompts" / "look.md").write_text("Look at the repository.\n")
        (self.root / "ooda-config.yml").write_text(CONFIG)
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OODA_", "ROODA_", "XDG_"))
        }
        self.env.update(HOME=str(self.home), XDG_CACHE_HOME=str(self.cache))
        self.settle()

    def settle(self, age: float = 10.0) -> None:
        """Date every project and home file ``age`` seconds back: out of the racy window."""
        moment = time.time() - age
        for top in (self.root, self.home):
            for path in sorted(top.rglob("*"), reverse=True):
                os.utime(path, (moment, moment))
            os.utime(top, (moment, moment))

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

    def entries(self) -> list[Path]:
        return sorted((self.cache / "pytest-ooda" / "cli").glob("*.entry"))

    def poison(self) -> None:
        """Replace every saved output with ``CACHED``."""
        entries = self.entries()
        assert entries, "no cache entry was saved"
        for path in entries:
            form, key, inputs, _chunks, code = marshal.loads(path.read_bytes())
            path.write_bytes(marshal.dumps((form, key, inputs, ((1, CACHED),), code)))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    assert OODA.exists(), f"the ooda console script is not installed beside {sys.executable}"
    return Project(tmp_path)


def _same(a: subprocess.CompletedProcess[bytes], b: subprocess.CompletedProcess[bytes]) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def test_a_hit_is_byte_identical_on_stdout_and_stderr(project: Project) -> None:
    (project.root / "ooda-config.yml").write_text(
        CONFIG + "  broken:\n    act:\n      - path: nope.md\n"
    )
    project.settle()
    first = project.ooda("list")
    assert first.returncode == 0, first.stderr
    assert b"broken" in first.stdout
    assert b"warning: procedure broken does not load" in first.stderr
    (saved,) = project.entries()
    inode = saved.stat().st_ino
    second = project.ooda("list")
    _same(first, second)
    assert saved.stat().st_ino == inode  # not written again: answered from it
    project.poison()
    assert project.ooda("list").stdout == CACHED


@pytest.mark.parametrize("module", [False, True], ids=["ooda", "python-m"])
def test_show_is_answered_from_the_cache(project: Project, module: bool) -> None:
    first = project.ooda("show", "build", module=module)
    assert first.returncode == 0, first.stderr
    assert b"Iteration: 1 of" in first.stdout
    _same(first, project.ooda("show", "build", module=module))
    project.poison()
    assert project.ooda("show", "build", module=module).stdout == CACHED


def _edit_same_size(path: Path, old: str, new: str) -> None:
    assert len(old) == len(new)
    text = path.read_text()
    assert old in text
    size = path.stat().st_size
    path.write_text(text.replace(old, new))
    assert path.stat().st_size == size


def test_a_same_size_edit_of_the_config_runs_again(project: Project) -> None:
    assert project.ooda("list").returncode == 0
    project.poison()
    _edit_same_size(project.root / "ooda-config.yml", "First one", "Final one")
    project.settle(age=5.0)  # the edit is out of the racy window: the new result is kept
    rerun = project.ooda("list")
    assert rerun.stdout != CACHED
    assert b"Final one" in rerun.stdout
    assert b"First one" not in rerun.stdout
    project.poison()
    assert project.ooda("list").stdout == CACHED


def test_a_same_size_fragment_edit_runs_again(project: Project) -> None:
    assert b"Look at the repository." in project.ooda("show", "zeta").stdout
    project.poison()
    _edit_same_size(project.root / "prompts" / "look.md", "Look at", "Read up")
    project.settle(age=5.0)
    rerun = project.ooda("show", "zeta")
    assert b"Read up the repository." in rerun.stdout


def test_a_context_file_edit_runs_again(project: Project) -> None:
    notes = project.root / "notes.txt"
    notes.write_text("first notes\n")
    project.settle()
    assert b"first notes" in project.ooda("show", "alpha", "--context", "notes.txt").stdout
    project.poison()
    _edit_same_size(notes, "first", "other")
    project.settle(age=5.0)
    assert b"other notes" in project.ooda("show", "alpha", "--context", "notes.txt").stdout


def test_creating_a_probed_absent_global_config_runs_again(project: Project) -> None:
    assert b"gamma" not in project.ooda("list").stdout
    project.poison()
    config_dir = project.home / ".config" / "ooda"
    config_dir.mkdir(parents=True)
    (config_dir / "ooda-config.yml").write_text(
        "procedures:\n  gamma:\n    act:\n      - content: G\n"
    )
    project.settle()
    assert b"gamma" in project.ooda("list").stdout


def test_creating_a_missing_fragment_runs_again(project: Project) -> None:
    (project.root / "ooda-config.yml").write_text(
        CONFIG + "  late:\n    act:\n      - path: late.md\n"
    )
    project.settle()
    before = project.ooda("list")
    assert b"late" in before.stdout
    assert b"fragment file not found: late.md" in before.stderr
    project.poison()
    (project.root / "late.md").write_text("Late act.\n")
    project.settle()
    after = project.ooda("list")
    assert b"late" in after.stdout
    assert after.stderr == b""


def test_a_workspace_config_created_runs_again(project: Project) -> None:
    (project.root / "ooda-config.yml").unlink()
    project.settle()
    assert b"alpha" not in project.ooda("list").stdout
    project.poison()
    (project.root / "ooda-config.yml").write_text(CONFIG)
    project.settle()
    assert b"alpha" in project.ooda("list").stdout


def test_an_environment_change_runs_again(project: Project) -> None:
    assert b"Iteration: 1 of 7" not in project.ooda("show", "build").stdout
    project.poison()
    changed = project.ooda("show", "build", OODA_LOOP_DEFAULT_MAX_ITERATIONS="7")
    assert b"Iteration: 1 of 7" in changed.stdout
    # An unrelated variable is part of the key too: the cache cannot know what is read.
    assert project.ooda("show", "build", SOME_OTHER_VARIABLE="1").stdout != CACHED


def test_a_different_command_line_runs_again(project: Project) -> None:
    assert project.ooda("show", "build").returncode == 0
    project.poison()
    assert b"Iteration: 2 of" in project.ooda("show", "build", "--iteration", "2").stdout
    assert b"Alpha act." in project.ooda("show", "alpha").stdout


def test_an_edited_package_module_runs_again(project: Project, tmp_path: Path) -> None:
    """A copy of the package on PYTHONPATH stands in for an editable install being edited."""
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(PACKAGE, copy / "pytest_ooda", ignore=shutil.ignore_patterns("__pycache__"))
    for data in ("procedures", "fragments"):
        if (PACKAGE.parent / data).is_dir():
            shutil.copytree(PACKAGE.parent / data, copy / data)
    env = {"PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}

    moment = time.time() - 10  # one time: the built-in layer's cache is named by it

    def settle() -> None:
        for path in [*copy.rglob("*"), copy]:
            os.utime(path, (moment, moment))

    settle()
    project.ooda("show", "alpha", module=True, **env)  # writes the built-in layer's cache
    settle()
    first = project.ooda("show", "alpha", "--phase", "act", module=True, **env)
    assert first.stdout == b"Alpha act.\n", first.stderr
    project.poison()
    show = copy / "pytest_ooda" / "cli" / "show.py"
    text = show.read_text()
    assert "text = compose_phase(" in text
    show.write_text(text.replace("text = compose_phase(", "text = 'Edited. ' + compose_phase("))
    edited = project.ooda("show", "alpha", "--phase", "act", module=True, **env)
    assert edited.stdout == b"Edited. Alpha act.\n"


def test_a_recently_changed_input_is_not_saved(project: Project) -> None:
    (project.root / "ooda-config.yml").write_text(CONFIG)  # just now: racy
    assert b"alpha" in project.ooda("list").stdout
    assert project.entries() == []


def test_the_opt_out(project: Project) -> None:
    for _ in range(2):
        assert project.ooda("show", "build", OODA_NO_CACHE="1").returncode == 0
    assert project.entries() == []
    project.ooda("show", "build", OODA_NO_CACHE="0")  # "0" does not opt out
    assert len(project.entries()) == 1


def test_failures_and_help_are_not_cached(project: Project) -> None:
    assert project.ooda("show", "nope").returncode == 2
    assert project.ooda("show", "--help").returncode == 0
    assert project.ooda("list", "--bogus").returncode == 1
    assert project.entries() == []


def test_a_corrupt_entry_is_ignored_and_replaced(project: Project) -> None:
    good = project.ooda("show", "build")
    (saved,) = project.entries()
    for garbage in (b"", b"\x00garbage", marshal.dumps((entry.FORMAT, b"k", 3, 4, 5))):
        saved.write_bytes(garbage)
        _same(good, project.ooda("show", "build"))
    project.poison()  # the last run saved a readable entry again
    assert project.ooda("show", "build").stdout == CACHED


def test_an_unwritable_cache_directory_is_ignored(project: Project) -> None:
    project.cache.write_text("a file where the cache directory would be")
    for _ in range(2):
        done = project.ooda("show", "alpha", "--phase", "act")
        assert (done.returncode, done.stdout, done.stderr) == (0, b"Alpha act.\n", b"")


def test_a_pipe_closed_early_is_not_an_error(project: Project) -> None:
    assert project.ooda("show", "build").returncode == 0
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
