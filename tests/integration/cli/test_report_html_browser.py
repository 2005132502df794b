"""The HTML report of a real live session, opened in headless Debian Chromium: the DOM
the browser builds (``--dump-dom``) and a screenshot of the rendered page."""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from html_browser import Dom, chromium
from scipy import stats as scipy_stats

from pytest_ooda.cli import main as ooda
from pytest_ooda.report.pages import BAR_WIDTH

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "random_agent.py"
RUNS = 6


def test_the_html_report_renders_in_chromium(project: Project, tmp_path: Path) -> None:
    project.scenario(
        "coin",
        f"procedure: greet\nmax_iterations: 3\nrepeat: {RUNS}\n"
        "expect: {success_rate: {min: 0.5}}\niterations: []\n",
    )
    command = f"{sys.executable} {AGENT} {tmp_path / 'state'} 11 0.4"
    project.run("-m", "live", "--ooda-ai-cmd", command).assert_outcomes(passed=RUNS)
    report = tmp_path / "report.html"
    assert ooda(["report", str(project.path / ".ooda/results"), "--html", str(report)]) == 0

    dumped = chromium("--dump-dom", report.as_uri(), profile=tmp_path / "profile").stdout
    dom = Dom()
    dom.feed(dumped)
    [section] = dom.find("section", **{"class": "scenario"})
    assert section["data-scenario"] == "greet/coin"
    runs = dom.find("details", **{"class": "run"})
    assert len(runs) == RUNS
    successes = sum(run["data-status"] == "success" for run in runs)
    # The success rate and its Wilson interval, drawn to scale.
    bars = dom.find("svg", **{"class": "rate-bar"})
    assert float(bars[0]["data-rate"]) == pytest.approx(successes / RUNS)
    wilson = scipy_stats.binomtest(successes, RUNS).proportion_ci(0.95, method="wilson")
    whisker = dom.find("line", **{"class": "ci"})[0]
    assert float(whisker["x1"]) == pytest.approx(wilson.low * BAR_WIDTH, abs=0.01)
    assert float(whisker["x2"]) == pytest.approx(wilson.high * BAR_WIDTH, abs=0.01)
    # How the runs ended, as the terminal table words it: outcomes, why in grey.
    failed = RUNS - successes
    outcomes = f'<span class="verdict verdict-success">success {successes}</span>'
    if failed:
        outcomes += (
            f' <span class="verdict verdict-failure">failure {failed}</span>'
            f' <span class="muted why">(max-iters {failed})</span>'
        )
    # In the summary table and in the scenario's figures; no column of loop statuses.
    assert dumped.count(f'<td class="outcomes">{outcomes}</td>') == 2
    assert "loop ended" not in dumped
    # The histogram holds every run once.
    bins = [element for element in dom.find("rect") if "data-iterations" in element]
    assert sum(int(element["data-runs"]) for element in bins) == RUNS
    # Per run: the iterations table, the output tails, the files changed.
    tables = dom.find("table", **{"class": "iterations"})
    assert len(tables) == RUNS
    assert any(text.startswith("run 0 iteration 1") for text in dom.pre)
    assert "<code>work.txt</code> created" in dumped
    # Self-contained: nothing to fetch, nothing to run.
    assert not dom.find("script")
    assert not [e for e in dom.elements if e[1].get("src") or e[0] == "link"]

    shot = tmp_path / "report.png"
    chromium(
        f"--screenshot={shot}",
        "--window-size=1280,1000",
        report.as_uri(),
        profile=tmp_path / "profile",
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 1000)
    # A blank page compresses to almost nothing; this one has tables, bars and text.
    assert len(data) > 30_000
