"""``ooda report --pr BASE NEW``: the comment's Markdown, its HTML page, the exit code
of a regression and the mistakes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sample_records import sample, write

from pytest_ooda.cli import main as ooda
from pytest_ooda.report import MARKER

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_a_regression_exits_1_with_the_comment_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base/s.jsonl", sample(19, 20, session="b", finished_at="2025-02"))
    new = write(tmp_path / "new/s.jsonl", sample(5, 20, session="n", prompt="q" * 64))
    older = write(tmp_path / "old/s.jsonl", sample(20, 20, session="o", finished_at="2025-01"))
    out = tmp_path / "comment.md"
    html = tmp_path / "report.html"
    argv = ["report", "--pr", str(base), str(new), "--output", str(out), "--html", str(html)]
    argv += ["--report-url", "https://ci.example/1", "--history", str(older)]
    assert ooda(argv) == 1
    text = out.read_text()
    assert text.startswith(MARKER)
    assert "| build/happy | :x: regressed | 19/20 95% | 5/20 25% |" in text
    assert "[HTML report](https://ci.example/1)" in text
    assert "history (2 session(s) on the base side): flaky: 98% (39/40" in text
    assert "regressed significantly: build/happy" in capsys.readouterr().err
    assert "<title>base against this change</title>" in html.read_text()


def test_no_regression_prints_the_comment_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.jsonl", sample(10, 20))
    new = write(tmp_path / "new.jsonl", sample(12, 20))
    assert ooda(["report", "--pr", str(base), str(new)]) == 0
    assert capsys.readouterr().out.startswith(MARKER + "\n## pytest-ooda: prompt changes measured")


def test_options_that_belong_to_one_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.jsonl", sample(1, 1))
    assert ooda(["report", "--pr", str(base), str(base), "--check"]) == 1
    assert "--pr BASE NEW reads its two sides" in capsys.readouterr().err
    assert ooda(["report", str(base), "--report-url", "x"]) == 1
    assert "--report-url goes with --pr BASE NEW" in capsys.readouterr().err
