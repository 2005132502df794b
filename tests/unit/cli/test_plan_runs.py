"""``ooda plan-runs``: runs per arm and their cost, from past results."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sample_records import record, write

from pytest_ooda.cli import main as ooda
from pytest_ooda.stats import runs_needed

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def results(tmp_path: Path) -> Path:
    runs = [record(k < 16, cost=0.10, tokens=5000, run=k + 1, runs=20) for k in range(20)]
    return write(tmp_path / "past.jsonl", runs)


def test_runs_per_arm_and_what_they_cost(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        ooda(
            [
                "plan-runs",
                "scenarios/build/happy.yml",
                "--detect",
                "10pp",
                "--results",
                str(results),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    needed = runs_needed(0.8, 0.1)
    assert out[0] == (
        "build/happy: from 20 past run(s) (20 valid, 0 infrastructure error(s)): success rate "
        "80%, $0.1000 a run, 5,000 tokens a run"
    )
    assert out[1] == (
        f"to detect a change of 10 pp (two-sided, alpha 0.05, power 80%): {needed} valid runs "
        f"per arm; start {needed} per arm"
    )
    assert out[2] == f"both arms: {2 * needed} runs, about ${2 * needed * 0.1:,.2f}"
    assert out[3].startswith(
        f"each arm: pytest -m live -k happy --ooda-repeat={needed} --ooda-budget="
    )


def test_more_power_needs_more_runs(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        ooda(
            [
                "plan-runs",
                "build/happy",
                "--detect",
                "0.2",
                "--power",
                "0.95",
                "--results",
                str(results),
            ]
        )
        == 0
    )
    assert f"{runs_needed(0.8, 0.2, power=0.95)} valid runs per arm" in capsys.readouterr().out


def test_an_unknown_scenario_and_a_bad_difference(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ooda(["plan-runs", "build/other", "--detect", "10pp", "--results", str(results)]) == 1
    assert "no past runs of build/other" in capsys.readouterr().err
    assert ooda(["plan-runs", "build/happy", "--detect", "150pp"]) == 1
    assert "between 0 and 1" in capsys.readouterr().err
