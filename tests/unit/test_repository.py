"""A run's workspace as a git repository, written in process: the same commit git's own
``init``, ``add -A`` and ``commit`` make of the same files, a clean status, branch
``main``, whatever the user's git configuration, and no process started."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import pytest

from pytest_ooda import workspace
from pytest_ooda.repository import init_repository

if TYPE_CHECKING:
    from pathlib import Path

_IDENTITY = {
    "GIT_AUTHOR_NAME": "pytest-ooda",
    "GIT_AUTHOR_EMAIL": "pytest-ooda@localhost",
    "GIT_COMMITTER_NAME": "pytest-ooda",
    "GIT_COMMITTER_EMAIL": "pytest-ooda@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
_BLOB = bytes(range(256)) * 300


def _git(path: Path, *argv: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *argv], cwd=path, capture_output=True, text=True, check=True, env=env
    )
    return done.stdout


def _tree(root: Path) -> None:
    """Files git sorts in a particular order, every kind of entry, and what git leaves
    out (an empty directory, a nested ``.git``, a FIFO)."""
    root.mkdir(parents=True)
    (root / "a.txt").write_text("hi\n")
    (root / "a").mkdir()
    (root / "a" / "x").write_text("x")
    (root / "a.b").write_text("dot")
    (root / "a-b").write_text("dash")
    (root / "empty" / "inside").mkdir(parents=True)
    (root / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("a.txt", root / "link")
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "f.py").write_text("print(1)\n")
    (root / "ünï cödé.md").write_text("u")
    (root / "data.bin").write_bytes(_BLOB)
    os.mkfifo(root / "pipe")
    (root / "nested" / ".git").mkdir(parents=True)
    (root / "nested" / ".git" / "config").write_text("not ours")
    (root / "nested" / "kept.txt").write_text("kept")


def _made_by_git(path: Path) -> None:
    env = {**os.environ, **_IDENTITY}
    _git(path, "-c", "init.defaultBranch=main", "init", "-q", "--template=", env=env)
    _git(path, "add", "-A", env=env)
    _git(path, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "ooda workspace", env=env)


@pytest.mark.parametrize("files", [True, False], ids=["files", "empty"])
def test_the_commit_is_the_one_git_makes_of_the_same_files(tmp_path: Path, files: bool) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    if files:
        _tree(ours)
        _tree(theirs)
    else:
        ours.mkdir()
        theirs.mkdir()
    commit = init_repository(ours)
    _made_by_git(theirs)
    assert commit == _git(theirs, "rev-parse", "HEAD").strip()
    assert _git(ours, "rev-parse", "HEAD").strip() == commit
    assert _git(ours, "ls-files", "-s") == _git(theirs, "ls-files", "-s")


def test_the_agent_sees_a_clean_repository_on_main_it_can_commit_to(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _tree(root)
    init_repository(root)
    assert _git(root, "status", "--porcelain") == ""
    assert _git(root, "fsck", "--strict") == ""
    assert _git(root, "branch", "--show-current") == "main\n"
    assert _git(root, "log", "--format=%an <%ae> %ad %s", "--date=iso-strict") == (
        "pytest-ooda <pytest-ooda@localhost> 2000-01-01T00:00:00+00:00 ooda workspace\n"
    )
    (root / "a.txt").write_text("changed\n")
    (root / "new.txt").write_text("new\n")
    assert _git(root, "status", "--porcelain") == " M a.txt\n?? new.txt\n"
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "agent's work")
    assert _git(root, "log", "--format=%s") == "agent's work\nooda workspace\n"


def test_the_users_git_configuration_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A global ignore file, line-ending conversion and another default branch would all
    # change what `git add -A` and `git init` make; the workspace is made without them.
    config = tmp_path / "gitconfig"
    (tmp_path / "ignore").write_text("*.txt\n")
    config.write_text(
        "[init]\n\tdefaultBranch = trunk\n"
        f"[core]\n\tautocrlf = true\n\texcludesFile = {tmp_path / 'ignore'}\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    commits = []
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        (root / "hello.txt").write_text("hi\r\n")
        commits.append(init_repository(root))
        assert _git(root, "branch", "--show-current") == "main\n"
        assert _git(root, "ls-files") == "hello.txt\n"
    assert commits[0] == commits[1]


def test_a_fresh_workspace_starts_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "source"
    _tree(source)
    (source / "pipe").unlink()  # a copy of a workspace refuses a FIFO

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    monkeypatch.setattr(os, "posix_spawn", no_process)
    made = workspace.fresh_repository(source, tmp_path / "run" / "workspace")
    monkeypatch.undo()
    assert (made / "sub" / "deep" / "f.py").read_text() == "print(1)\n"
    assert _git(made, "status", "--porcelain") == ""


def test_an_existing_repository_is_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f").write_text("f")
    first = init_repository(root)
    (root / "g").write_text("g")
    workspace.git_init(root)
    assert _git(root, "rev-parse", "HEAD").strip() == first
    assert _git(root, "status", "--porcelain") == "?? g\n"
