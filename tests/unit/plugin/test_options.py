"""Option specs, settings and the collection globs (no pytest session needed)."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from pytest_ooda.plugin.options import _glob_regex, collects, session_settings
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
    settings = session_settings(
        {"procedure_files": ("procedures/*.yml",), "config": "conf/x.yml"},
        rootpath=tmp_path,
        inipath=tmp_path / "pytest.ini",
        invocation_dir=tmp_path / "sub",
        sources={"config": "cli"},
    )
    assert settings.config_file == tmp_path / "sub/conf/x.yml"
    assert collects(settings, tmp_path / "procedures/a.yml")
    assert not collects(settings, tmp_path / "procedures/a.txt")
    assert not collects(settings, Path("/elsewhere/procedures/a.yml"))
    assert collects(settings, tmp_path / "sub/conf/x.yml")


def test_ini_paths_are_relative_to_the_ini_file(tmp_path: Path) -> None:
    (tmp_path / "cfg/conf").mkdir(parents=True)
    (tmp_path / "cfg/conf/x.yml").write_text("{}")
    (tmp_path / "cfg/qa").mkdir()
    settings = session_settings(
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
        session_settings(
            values, rootpath=tmp_path, inipath=tmp_path / "pytest.ini", sources=sources
        )
    assert fnmatch.fnmatchcase(str(raised.value).splitlines()[0], message), str(raised.value)


def test_repeat_results_and_shard_settings(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    defaults = session_settings({}, rootpath=tmp_path, inipath=None)
    assert defaults.repeat is None
    assert defaults.runs_for(None) == 1
    assert defaults.runs_for(7) == 7
    assert defaults.results_dir == tmp_path / ".ooda/results"
    # The default directory: its .ooda/ gets a .gitignore from whatever writes first.
    assert defaults.ignore_dir == tmp_path / ".ooda"
    assert defaults.shard is None

    from_ini = session_settings(
        {"repeat": "4", "results": "out"},
        rootpath=tmp_path,
        inipath=tmp_path / "sub/pytest.ini",
        sources={"repeat": "ini", "results": "ini"},
    )
    # The ini key yields to a scenario's own repeat:, and names its own directory.
    assert (from_ini.runs_for(None), from_ini.runs_for(2)) == (4, 2)
    assert from_ini.results_dir == tmp_path / "sub/out"
    assert from_ini.ignore_dir is None
    # An option the ini file set is named as its key, in messages and provenance.
    assert from_ini.label("repeat") == "ini option ooda_repeat"
    assert str(from_ini.provenance("repeat")) == "ini (ini option ooda_repeat)"

    from_cli = session_settings(
        {"repeat": "3", "results": "out", "shard": " 2 / 5 "},
        rootpath=tmp_path,
        inipath=None,
        invocation_dir=tmp_path / "sub",
        sources={"repeat": "cli", "results": "cli"},
    )
    assert (from_cli.runs_for(None), from_cli.runs_for(9)) == (3, 3)
    assert from_cli.results_dir == tmp_path / "sub/out"
    assert from_cli.shard == (2, 5)
    assert from_cli.label("repeat") == "--ooda-repeat"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"repeat": "0"}, "--ooda-repeat: expected a number of runs from 1 to 10000, got '0'"),
        ({"repeat": "1e3"}, "--ooda-repeat: expected a number of runs from 1 to 10000, got '1e3'"),
        ({"results": " "}, "--ooda-results: expected a directory, got an empty value"),
        ({"shard": "2"}, "--ooda-shard: expected K/N (share K of N, e.g. 2/4), got '2'"),
        ({"shard": "5/4"}, "--ooda-shard: '5/4': K must be from 1 to N and N at least 1*"),
    ],
)
def test_bad_measuring_options(tmp_path: Path, values: dict[str, object], message: str) -> None:
    with pytest.raises(pytest.UsageError) as raised:
        session_settings(values, rootpath=tmp_path, inipath=None)
    assert fnmatch.fnmatchcase(str(raised.value), message), str(raised.value)
