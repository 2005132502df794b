"""``ooda report --pr BASE NEW``: the comment's Markdown, its HTML page, the exit code
of a regression and the mistakes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from sample_records import sample, write

from pytest_ooda.cli import main as ooda
from pytest_ooda.report import MARKER

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.results import RunRecord


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


def test_the_history_tells_a_change_that_broke_from_one_within_its_noise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ten runs a side cannot tell 10/10 from 7/10 (inconclusive), but sixty earlier runs
    # that never failed can: this broke. A scenario that always failed a third of its
    # runs failing a third here is within its noise.
    def sides(scenario: str, before: int, base: int, new: int) -> list[list[RunRecord]]:
        older = [
            sample(before, 20, scenario=scenario, session=f"o{day}", finished_at=f"2025-01-0{day}")
            for day in (1, 2, 3)
        ]
        return [
            [record for session in older for record in session],
            sample(base, 10, scenario=scenario, session="b", finished_at="2025-02"),
            sample(new, 10, scenario=scenario, session="n", prompt="q" * 64),
        ]

    steady = sides("steady", 20, 10, 7)
    flaky = sides("flaky", 13, 7, 6)
    older, base, new = (
        write(tmp_path / f"{name}.jsonl", steady[index] + flaky[index])
        for index, name in enumerate(("older", "base", "new"))
    )
    argv = ["report", "--pr", str(base), str(new), "--history", str(older)]
    assert ooda(argv) == 0
    out = capsys.readouterr().out
    assert "| build/steady | :grey_question: inconclusive | 10/10 100% | 7/10 70% |" in out
    notes = [line for line in out.splitlines() if line.startswith("- history")]
    assert len(notes) == 2
    flaky_note, steady_note = notes
    assert steady_note.startswith(
        "- history (4 session(s) on the base side): stable-pass: 100% (70/70"
    )
    assert "; this broke: 7/10 (70%) here, and it never failed before (p 0.00" in steady_note
    assert flaky_note.startswith("- history (4 session(s) on the base side): flaky: 66% (46/70")
    assert "; within its noise: 6/10 (60%) here (p 0.7" in flaky_note


def test_no_regression_prints_the_comment_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.jsonl", sample(10, 20))
    new = write(tmp_path / "new.jsonl", sample(12, 20))
    assert ooda(["report", "--pr", str(base), str(new)]) == 0
    assert capsys.readouterr().out.startswith(MARKER + "\n## pytest-ooda: prompt changes measured")


def test_a_history_not_kept_yet_is_said_and_the_comment_written_all_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base/s.jsonl", sample(10, 10, session="b"))
    new = write(tmp_path / "new/s.jsonl", sample(10, 10, session="n"))
    (tmp_path / "empty").mkdir()
    argv = ["report", "--pr", str(base), str(new)]
    argv += ["--history", str(tmp_path / "cache"), "--history", str(tmp_path / "empty")]
    assert ooda(argv) == 0
    out, err = capsys.readouterr()
    assert "history (1 session(s) on the base side): stable-pass: 100% (10/10" in out
    assert f"no history from {tmp_path / 'cache'}: not found" in err
    assert f"no history from {tmp_path / 'empty'}: no results files (*.jsonl) in it" in err
    # A file that is there but is no results is still a mistake.
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    assert ooda([*argv[:4], "--history", str(tmp_path / "broken.jsonl")]) == 2


def test_the_selection_names_why_counts_the_rest_and_nothing_touched_is_no_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    selection = {
        "ref": "main",
        "commit": "c" * 40,
        "scenarios": [
            {
                "label": "build/happy",
                "file": "scenarios/build/happy.yml",
                "touched": True,
                "reasons": ["observe[0] prompts/shared.md"],
            },
            {
                "label": "build/other",
                "file": "s/o.yml",
                "touched": True,
                "reasons": ["new scenario"],
            },
            {"label": "build/quiet", "file": "s/q.yml", "touched": False, "reasons": []},
        ],
    }
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(selection))
    # The untouched scenario's regression on these sides is not this change's.
    base = write(
        tmp_path / "base/s.jsonl",
        sample(10, 10, session="b") + sample(10, 10, session="b", scenario="quiet"),
    )
    new = write(
        tmp_path / "new/s.jsonl",
        sample(9, 10, session="n") + sample(0, 10, session="n", scenario="quiet"),
    )
    assert ooda(["report", "--pr", str(base), str(new), "--changed", str(changed)]) == 0
    out = capsys.readouterr().out
    assert "2 scenario(s) touched by this change (1 untouched: replayed, not run)" in out
    assert "| build/happy |" in out
    assert "build/quiet" not in out
    assert "- touched: observe[0] prompts/shared.md" in out
    assert "Touched, but no run on either side to compare: build/other (new scenario)." in out
    # Nothing touched: the sides hold nothing, and the comment says so.
    selection["scenarios"] = [selection["scenarios"][2]]
    changed.write_text(json.dumps(selection))
    (tmp_path / "empty/base").mkdir(parents=True)
    (tmp_path / "empty/new").mkdir()
    argv = ["report", "--pr", str(tmp_path / "empty/base"), str(tmp_path / "empty/new")]
    assert ooda([*argv, "--changed", str(changed)]) == 0
    out = capsys.readouterr().out
    assert "0 scenario(s) touched by this change (1 untouched: replayed, not run)" in out
    assert "No scenario's prompt or workspace changed: nothing was run live." in out
    assert out.rstrip().endswith("no touched scenario regressed significantly")
    missing = ["report", "--pr", str(tmp_path / "no/base"), str(tmp_path / "no/new")]
    assert ooda([*missing, "--changed", str(changed)]) == 0
    assert "nothing was run live" in capsys.readouterr().out
    # Without the selection empty sides are still a mistake; a wrong file is one too.
    assert ooda(argv) == 2
    changed.write_text("[1, 2]")
    assert ooda([*argv, "--changed", str(changed)]) == 1
    assert f"--changed {changed}: not a selection" in capsys.readouterr().err
    assert ooda(["report", str(base), "--changed", str(changed)]) == 1
    assert "--changed goes with --pr BASE NEW" in capsys.readouterr().err


def test_options_that_belong_to_one_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.jsonl", sample(1, 1))
    assert ooda(["report", "--pr", str(base), str(base), "--check"]) == 1
    assert "--pr BASE NEW reads its two sides" in capsys.readouterr().err
    assert ooda(["report", str(base), "--report-url", "x"]) == 1
    assert "--report-url goes with --pr BASE NEW" in capsys.readouterr().err
