"""A project as it was at a revision, from git's objects: its files written out (modes,
links that stay inside), a subdirectory project by its own paths, and a working tree's
files as git sees them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from git_project import git, write

from pytest_ooda.impact import RefTree
from pytest_ooda.impact.gitref import blob_id, worktree_blobs

if TYPE_CHECKING:
    from pathlib import Path


def test_blob_ids_are_gits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, "a.txt", "hello\n")
    assert blob_id(b"hello\n") == git(tmp_path, "hash-object", "a.txt")


def test_a_subdirectory_project_is_read_at_its_own_paths(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, "outside.md", "not the project's\n")
    write(tmp_path, "proj/prompts/a.md", "A\n")
    write(tmp_path, "proj/run.sh", "#!/bin/sh\n")
    (tmp_path / "proj/run.sh").chmod(0o755)
    os.symlink("prompts/a.md", tmp_path / "proj/inside")
    os.symlink("../outside.md", tmp_path / "proj/escapes")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "x")
    write(tmp_path, "proj/prompts/a.md", "changed, not committed\n")
    tree = RefTree.read(tmp_path / "proj", "main")
    assert tree.prefix == "proj"
    assert set(tree.entries) == {"prompts/a.md", "run.sh", "inside", "escapes"}
    target = tmp_path / "out"
    target.mkdir()
    tree.write_to(target)
    assert (target / "prompts/a.md").read_text() == "A\n"
    assert os.access(target / "run.sh", os.X_OK)
    assert (target / "inside").read_text() == "A\n"
    assert not (target / "escapes").exists()
    assert not (target / "escapes").is_symlink()
    assert not (target / "outside.md").exists()
    assert tree.blobs_under("prompts") == {"a.md": blob_id(b"A\n")}


def test_the_working_tree_as_git_sees_it(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, ".gitignore", "*.log\n")
    write(tmp_path, "ws/kept.txt", "1\n")
    write(tmp_path, "ws/gone.txt", "2\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "x")
    (tmp_path / "ws/gone.txt").unlink()
    write(tmp_path, "ws/new.txt", "3\n")
    write(tmp_path, "ws/noise.log", "4\n")
    assert worktree_blobs(tmp_path, "ws") == {
        "kept.txt": blob_id(b"1\n"),
        "new.txt": blob_id(b"3\n"),
    }
    assert worktree_blobs(tmp_path, "missing") == {}


def test_outside_a_repository_is_a_usage_error(tmp_path: Path) -> None:
    from pytest_ooda.errors import UsageError

    with pytest.raises(UsageError, match="git rev-parse"):
        RefTree.read(tmp_path, "HEAD")
