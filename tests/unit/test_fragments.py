"""Fragment resolution (``builtin:`` and relative), loading and its cache."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from pytest_ooda import fragments
from pytest_ooda.config import FragmentAction, Location
from pytest_ooda.errors import FragmentError
from pytest_ooda.fragments import (
    builtin_root,
    list_builtin_fragments,
    load_fragment_text,
    resolve_fragment_path,
)

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def fake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "root"
    for rel in ("fragments/observe/b.md", "fragments/observe/a.md", "fragments/act/z.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"text of {rel}\n")
    (root / "fragments" / "observe" / "notes.txt").write_text("not a fragment")
    monkeypatch.setattr(fragments, "builtin_root", lambda: root)
    return root


def action(path: str | None, base: Path, content: str | None = None) -> FragmentAction:
    return FragmentAction(content, path, {}, base, Location(None, 1, 1))


def test_real_builtin_root_holds_builtin_yml() -> None:
    root = builtin_root()
    assert (root / "procedures" / "builtin.yml").is_file()
    assert (root / "fragments").is_dir()


def test_resolve_builtin(fake_root: Path, tmp_path: Path) -> None:
    resolved = resolve_fragment_path("builtin:fragments/observe/a.md", tmp_path / "anywhere")
    assert resolved == fake_root / "fragments" / "observe" / "a.md"


@pytest.mark.parametrize(
    "path",
    [
        "builtin:",
        "builtin:../x.md",
        "builtin:/etc/passwd",
        "builtin:fragments/../../x.md",
        "builtin:fragments\\observe\\a.md",
        "builtin:~/x.md",
    ],
)
def test_builtin_escapes_refused(fake_root: Path, path: str) -> None:
    with pytest.raises(FragmentError, match="leaves the built-in tree"):
        resolve_fragment_path(path, fake_root)


def test_builtin_symlink_leaving_tree_refused(fake_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    os.symlink(outside, fake_root / "fragments" / "observe" / "link.md")
    with pytest.raises(FragmentError, match="leaves the built-in tree"):
        resolve_fragment_path("builtin:fragments/observe/link.md", fake_root)


def test_missing_builtin_lists_phase(fake_root: Path) -> None:
    with pytest.raises(FragmentError) as info:
        resolve_fragment_path("builtin:fragments/observe/c.md", fake_root)
    assert info.value.message == "embedded fragment not found: builtin:fragments/observe/c.md"
    assert info.value.hint == (
        "did you mean 'builtin:fragments/observe/b.md'?\n"
        "  available built-ins for phase observe: a.md, b.md"
    )


def test_relative_resolution_and_missing(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "x.md").write_text("x")
    assert resolve_fragment_path("p/x.md", tmp_path) == tmp_path / "p" / "x.md"
    assert resolve_fragment_path("../x.md", tmp_path / "p" / "q") == tmp_path / "p" / "x.md"
    with pytest.raises(FragmentError) as info:
        resolve_fragment_path("p/y.md", tmp_path)
    assert info.value.message == f"fragment file not found: p/y.md (resolved to {tmp_path}/p/y.md)"
    with pytest.raises(FragmentError, match="fragment path is a directory: p "):
        resolve_fragment_path("p", tmp_path)


def test_symlink_loop_broken_link_and_fifo_are_named(tmp_path: Path) -> None:
    (tmp_path / "a.md").symlink_to("b.md")
    (tmp_path / "b.md").symlink_to("a.md")
    with pytest.raises(FragmentError, match=r"fragment path is a symbolic link loop: a.md"):
        resolve_fragment_path("a.md", tmp_path)
    (tmp_path / "gone.md").symlink_to("nowhere.md")
    with pytest.raises(FragmentError, match=r"broken symbolic link: gone.md") as info:
        resolve_fragment_path("gone.md", tmp_path)
    assert info.value.hint == "it points to nowhere.md"
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(FragmentError, match=r"fragment path is not a regular file: pipe.md"):
        resolve_fragment_path("pipe.md", tmp_path)


def test_unreadable_fragment_directory_is_a_fragment_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root ignores chmod 000, so simulate the EACCES an ordinary user would get.
    real_stat = os.stat

    def fake_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if str(path).startswith(str(tmp_path / "locked")):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", fake_stat)
    with pytest.raises(FragmentError, match=r"cannot access fragment file locked/x.md .*denied"):
        resolve_fragment_path("locked/x.md", tmp_path)


def test_list_builtin_fragments(fake_root: Path) -> None:
    assert list_builtin_fragments("observe") == [
        "builtin:fragments/observe/a.md",
        "builtin:fragments/observe/b.md",
    ]
    assert list_builtin_fragments() == [
        "builtin:fragments/act/z.md",
        "builtin:fragments/observe/a.md",
        "builtin:fragments/observe/b.md",
    ]
    assert list_builtin_fragments("orient") == []


def test_load_fragment_text_inline_and_cache(tmp_path: Path) -> None:
    assert load_fragment_text(action(None, tmp_path, content="hello")) == "hello"
    file = tmp_path / "f.md"
    file.write_text("one")
    assert load_fragment_text(action("f.md", tmp_path)) == "one"
    file.write_text("two!")
    assert load_fragment_text(action("f.md", tmp_path)) == "two!"


def test_load_fragment_rejects_binary(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"ok\n\xff\xfe junk")
    with pytest.raises(FragmentError, match="not valid UTF-8"):
        load_fragment_text(action("bin.md", tmp_path))


def test_builtin_paths_outside_shipped_dirs_are_not_found(fake_root: Path) -> None:
    (fake_root / "pyproject.toml").write_text("not shipped in the wheel")
    with pytest.raises(
        FragmentError, match=r"embedded fragment not found: builtin:pyproject\.toml"
    ):
        resolve_fragment_path("builtin:pyproject.toml", fake_root)
    with pytest.raises(FragmentError) as info:
        resolve_fragment_path("builtin:observe/a.md", fake_root)
    assert info.value.hint is not None
    assert info.value.hint.startswith("did you mean 'builtin:fragments/observe/a.md'?")


def test_stray_white_space_in_a_path_is_pointed_out(tmp_path: Path) -> None:
    (tmp_path / "x.md").write_text("x")
    with pytest.raises(FragmentError) as info:
        resolve_fragment_path("x.md ", tmp_path)
    assert info.value.hint == "the path has leading or trailing white space: 'x.md '"
