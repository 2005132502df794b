"""Loading the configuration (config/load.py): every tier, one file, the packaged built-ins,
the broken-config corpus, config paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ooda import fragments
from pytest_ooda.config import (
    load_builtin_config,
    load_config,
    load_config_file,
)
from pytest_ooda.errors import ConfigError, OodaError

from .helpers import load, write


def test_explicit_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config file not found: nope\.yml"):
        load_config("nope.yml", cwd=tmp_path, env={}, builtin=False, global_config=False)


def test_load_config_file_ignores_other_tiers(builtin_root: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "c.yml", "procedures:\n  p:\n    ai_cmd_alias: claude\n")
    cfg = load_config_file(path)
    assert set(cfg.procedures) == {"p"}
    assert cfg.files == (path,)


def test_builtin_config_is_cached_and_reloaded_on_change(builtin_root: Path) -> None:
    first = load_builtin_config()
    assert load_builtin_config().procedures["build"] == first.procedures["build"]
    yml = builtin_root / "procedures" / "builtin.yml"
    yml.write_text(yml.read_text() + "  extra:\n    observe:\n      - content: x\n")
    assert "extra" in load_builtin_config().procedures


CORPUS = Path(__file__).resolve().parents[2] / "broken_configs"


def _expectations(case: Path) -> tuple[str, str | None]:
    sidecar = case.with_suffix(".expected")
    if sidecar.exists():
        lines = sidecar.read_text(encoding="utf-8").splitlines()
    else:
        lines = [
            line[2:]
            for line in case.read_text(encoding="utf-8").splitlines()
            if line.startswith(("# error: ", "# hint: "))
        ]
    error = next(line[len("error: ") :] for line in lines if line.startswith("error: "))
    hint = next((line[len("hint: ") :] for line in lines if line.startswith("hint: ")), None)
    return error, hint


def test_corpus_is_big_enough() -> None:
    assert len(sorted(CORPUS.glob("*.yml"))) >= 40


def _corpus_error(name: str) -> OodaError:
    """The error a corpus file reports: the file's own when it does not load, else that of
    its one broken procedure (the others load; asking for it raises the same error)."""
    try:
        config = load_config(name, env={}, global_config=False)
    except OodaError as exc:
        return exc
    declared = [b for b in config.broken.values() if b.location.file is not None]
    assert len(declared) == 1, config.broken
    with pytest.raises(OodaError) as info:
        config.procedure(declared[0].name)
    assert str(info.value) == str(declared[0].error)
    assert type(info.value) is type(declared[0].error)
    return info.value


@pytest.mark.parametrize("case", sorted(CORPUS.glob("*.yml")), ids=lambda p: p.stem)
def test_broken_config_corpus(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected_error, expected_hint = _expectations(case)
    monkeypatch.chdir(CORPUS)
    err = _corpus_error(case.name)
    substitutions = {"{file}": case.name, "{dir}": str(CORPUS)}
    for key, value in substitutions.items():
        expected_error = expected_error.replace(key, value)
    assert str(err).splitlines()[0] == expected_error
    assert err.line is not None
    assert err.column is not None
    if expected_hint is not None:
        assert err.hint is not None
        assert expected_hint in err.hint


def test_missing_builtin_file_means_no_builtin_procedures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fragments, "builtin_root", lambda: tmp_path / "nothing")
    cfg = load_config(cwd=tmp_path, env={}, global_config=False)
    assert dict(cfg.procedures) == {}
    assert load_builtin_config().files == ()


def test_load_config_file_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config_file(tmp_path / "absent.yml")


def test_config_option_naming_a_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "confdir").mkdir()
    with pytest.raises(ConfigError, match=r"config file .*confdir is a directory"):
        load(tmp_path / "confdir")


def test_workspace_config_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "ooda-config.yml").mkdir()
    with pytest.raises(ConfigError, match=r"workspace config .*ooda-config.yml is a directory"):
        load_config(cwd=tmp_path, env={}, builtin=False, global_config=False)


def test_config_symlink_loop_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.yml").symlink_to(tmp_path / "b.yml")
    (tmp_path / "b.yml").symlink_to(tmp_path / "a.yml")
    with pytest.raises(ConfigError, match="symbolic link loop"):
        load(tmp_path / "a.yml")
