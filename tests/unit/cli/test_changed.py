"""``ooda changed REF``: the scenarios a change touched, as text and as JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from git_project import git, make_project, write

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_selection_as_text_and_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "prompts/farewell.md", "Find who is leaving now.\n")
    assert ooda(["changed", "HEAD"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(": 1 of 3 scenario(s) touched")
    assert out[1].split() == ["touched", "farewell/bye", "observe[1]", "prompts/farewell.md"]
    assert sorted(line.split()[1] for line in out[2:]) == ["count/numbers", "greet/hello"]
    assert ooda(["changed", "HEAD", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    touched = {item["label"]: item["reasons"] for item in data["scenarios"] if item["touched"]}
    assert touched == {"farewell/bye": ["observe[1] prompts/farewell.md"]}
    assert data["ref"] == "HEAD"
    assert len(data["commit"]) == 40


def test_the_scenario_folder_and_config_files_as_the_plugin_reads_them(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(project, "mv", "scenarios", "cases")
    git(project, "commit", "-q", "-m", "moved")
    write(project, "prompts/count.md", "Find the odd numbers.\n")
    assert ooda(["changed", "HEAD", "--scenario-dir", "cases"]) == 0
    out = capsys.readouterr().out
    assert "1 of 3 scenario(s) touched" in out
    assert "touched   count/numbers" in out
    assert ooda(["changed", "HEAD", "--procedure-files", "nothing/*.yml"]) == 0
    assert "0 of 0 scenario(s) touched" in capsys.readouterr().out


def test_mistakes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ooda(["changed", "no-such-branch"]) == 1
    assert "'no-such-branch' names no commit" in capsys.readouterr().err
    assert ooda(["changed", "HEAD", "--config", "missing.yml"]) == 1
    assert "--config: config file not found" in capsys.readouterr().err
