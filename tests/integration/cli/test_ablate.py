"""``ooda ablate`` against a scripted agent (a real executable) whose success depends
on the prompt's text: the decisive fragment is keep, the inert ones cut, within the
budget; a tight budget stops the runs and leaves can't tell yet."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from html_browser import Dom, chromium
from scripted_agent import COST, KEY, loop_lines
from view_server import ViewServer

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/decisive.md").write_text(f"Do the {KEY} first.\n")
    (tmp_path / "prompts/inert.md").write_text("Be polite to everyone around.\n")
    (tmp_path / "ooda-config.yml").write_text(
        loop_lines(tmp_path / "bin")
        + "procedures:\n  fix:\n    observe:\n      - path: prompts/decisive.md\n"
        "      - content: Some words that change nothing.\n"
        "    act:\n      - path: prompts/inert.md\n"
    )
    (tmp_path / "scenarios/fix").mkdir(parents=True)
    (tmp_path / "scenarios/fix/one.yml").write_text(
        "procedure: fix\nmax_iterations: 1\nexpect: {status: success}\niterations: []\n"
    )
    monkeypatch.chdir(tmp_path)
    for name in ("OODA_CONFIG_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "no-global"))
    return tmp_path


def _spent(results: Path) -> tuple[int, float]:
    lines = [
        json.loads(line)
        for path in results.glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    return len(lines), sum(line["usage"]["cost"] for line in lines)


def test_the_decisive_fragment_is_keep_and_the_inert_ones_cut_within_the_budget(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "ablate",
        "scenarios/fix/one.yml",
        "--runs",
        "10",
        "--margin",
        "30pp",
        "--budget",
        "0.50",
    ]
    assert ooda([*argv, "--html", "ablation.html"]) == 0
    out = capsys.readouterr().out
    rows = {
        line.split()[0]: line for line in out.splitlines() if line.startswith(("observe[", "act["))
    }
    assert rows["observe[0]"].rstrip().endswith("keep")
    assert rows["observe[1]"].rstrip().endswith("cut")
    assert rows["act[0]"].rstrip().endswith("cut")
    assert "+100 pp" in rows["observe[0]"]
    assert "0/10" in rows["observe[0]"]
    runs, cost = _spent(project / ".ooda/results")
    # Four arms of ten rounds: every arm settled at the second look.
    assert runs == 40
    assert cost == pytest.approx(runs * COST)
    assert cost <= 0.50
    assert f"40 run(s), ${cost:.4f}" in out
    assert "of a budget of $0.50" in out
    # The page, as a browser builds it; and the viewer's page of the session.
    page = (project / "ablation.html").as_uri()
    dom = Dom()
    dom.feed(chromium("--dump-dom", page, profile=project / "profile").stdout)
    verdicts = [row["data-verdict"] for row in dom.find("tr") if "data-verdict" in row]
    assert verdicts == ["keep", "cut", "cut"]
    # ooda report shows the ablation under its table, and in its HTML report.
    assert ooda(["report", ".ooda/results", "--html", "report.html"]) == 0
    report = capsys.readouterr().out
    assert "\nablation of fix/one: full prompt 10/10" in report
    # Judged as the ablation judged it (its margin, alpha and rounds are in its records).
    assert report.count(" cut\n") == 2
    assert (
        '<section class="ablation" data-scenario="fix/one">'
        in (project / "report.html").read_text()
    )
    (log,) = (project / ".ooda/results").glob("*.jsonl")
    with ViewServer(str(project / ".ooda/results")) as server:
        status, html, _ = server.get(f"/session/{log.stem}")
        assert status == 200
        assert f'href="/ablation/{log.stem}">ablation</a>' in html
        status, html, _ = server.get(f"/ablation/{log.stem}")
        assert status == 200
        assert html.count('<tr data-verdict="cut">') == 2
        assert '<tr data-verdict="keep">' in html


def test_a_tight_budget_stops_the_runs_and_leaves_can_t_tell(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ooda(["ablate", "scenarios/fix/one.yml", "--runs", "10", "--budget", "0.15"]) == 0
    out = capsys.readouterr().out
    runs, cost = _spent(project / ".ooda/results")
    assert runs == 15
    assert cost <= 0.15 + 1e-9
    assert "stopped: budget spent: $0.1500 of $0.15 after 15 run(s)" in out
    verdicts = [line for line in out.splitlines() if line.startswith(("observe[", "act["))]
    assert len(verdicts) == 3
    assert all("can't tell yet (" in line or line.rstrip().endswith("keep") for line in verdicts)
    assert any("can't tell yet (" in line for line in verdicts)
