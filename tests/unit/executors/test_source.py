"""The project source shipped to workers: packed the same way every time, keyed by its
sha256, unpacked once per machine, and a plan's paths moved onto the worker's copy."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

import pytest

from pytest_ooda.errors import ExecutorError
from pytest_ooda.executors import pack_source, rebase, source as source_module, unpack_source
from pytest_ooda.executors.source import looks_secret


def _project(root: Path) -> Path:
    (root / "scenarios/greet").mkdir(parents=True)
    (root / "ooda-config.yml").write_text("procedures: {}\n")
    (root / "scenarios/greet/s.yml").write_text("procedure: greet\n")
    (root / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "tool.sh").chmod(0o755)
    for skipped in (".git/objects", ".ooda/results", "__pycache__", "node_modules/x"):
        (root / skipped).mkdir(parents=True)
        (root / skipped / "junk").write_text("junk")
    return root


def _names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return sorted(tar.getnames())


def test_a_project_packs_its_files_and_leaves_caches_and_results_out(tmp_path: Path) -> None:
    packed = pack_source(_project(tmp_path / "p"))
    assert _names(packed.data) == ["ooda-config.yml", "scenarios/greet/s.yml", "tool.sh"]
    assert packed.files == 3


def test_the_same_files_give_the_same_digest_and_a_change_another(tmp_path: Path) -> None:
    first = pack_source(_project(tmp_path / "a"))
    second = pack_source(_project(tmp_path / "b"))
    # Another directory, other times and owners: the same content, the same digest.
    assert first.digest == second.digest
    (tmp_path / "b/tool.sh").write_text("#!/bin/sh\necho bye\n")
    assert pack_source(tmp_path / "b").digest != first.digest


def test_excluded_directories_are_left_out(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    (root / "out").mkdir()
    (root / "out/log.jsonl").write_text("{}")
    assert "out/log.jsonl" not in _names(pack_source(root, exclude=[root / "out"]).data)


def test_in_a_git_work_tree_what_git_would_commit(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored/big.bin").write_text("data")
    subprocess.run(["git", "-C", str(root), "add", "ooda-config.yml"], check=True)
    names = _names(pack_source(root).data)
    # Tracked and untracked files, the ignored ones not, nor git's own directory.
    assert "ooda-config.yml" in names
    assert "scenarios/greet/s.yml" in names
    assert ".gitignore" in names
    assert not any(name.startswith(("ignored/", ".git/")) for name in names)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        (".env", True), (".env.local", True), ("app/.env.production", True),
        (".env.example", False), (".env.sample", False), ("keys/deploy.pem", True),
        ("id_ed25519", True), ("id_ed25519.pub", False), ("server.KEY", True),
        (".netrc", True), ("client_secret_123.json", True), ("prod.tfvars", True),
        ("environment.py", False), ("keys.py", False), ("README.md", False),
    ],
)  # fmt: skip
def test_a_name_that_says_it_holds_a_secret(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_untracked_secret_files_are_held_back_unless_named(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in (".env", "deploy.pem", ".env.example", "tracked.key"):
        (root / name).write_text("x\n")
    subprocess.run(["git", "-C", str(root), "add", "tracked.key"], check=True)
    packed = pack_source(root)
    assert packed.held_back == (".env", "deploy.pem")
    names = _names(packed.data)
    assert ".env.example" in names
    assert "tracked.key" in names  # in the repository already: shipped
    assert ".env" not in names
    named = pack_source(root, ship=[".env"])
    assert named.held_back == ("deploy.pem",)
    assert ".env" in _names(named.data)
    # Outside a git work tree every file is untracked: the same rule.
    shutil.rmtree(root / ".git")
    assert pack_source(root).held_back == (".env", "deploy.pem", "tracked.key")


def test_a_project_too_large_to_ship_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source_module, "MAX_SOURCE_BYTES", 10)
    with pytest.raises(ExecutorError, match="too much to ship"):
        pack_source(_project(tmp_path / "p"))


def test_unpacked_once_with_modes_kept(tmp_path: Path) -> None:
    packed = pack_source(_project(tmp_path / "p"))
    cache = tmp_path / "cache"
    where = unpack_source(packed.digest, packed.data, into=cache)
    assert where == cache / packed.digest
    assert (where / "scenarios/greet/s.yml").read_text() == "procedure: greet\n"
    assert (where / "tool.sh").stat().st_mode & 0o111
    # Present already: not unpacked again (the data is not even looked at).
    (where / "marker").write_text("kept")
    assert unpack_source(packed.digest, b"not a tarball", into=cache) == where
    assert (where / "marker").read_text() == "kept"
    assert [path.name for path in cache.iterdir()] == [packed.digest]


def test_data_that_does_not_match_its_digest_is_refused(tmp_path: Path) -> None:
    packed = pack_source(_project(tmp_path / "p"))
    with pytest.raises(ExecutorError, match="does not match"):
        unpack_source("0" * 64, packed.data, into=tmp_path / "cache")


def test_the_cache_directory_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OODA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert source_module.cache_dir() == tmp_path / "xdg/pytest-ooda"
    monkeypatch.setenv("OODA_CACHE_DIR", str(tmp_path / "own"))
    assert source_module.cache_dir() == tmp_path / "own"


class _Pair(NamedTuple):
    left: Path
    right: str


@dataclass(frozen=True)
class _Inner:
    file: Path | None
    paths: tuple[Path, ...] = ()


@dataclass(frozen=True)
class _Outer:
    root: Path
    inner: _Inner
    table: MappingProxyType[str, Path]
    listed: list[Path] = field(default_factory=list)
    pair: _Pair | None = None
    name: str = "/controller/project/kept-as-text"


def test_rebase_moves_every_path_under_a_root_and_nothing_else() -> None:
    old, new = Path("/controller/project"), Path("/worker/cache/abc")
    value = _Outer(
        root=old,
        inner=_Inner(old / "a.yml", (old / "b", Path("/elsewhere/c"))),
        table=MappingProxyType({"x": old / "x.md"}),
        listed=[old / "l"],
        pair=_Pair(old / "p", "text"),
    )
    moved = rebase(value, {old: new})
    assert moved.root == new
    assert moved.inner == _Inner(new / "a.yml", (new / "b", Path("/elsewhere/c")))
    assert dict(moved.table) == {"x": new / "x.md"}
    assert isinstance(moved.table, MappingProxyType)
    assert moved.listed == [new / "l"]
    assert moved.pair == _Pair(new / "p", "text")
    assert moved.name == value.name
    # What holds no such path is the very same object.
    untouched = _Inner(Path("/elsewhere/d"))
    assert rebase(untouched, {old: new}) is untouched
