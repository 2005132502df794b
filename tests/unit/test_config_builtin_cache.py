"""The parsed built-in procedures are cached beside builtin.yml, as bytecode is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda import fragments
from pytest_ooda.config import parse

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def builtin_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of builtin.yml that builtin_layer() reads, with no cache yet."""
    copy = tmp_path / "procedures" / "builtin.yml"
    copy.parent.mkdir()
    shutil.copyfile(fragments.builtin_procedures_file(), copy)
    monkeypatch.setattr(fragments, "builtin_procedures_file", lambda: copy)
    monkeypatch.setattr(parse, "_builtin_cache", {})
    return copy


def _caches(builtin: Path) -> list[Path]:
    return sorted((builtin.parent / "__pycache__").glob("*.layer.pickle"))


def test_the_first_load_writes_the_cache_and_the_next_reads_it(builtin_copy: Path) -> None:
    parsed = parse.builtin_layer()
    [cache] = _caches(builtin_copy)
    parse._builtin_cache.clear()
    cached = parse.builtin_layer()
    assert cached is not None
    assert parsed is not None
    assert cached.procedures.keys() == parsed.procedures.keys()
    build = cached.procedures["build"].fields
    assert build.keys() == parsed.procedures["build"].fields.keys()
    # A damaged cache is rebuilt, not trusted.
    cache.write_bytes(b"not a pickle")
    parse._builtin_cache.clear()
    assert parse.builtin_layer() is not None
    assert cache.read_bytes() != b"not a pickle"


def test_an_edit_to_the_file_makes_a_new_cache(builtin_copy: Path) -> None:
    parse.builtin_layer()
    text = builtin_copy.read_text()
    builtin_copy.write_text(text + "\n# edited\n")
    parse._builtin_cache.clear()
    parse.builtin_layer()
    assert len(_caches(builtin_copy)) == 2


def test_a_read_only_installation_parses_every_time(builtin_copy: Path) -> None:
    if os.geteuid() == 0:
        # root writes anywhere; make the cache directory a file instead.
        (builtin_copy.parent / "__pycache__").write_text("")
    else:
        builtin_copy.parent.chmod(0o555)
    try:
        assert parse.builtin_layer() is not None
    finally:
        builtin_copy.parent.chmod(0o755)
    assert (builtin_copy.parent / "__pycache__").is_file() or not _caches(builtin_copy)


def test_show_with_no_config_file_never_imports_the_yaml_parser(tmp_path: Path) -> None:
    code = (
        "import sys, io, contextlib\n"
        "from pytest_ooda.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['show', 'build']) == 0\n"
        "print('yaml' in sys.modules)\n"
    )
    env = {**os.environ, "OODA_CONFIG_HOME": str(tmp_path / "none")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        for _ in range(2)
    ]
    # The first run may have had to write the cache; the second reads it.
    assert runs[1].returncode == 0, runs[1].stderr
    assert runs[1].stdout.strip() == "False"
