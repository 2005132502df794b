"""Option specs, settings and the collection globs (no pytest session needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ooda.collect import PluginSettings, _glob_regex, _mentions_live


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("procedures/*.yml", "procedures/builtin.yml", True),
        ("procedures/*.yml", "procedures/scenarios/build/x.yml", False),
        ("procedures/*.yml", "other/procedures/x.yml", False),
        ("ooda-config.yml", "ooda-config.yml", True),
        ("ooda-config.yml", "tests/ooda-config.yml", False),
        ("**/ooda-config.yml", "tests/fixtures/ooda-config.yml", True),
        ("**/ooda-config.yml", "ooda-config.yml", True),
        ("flows/**", "flows/a/b/c.yml", True),
        ("flows/?.yml", "flows/a.yml", True),
        ("flows/?.yml", "flows/ab.yml", False),
        ("a.b/*.yml", "aXb/x.yml", False),
    ],
)
def test_glob(glob: str, path: str, matches: bool) -> None:
    assert bool(_glob_regex(glob).match(path)) is matches


def test_settings_match_files_under_the_rootdir(tmp_path: Path) -> None:
    settings = PluginSettings.from_values(
        {"procedure_files": ("procedures/*.yml",), "config": "conf/x.yml"},
        rootpath=tmp_path,
        inipath=tmp_path / "pytest.ini",
        invocation_dir=tmp_path / "sub",
        sources={"config": "cli"},
    )
    assert settings.config_file == tmp_path / "sub/conf/x.yml"
    assert settings.matches(tmp_path / "procedures/a.yml")
    assert not settings.matches(tmp_path / "procedures/a.txt")
    assert not settings.matches(Path("/elsewhere/procedures/a.yml"))
    (tmp_path / "sub/conf").mkdir(parents=True)
    (tmp_path / "sub/conf/x.yml").write_text("{}")
    assert settings.matches(tmp_path / "sub/conf/x.yml")


def test_ini_paths_are_relative_to_the_ini_file(tmp_path: Path) -> None:
    settings = PluginSettings.from_values(
        {"config": "conf/x.yml", "scenario_dir": "qa"},
        rootpath=tmp_path / "root",
        inipath=tmp_path / "cfg/pytest.ini",
        sources={"config": "ini"},
    )
    assert settings.config_file == tmp_path / "cfg/conf/x.yml"
    assert settings.scenario_dir == tmp_path / "cfg/qa"
    assert (settings.record_mode, settings.drift, settings.builtin) == ("none", "fail", False)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("live", True),
        ("not slow and live", True),
        ("liveness", False),
        ("", False),
        ("slow", False),
    ],
)
def test_mentions_live(expr: str, expected: bool) -> None:
    assert _mentions_live(expr) is expected
