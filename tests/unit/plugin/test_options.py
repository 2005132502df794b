"""Option specs, settings and the collection globs (no pytest session needed)."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from pytest_ooda.plugin.options import PluginSettings, _glob_regex
from pytest_ooda.plugin.state import mentions_live


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
    (tmp_path / "sub/conf").mkdir(parents=True)
    (tmp_path / "sub/conf/x.yml").write_text("{}")
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
    assert settings.matches(tmp_path / "sub/conf/x.yml")


def test_ini_paths_are_relative_to_the_ini_file(tmp_path: Path) -> None:
    (tmp_path / "cfg/conf").mkdir(parents=True)
    (tmp_path / "cfg/conf/x.yml").write_text("{}")
    (tmp_path / "cfg/qa").mkdir()
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
def testmentions_live(expr: str, expected: bool) -> None:
    assert mentions_live(expr) is expected


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"config": "missing.yml"}, "ini option ooda_config: config file not found: *missing.yml"),
        ({"config": "."}, "ini option ooda_config: not a file: *"),
        ({"scenario_dir": "qa"}, "ini option ooda_scenario_dir: scenario directory not found: *qa"),
        ({"procedure_files": ("../x/*.yml",)}, "ini option ooda_procedure_files: '../x/*.yml'*"),
        ({"procedure_files": ("/x/*.yml",)}, "ini option ooda_procedure_files: '/x/*.yml'*"),
        ({"ai_cmd": "a 'b"}, "ini option ooda_ai_cmd: cannot split*"),
        ({"ai_cmd": "  "}, "ini option ooda_ai_cmd: the AI command is empty"),
        ({"lint_severity": ("X",)}, "ini option ooda_lint_severity: expected RULE=SEVERITY*"),
    ],
)
def test_unusable_values_are_usage_errors_naming_their_source(
    tmp_path: Path, values: dict[str, object], message: str
) -> None:
    sources = {name: "ini" for name in values}
    with pytest.raises(pytest.UsageError) as raised:
        PluginSettings.from_values(
            values, rootpath=tmp_path, inipath=tmp_path / "pytest.ini", sources=sources
        )
    assert fnmatch.fnmatchcase(str(raised.value).splitlines()[0], message), str(raised.value)
