"""``ooda report``: outputs, merging, gates, exit codes, step summaries."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sample_records import changed, record, sample, write

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.results import RunRecord


GATES = {"success_rate": {"min": 0.8}}


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_report_merges_files_and_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "a/one.jsonl", sample(6, 8))
    write(tmp_path / "b/two.jsonl", sample(2, 2))
    assert ooda(["report", str(tmp_path / "a"), str(tmp_path / "b/two.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ooda report: 1 scenario(s), 10 run(s) from 2 file(s)\n")
    assert "build/happy    10   8       0   80%" in out


def test_report_check_gates_on_the_merged_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "shard-1.jsonl", sample(4, 5, gates=GATES))
    write(tmp_path / "shard-2.jsonl", sample(3, 5, gates=GATES))
    # 7 of 10 < 80%: reported either way, an exit code only with --check.
    assert ooda(["report", str(tmp_path)]) == 0
    assert "FAILED build/happy: success rate 70% (7/10" in capsys.readouterr().out
    assert ooda(["report", "--check", str(tmp_path)]) == 1
    assert "1 scenario(s) missed their aggregate expectations" in capsys.readouterr().err
    write(tmp_path / "shard-3.jsonl", sample(10, 10, gates=GATES))
    assert ooda(["report", "--check", str(tmp_path)]) == 0
    assert "passed build/happy: success rate >= 80%" in capsys.readouterr().out


def test_markdown_and_the_github_step_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    results = write(tmp_path / "r.jsonl", sample(3, 4))
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert ooda(["report", "--markdown", "--title", "Nightly", str(results)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Nightly\n")
    assert "| build/happy | 4 | 3 | 0 | 75% |" in out
    assert summary.read_text() == "# earlier step\n" + out + "\n"
    assert ooda(["compare", str(results), str(results)]) == 0
    assert "## ooda compare" in summary.read_text()


def test_an_unwritable_step_summary_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    results = write(tmp_path / "r.jsonl", sample(3, 4))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))
    assert ooda(["report", str(results)]) == 0
    assert "warning: cannot append to $GITHUB_STEP_SUMMARY" in capsys.readouterr().err


def test_html_is_written_atomically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write(tmp_path / "r.jsonl", sample(3, 4))
    target = tmp_path / "out" / "report.html"
    assert ooda(["report", str(results), "--html", str(target)]) == 0
    text = target.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "build/happy" in text
    assert [path.name for path in target.parent.iterdir()] == ["report.html"]
    assert f"wrote {target}" in capsys.readouterr().err
    assert ooda(["report", str(results), "--html", str(tmp_path)]) == 1
    assert "--html" in capsys.readouterr().err


def test_unreadable_results_exit_2_with_the_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(record(True).to_line() + "{oops}\n")
    assert ooda(["report", str(bad)]) == 2
    assert f"{bad}:2:2: not a results record" in capsys.readouterr().err
    assert ooda(["compare", str(bad), str(bad)]) == 2
    assert ooda(["report", str(tmp_path / "missing.jsonl")]) == 2
    assert "results file not found" in capsys.readouterr().err


def test_a_cut_off_last_record_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "r.jsonl", sample(3, 4))
    path.write_text(path.read_text() + record(True).to_line()[:-30])
    assert ooda(["report", str(path)]) == 0
    captured = capsys.readouterr()
    assert f"warning: {path}:5: the last record is incomplete" in captured.err
    assert "build/happy     4   3" in captured.out


def test_report_rejects_a_bad_k(capsys: pytest.CaptureFixture[str]) -> None:
    assert ooda(["report", "a.jsonl", "--k", "0"]) == 1
    assert "argument --k: expected an integer >= 1, got 0" in capsys.readouterr().err


def test_a_report_over_two_prompt_versions_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "before.jsonl", sample(5, 5))
    write(tmp_path / "after.jsonl", sample(2, 5, prompt="q" * 64))
    assert ooda(["report", str(tmp_path)]) == 0
    assert (
        "note: build/happy mixes 2 prompt versions (results from before and after a prompt "
        "change?); compare them with `ooda compare BASE NEW`" in capsys.readouterr().out
    )
    assert ooda(["report", "--markdown", str(tmp_path)]) == 0
    assert "> note: build/happy mixes 2 prompt versions" in capsys.readouterr().out


def test_check_with_no_gate_in_scope_says_so_and_fails_when_gates_are_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "r.jsonl", sample(3, 4))
    assert ooda(["report", "--check", str(tmp_path)]) == 0
    assert "no aggregate expectation" in capsys.readouterr().err
    assert ooda(["report", "--check", "--require-gates", str(tmp_path)]) == 1
    assert "nothing was checked" in capsys.readouterr().err
    write(tmp_path / "r.jsonl", sample(4, 4, gates=GATES))
    assert ooda(["report", "--check", "--require-gates", str(tmp_path)]) == 0


def test_report_without_results_reads_the_default_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda.cli.report import DEFAULT_RESULTS
    from pytest_ooda.settings import DEFAULT_RESULTS_DIR

    assert "/".join(DEFAULT_RESULTS_DIR) == DEFAULT_RESULTS
    monkeypatch.chdir(tmp_path)
    assert ooda(["report"]) == 1
    assert "run `pytest -m live` first" in capsys.readouterr().err
    write(tmp_path / ".ooda/results/session.jsonl", sample(3, 4))
    assert ooda(["report"]) == 0
    assert "1 scenario(s), 4 run(s) from 1 file(s)" in capsys.readouterr().out


def test_a_large_html_report_pages_its_runs_and_replaces_only_its_own_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 401 runs: a page of figures and run rows, and pages of 200, 200 and 1 run's details.
    results = write(tmp_path / "r.jsonl", sample(300, 401))
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    (target.parent / "report-9.html").write_text('<meta name="generator" content="pytest-ooda 0">')
    assert ooda(["report", str(results), "--html", str(target)]) == 0
    assert "and 3 page(s) of runs beside it" in capsys.readouterr().err
    names = sorted(path.name for path in target.parent.iterdir())
    # An earlier report's page beyond this report's is removed.
    assert names == ["report-2.html", "report-3.html", "report-4.html", "report.html"]
    assert 'href="report-2.html#build/happy/200"' in target.read_text()
    assert 'href="report-4.html#build/happy/401"' in target.read_text()
    assert 'id="build/happy/401"' in (target.parent / "report-4.html").read_text()
    # A file of that name that is not a page of ours is never replaced.
    (target.parent / "report-2.html").write_text("my notes\n")
    assert ooda(["report", str(results), "--html", str(target)]) == 1
    assert "not an ooda report page" in capsys.readouterr().err
    assert (target.parent / "report-2.html").read_text() == "my notes\n"


def test_open_without_a_display_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    results = write(tmp_path / "r.jsonl", sample(1, 1))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert ooda(["report", str(results), "--open"]) == 1
    assert "--open opens the --html file" in capsys.readouterr().err
    assert ooda(["report", str(results), "--html", str(tmp_path / "r.html"), "--open"]) == 0
    assert "--open: no display here" in capsys.readouterr().err


def test_open_starts_the_users_browser_on_the_written_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    results = write(tmp_path / "r.jsonl", sample(1, 1))
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("BROWSER", f"{sys.executable} {browser} %s")
    import webbrowser

    monkeypatch.setattr(webbrowser, "_tryorder", None)
    target = tmp_path / "r.html"
    assert ooda(["report", str(results), "--html", str(target), "--open"]) == 0
    for _ in range(100):
        if opened.exists() and opened.read_text():
            break
        import time

        time.sleep(0.05)
    assert opened.read_text() == target.resolve().as_uri()


def test_an_interrupted_measurement_is_named_with_the_command_that_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [changed(item, series="S", nodeid="ooda-config.yml::build::live[happy]")
            for item in sample(3, 10, gates=GATES)[:3]]  # fmt: skip
    write(tmp_path / "res" / "S.jsonl", runs)
    assert ooda(["report", str(tmp_path / "res")]) == 0
    out = capsys.readouterr().out
    assert "incomplete: series S: build/happy has 3 of 10 runs; its gates were judged" in out
    assert (
        f"To go on: pytest -m live ooda-config.yml::build --ooda-repeat=10 "
        f"--ooda-results={tmp_path / 'res'} --ooda-resume"
    ) in out


def test_check_judges_each_session_on_its_own_unless_pooled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Session 1 alone misses its gate (2 of 5); session 2, into the same folder, meets
    it (4 of 5): pooled, 6 of 10 would pass and hide session 1's failure."""
    gate = {"success_rate": {"min": 0.5}}
    first = sample(2, 5, gates=gate, session="20250101T000000Z-aaaaaa")
    second = sample(4, 5, gates=gate, session="20250102T000000Z-bbbbbb")
    write(tmp_path / "20250101T000000Z-aaaaaa.jsonl", first)
    write(tmp_path / "20250102T000000Z-bbbbbb.jsonl", second)
    assert ooda(["report", "--check", str(tmp_path), "--html", str(tmp_path / "r.html")]) == 1
    out = capsys.readouterr().out
    assert "session 20250101T000000Z-aaaaaa: FAILED build/happy: success rate 40% (2/5" in out
    assert "session 20250102T000000Z-bbbbbb: passed build/happy: success rate >= 50%" in out
    # The runs list tells the two sessions' run 1 apart.
    page = (tmp_path / "r.html").read_text()
    assert page.count("of session <code>20250101T000000Z-aaaaaa</code>") == 5
    assert page.count("of session <code>20250102T000000Z-bbbbbb</code>") == 5
    # Pooled on purpose: 6 of 10.
    assert ooda(["report", "--check", "--pool", str(tmp_path)]) == 0
    assert "passed build/happy: success rate >= 50%" in capsys.readouterr().out
    # A session resumed (the same series) is one measurement with the one it resumes.
    resumed = [
        record(index < 1, run=index + 1, runs=5, gates=gate, session="20250103T000000Z-c",
               series="20250101T000000Z-aaaaaa")
        for index in range(5)
    ]  # fmt: skip
    write(tmp_path / "20250103T000000Z-c.jsonl", resumed)
    assert ooda(["report", "--check", str(tmp_path)]) == 1
    assert "session 20250101T000000Z-aaaaaa: FAILED build/happy: success rate 30% (3/10" in (
        capsys.readouterr().out
    )


def test_the_shards_of_one_measurement_are_judged_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    def shard(records: list[RunRecord], number: int, session: str) -> list[RunRecord]:
        return [changed(r, shard=f"{number}/2", session=session) for r in records]

    write(tmp_path / "a.jsonl", shard(sample(5, 5, gates=GATES), 1, "S1"))
    write(tmp_path / "b.jsonl", shard(sample(3, 5, gates=GATES), 2, "S2"))
    # 8 of 10 over both shards: one measurement, one verdict (no session prefix).
    assert ooda(["report", "--check", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\npassed build/happy: success rate >= 80%\n" in out
