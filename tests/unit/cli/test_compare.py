"""``ooda compare``: verdicts, exit codes, merging each side, --alpha and --detect."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sample_records import changed, record, sample, write

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.mark.parametrize(
    ("base", "new", "code", "verdict"),
    [
        ((19, 20), (8, 20), 1, "regressed"),
        ((8, 20), (19, 20), 0, "improved"),
        ((15, 20), (14, 20), 0, "inconclusive"),
    ],
)
def test_compare_exit_codes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    base: tuple[int, int],
    new: tuple[int, int],
    code: int,
    verdict: str,
) -> None:
    write(tmp_path / "base.jsonl", sample(*base))
    write(tmp_path / "new.jsonl", sample(*new))
    assert ooda(["compare", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl")]) == code
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("build/"))
    assert row.endswith(verdict)


def test_compare_merges_several_files_per_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "base/1.jsonl", sample(5, 5))
    write(tmp_path / "base/2.jsonl", sample(5, 5))
    write(tmp_path / "more-base.jsonl", sample(5, 5))
    write(tmp_path / "new-1.jsonl", sample(2, 5))
    write(tmp_path / "new-2.jsonl", sample(3, 5))
    code = ooda(
        [
            "compare",
            str(tmp_path / "base"),
            str(tmp_path / "new-1.jsonl"),
            "--base",
            str(tmp_path / "more-base.jsonl"),
            "--new",
            str(tmp_path / "new-2.jsonl"),
        ]
    )
    out = capsys.readouterr().out
    assert out.startswith("base: 15 run(s) from 3 file(s); new: 10 run(s) from 2 file(s)\n")
    assert "build/happy  15/15 100%  5/10 50%  0 / 0   -50 pp" in out
    assert code == 1


@pytest.mark.parametrize("alpha", ["0", "1", "x", "-0.1"])
def test_compare_rejects_a_bad_alpha(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], alpha: str
) -> None:
    assert ooda(["compare", "a", "b", "--alpha", alpha]) == 1
    assert "argument --alpha: expected a number between 0 and 1" in capsys.readouterr().err


def test_a_small_drop_is_inconclusive_and_says_what_could_be_detected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ooda.stats import min_detectable_difference, runs_needed

    write(tmp_path / "base.jsonl", sample(5, 5))
    errors = [
        record(False, outcome="error", error_reason="rate-limit: HTTP 429", status="aborted")
        for _ in range(2)
    ]
    write(tmp_path / "new.jsonl", [*sample(5, 10), *errors])
    code = ooda(
        ["compare", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"), "--detect", "20%"]
    )
    out = capsys.readouterr().out
    assert code == 0
    detectable = min_detectable_difference(5, 10, 1.0)
    assert detectable is not None
    # The two errors are shown, and left out of the test: 5/10, not 5/12.
    assert "build/happy  5/5 100%  5/10 50%  0 / 2   -50 pp" in out
    assert out.rstrip().endswith(
        "no scenario regressed significantly (two-sided Fisher's exact test, alpha 0.05)"
    )
    assert "inconclusive" in out.splitlines()[3]
    assert (
        f"build/happy: inconclusive: these runs could only detect a change of "
        f"{detectable * 100:.0f} pp or more (80% power, alpha 0.05)"
    ) in out
    assert (
        f"build/happy: to detect a change of 20 pp (80% power, alpha 0.05) needs "
        f"{runs_needed(1.0, 0.2)} valid run(s) per side (has 5)"
    ) in out
    assert (
        ooda(["compare", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"), "--markdown"])
        == 0
    )
    markdown = capsys.readouterr().out
    assert "| inconclusive |" in markdown
    shown = f"{detectable * 100:.0f} pp"
    assert f"- build/happy: inconclusive: these runs could only detect a change of {shown}" in (
        markdown
    )


@pytest.mark.parametrize("value", ["0", "1", "abc", "150%"])
def test_compare_rejects_a_bad_detect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    assert ooda(["compare", "a", "b", "--detect", value]) == 1
    assert "argument --detect: expected a rate difference" in capsys.readouterr().err


def test_compare_by_variant_writes_its_page_and_refuses_detect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    runs = [
        *[changed(item, variant="good") for item in sample(9, 10)],
        *[changed(item, variant="bad") for item in sample(1, 10)],
    ]
    results = write(tmp_path / "r.jsonl", runs)
    page = tmp_path / "variants.html"
    assert ooda(["compare", "--by", "variant", str(results), "--html", str(page)]) == 0
    assert f"wrote {page}" in capsys.readouterr().err
    html = page.read_text()
    assert '<tr data-variant="good">' in html
    assert '<tr data-scenario="build/happy" data-winner="good">' in html
    assert 'href="#run-build/happy@bad/1"' in html
    code = ooda(["compare", "--by", "variant", str(results), "--detect", "0.2"])
    assert code == 1
    assert "--detect is for two sides (BASE NEW)" in capsys.readouterr().err


def test_compare_html_has_the_runs_of_both_sides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "base.jsonl", sample(9, 10))
    write(tmp_path / "new.jsonl", sample(2, 10, fragment="f" * 64))
    page = tmp_path / "c.html"
    argv = [
        "compare",
        str(tmp_path / "base.jsonl"),
        str(tmp_path / "new.jsonl"),
        "--html",
        str(page),
    ]
    assert ooda(argv) == 1
    html = page.read_text()
    assert 'id="base-build/happy/1"' in html
    assert 'id="new-build/happy/10"' in html
    assert "observe[0] prompts/look.md" in html
