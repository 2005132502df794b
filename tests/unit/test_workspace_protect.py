"""``restore_protected`` (workspace.py): protected paths put back as the run's source
holds them, whatever the agent did to them, and what it did named."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

from pytest_ooda.workspace import restore_protected

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    (source / "tests").mkdir(parents=True)
    (source / "tests" / "check.sh").write_text("#!/bin/sh\npytest -q\n")
    (source / "tests" / "check.sh").chmod(0o755)
    (source / "tests" / "data.txt").write_text("expected\n")
    (source / "src").mkdir()
    (source / "src" / "app.py").write_text("print('hi')\n")
    (source / "Makefile").write_text("check:\n\tsh tests/check.sh\n")
    return source


def _copy(source: Path, tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    shutil.copytree(source, workspace, symlinks=True)
    return workspace


def test_untouched_paths_are_left_alone(tmp_path: Path) -> None:
    source = _source(tmp_path)
    workspace = _copy(source, tmp_path)
    check = workspace / "tests" / "check.sh"
    before = check.stat().st_ino
    assert restore_protected(workspace, source, ["tests", "Makefile"]) == ()
    assert check.stat().st_ino == before  # not even rewritten


def test_a_cheating_agents_edits_are_undone_and_named(tmp_path: Path) -> None:
    source = _source(tmp_path)
    workspace = _copy(source, tmp_path)
    # The classic cheat: the check always passes. And a few more.
    (workspace / "tests" / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (workspace / "tests" / "data.txt").unlink()
    (workspace / "tests" / "conftest.py").write_text("collect_ignore = ['*']\n")
    (workspace / "Makefile").chmod(0o755)
    (workspace / "src" / "app.py").write_text("print('fixed')\n")  # the agent's real work
    changed = restore_protected(workspace, source, ["tests", "Makefile"])
    assert changed == ("Makefile", "tests/check.sh", "tests/conftest.py", "tests/data.txt")
    assert (workspace / "tests" / "check.sh").read_text() == "#!/bin/sh\npytest -q\n"
    assert os.access(workspace / "tests" / "check.sh", os.X_OK)
    assert (workspace / "tests" / "data.txt").read_text() == "expected\n"
    assert not (workspace / "tests" / "conftest.py").exists()
    assert not os.access(workspace / "Makefile", os.X_OK)
    # What is not protected keeps the agent's work.
    assert (workspace / "src" / "app.py").read_text() == "print('fixed')\n"


def test_a_protected_path_the_source_lacks_is_removed(tmp_path: Path) -> None:
    source = _source(tmp_path)
    workspace = _copy(source, tmp_path)
    (workspace / "reward.txt").write_text("1.0\n")
    assert restore_protected(workspace, source, ["reward.txt", "logs"]) == ("reward.txt",)
    assert not (workspace / "reward.txt").exists()
    # A scenario without a workspace directory: every protected path starts absent.
    (workspace / "reward.txt").write_text("1.0\n")
    assert restore_protected(workspace, None, ["reward.txt"]) == ("reward.txt",)
    assert not (workspace / "reward.txt").exists()


def test_links_are_removed_never_written_through(tmp_path: Path) -> None:
    source = _source(tmp_path)
    workspace = _copy(source, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "check.sh").write_text("the agent's own file\n")
    # The protected directory becomes a link out of the workspace.
    shutil.rmtree(workspace / "tests")
    (workspace / "tests").symlink_to(outside)
    changed = restore_protected(workspace, source, ["tests/check.sh"])
    assert changed == ("tests/check.sh",)
    assert not (workspace / "tests").is_symlink()
    assert (workspace / "tests" / "check.sh").read_text() == "#!/bin/sh\npytest -q\n"
    assert (outside / "check.sh").read_text() == "the agent's own file\n"
    # A protected file replaced by a link to a file outside: the link goes, not its target.
    (workspace / "Makefile").unlink()
    (workspace / "Makefile").symlink_to(outside / "check.sh")
    assert restore_protected(workspace, source, ["Makefile"]) == ("Makefile",)
    assert not (workspace / "Makefile").is_symlink()
    assert (outside / "check.sh").read_text() == "the agent's own file\n"


def test_a_link_in_the_source_is_restored_as_a_link(tmp_path: Path) -> None:
    source = _source(tmp_path)
    (source / "tests" / "latest").symlink_to("data.txt")
    workspace = _copy(source, tmp_path)
    (workspace / "tests" / "latest").unlink()
    (workspace / "tests" / "latest").symlink_to("check.sh")
    assert restore_protected(workspace, source, ["tests"]) == ("tests/latest",)
    assert os.readlink(workspace / "tests" / "latest") == "data.txt"


def test_a_locked_directory_is_unlocked_and_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An agent running as the user may `chmod 000` a protected directory. Root reads it
    # anyway, so the lock is played by os: listing it fails until it is chmod-ed.
    source = _source(tmp_path)
    workspace = _copy(source, tmp_path)
    (workspace / "tests" / "check.sh").write_text("exit 0\n")
    locked = {os.fspath(workspace / "tests")}
    scandir, chmod = os.scandir, os.chmod

    def guarded_scandir(path: Any) -> Any:
        if not isinstance(path, int) and os.fspath(path) in locked:  # rmtree passes fds
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    def unlocking_chmod(path: Any, mode: int, **kw: Any) -> None:
        locked.discard(os.fspath(path))
        chmod(path, mode, **kw)

    monkeypatch.setattr(os, "scandir", guarded_scandir)
    monkeypatch.setattr(os, "chmod", unlocking_chmod)
    assert restore_protected(workspace, source, ["tests"]) == ("tests",)
    monkeypatch.undo()
    assert (workspace / "tests" / "check.sh").read_text() == "#!/bin/sh\npytest -q\n"
    assert (workspace / "tests" / "data.txt").read_text() == "expected\n"


def test_a_file_of_the_sources_size_is_compared_by_content_any_other_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda import workspace as module

    source = _source(tmp_path)
    workspace = _copy(source, tmp_path)
    # Same size, other content: only its digest tells.
    (workspace / "tests" / "data.txt").write_text("EXPECTED\n")
    # A sparse file of a tebibyte in a protected file's place: read, it would take the
    # session's memory (read whole) or hours (in blocks).
    with (workspace / "tests" / "check.sh").open("r+b") as handle:
        handle.truncate(1 << 40)
    read: list[str] = []
    real = module._file_kind

    def reading(full: Path, *rest: Any) -> Any:
        read.append(full.name)
        return real(full, *rest)

    monkeypatch.setattr(module, "_file_kind", reading)
    changed = restore_protected(workspace, source, ["tests"])
    assert changed == ("tests/check.sh", "tests/data.txt")
    assert "check.sh" in read  # the source's own, to know what it holds
    assert read.count("check.sh") == 1  # never the workspace's
    assert (workspace / "tests" / "check.sh").read_text() == "#!/bin/sh\npytest -q\n"
    assert (workspace / "tests" / "data.txt").read_text() == "expected\n"


def test_a_pipe_put_in_a_files_place_is_not_waited_on(tmp_path: Path) -> None:
    from pytest_ooda.workspace import _file_kind

    # Between the walk's look (a regular file) and its read, a process the agent left
    # running puts a pipe with no writer there: opening it must not block the session.
    pipe = tmp_path / "check.sh"
    os.mkfifo(pipe)
    kind = _file_kind(pipe, 0o644, "12")
    assert kind[0] == "special"


def test_a_protected_file_gone_under_the_walk_is_changed_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda import workspace as module

    source = _source(tmp_path)
    workspace = _copy(source, tmp_path)
    real = module._file_kind

    def vanishing(full: Path, *rest: Any) -> Any:
        # A process the agent left running removes the file between look and read.
        if full.is_relative_to(workspace):
            raise FileNotFoundError(2, "No such file or directory", str(full))
        return real(full, *rest)

    monkeypatch.setattr(module, "_file_kind", vanishing)
    assert restore_protected(workspace, source, ["tests"]) == (
        "tests/check.sh",
        "tests/data.txt",
    )
    assert (workspace / "tests" / "data.txt").read_text() == "expected\n"
