"""``ooda history``: flaky told from broken over a fixture's sessions."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from sample_records import record, write

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.results import RunRecord


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _session(name: str, day: int, outcomes: dict[str, int], runs: int = 10) -> list[RunRecord]:
    return [
        replace(
            record(
                k < successes,
                scenario=scenario,
                run=k + 1,
                runs=runs,
                session=name,
                finished_at=f"2025-06-{day:02d}T00:00:{k:02d}+00:00",
            ),
            model="claude-sonnet",
        )
        for scenario, successes in outcomes.items()
        for k in range(runs)
    ]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    for day, (flaky, broken, fine) in enumerate([(7, 0, 10), (6, 0, 10), (8, 0, 10)], start=1):
        name = f"2025060{day}T000000Z-00000{day}"
        write(
            tmp_path / "results" / f"{name}.jsonl",
            _session(name, day, {"flaky": flaky, "broken": broken, "fine": fine}),
        )
    return tmp_path / "results"


def test_history_tells_flaky_from_broken(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ooda(["history", str(results)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("history of 3 scenario(s) over 3 session(s)\n")
    assert "build/broken: stable-fail: 0% (0/30, 95% CI 0%–11%) over 3 session(s)" in out
    assert "build/fine: stable-pass: 100% (30/30, 95% CI 89%–100%) over 3 session(s)" in out
    assert "build/flaky: flaky: 70% (21/30, 95% CI 52%–83%) over 3 session(s)" in out
    assert "change point" not in out


def test_one_scenario_as_markdown_into_the_step_summary(
    results: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert ooda(["history", str(results), "--scenario", "build/flaky", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| build/flaky | flaky | 70% | 52%–83% | 3 |" in out
    assert "build/fine" not in out
    assert summary.read_text() == out + "\n"


def test_no_results_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert ooda(["history"]) == 1
    assert "no results to report" in capsys.readouterr().err
