"""The plugin's side of the settings table: which files it collects (no pytest
session needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ooda.plugin import _glob_regex, collects, mentions_live
from pytest_ooda.settings import session_settings


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
        tmp_path, procedure_files=("procedures/*.yml",), config=tmp_path / "sub/conf/x.yml"
    )
    assert collects(settings, tmp_path / "procedures/a.yml")
    assert not collects(settings, tmp_path / "procedures/a.txt")
    assert not collects(settings, Path("/elsewhere/procedures/a.yml"))
    assert collects(settings, tmp_path / "sub/conf/x.yml")


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
