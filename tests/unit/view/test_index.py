"""The sessions ``ooda view`` shows: read as they grow, running told from ended by the
log's lock, an incomplete measurement named with the command that finishes it."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from sample_records import changed, record, sample, write

from pytest_ooda.results import ResultsLog, read_results
from pytest_ooda.view import ResultsIndex, unfinished
from pytest_ooda.view.index import gaps, is_running, resume_command

if TYPE_CHECKING:
    from pathlib import Path


def _series(records: list, name: str) -> list:  # type: ignore[type-arg]
    return [changed(item, session=name, series=name) for item in records]


def test_a_scenario_with_fewer_runs_than_planned_is_a_gap() -> None:
    planned = sample(3, 5)
    assert gaps(planned) == []
    [gap] = gaps(planned[:3])
    assert (gap.label, gap.have, gap.planned) == ("build/happy", 3, 5)
    # An interrupted run leaves its scenario incomplete whatever the count.
    cut = [*planned[:4], replace(planned[4], status="interrupted")]
    assert [item.label for item in gaps(cut)] == ["build/happy"]
    # A shard holds only its share: never a gap.
    assert gaps([changed(item, shard="1/2") for item in planned[:3]]) == []
    # A gate settled early needs no more runs.
    settled = {"success_rate": {"min": 0.5, "stop_early": True}}
    early = [changed(item, runs=40) for item in sample(12, 12, gates=settled)]
    assert gaps(early) == []


def test_the_resume_command_goes_on_in_the_same_directory() -> None:
    runs = [changed(item, nodeid=f"ooda-config.yml::build::live[happy#{item.head.run}]")
            for item in sample(2, 5)[:2]]  # fmt: skip
    assert resume_command(runs, "results/new") == (
        "pytest -m live ooda-config.yml::build --ooda-repeat=5 --ooda-results=results/new "
        "--ooda-resume"
    )


def test_a_running_session_holds_its_files_lock(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path, session="S")
    first, second = sample(1, 2)
    path = log.append(first)
    assert is_running(path)
    index = ResultsIndex([tmp_path])
    index.refresh()
    [session] = index.sessions.values()
    assert session.running
    assert [item.id for item in session.records] == [first.id]
    # Running and short of its runs: not interrupted.
    assert index.gaps(session) == []
    version = index.version
    log.append(second)
    assert index.refresh() > version
    assert [item.id for item in session.records] == [first.id, second.id]
    log.close()
    assert not is_running(path)
    index.refresh()
    assert not session.running


def test_sessions_are_read_as_they_grow_newest_first(tmp_path: Path) -> None:
    older = _series(sample(2, 2, finished_at="2025-01-01T00:00:00+00:00"), "20250101T000000Z")
    write(tmp_path / "20250101T000000Z.jsonl", older)
    index = ResultsIndex([tmp_path])
    index.refresh()
    newer = _series(sample(1, 3, finished_at="2025-02-01T00:00:00+00:00"), "20250201T000000Z")
    path = tmp_path / "shard" / "20250201T000000Z.jsonl"
    path.parent.mkdir()
    path.write_text(newer[0].to_line() + newer[1].to_line()[:20])
    index.refresh()
    assert [item.key for item in index.ordered()] == ["shard/20250201T000000Z", "20250101T000000Z"]
    latest = index.sessions["shard/20250201T000000Z"]
    # Not running (nothing holds the lock): the cut line is what a killed session left.
    assert len(latest.records) == 1
    assert "incomplete" in str(latest.warnings[0])
    [gap] = index.gaps(latest)
    assert (gap.have, gap.planned) == (1, 3)
    found = index.find_run(newer[0].id)
    assert found is not None
    assert found[0] is latest
    assert index.whole(*found) == newer[0]
    assert index.find_run("nope") is None


def test_a_resumed_series_is_judged_over_all_its_files(tmp_path: Path) -> None:
    runs = sample(3, 4)
    write(tmp_path / "a.jsonl", _series(runs[:2], "A"))
    later = [changed(item, session="B", series="A", started_at="2025-01-02") for item in runs[2:]]
    write(tmp_path / "b.jsonl", later)
    index = ResultsIndex([tmp_path])
    index.refresh()
    first, second = index.sessions["a"], index.sessions["b"]
    assert index.continued_by(first) is second
    assert index.gaps(first) == []
    assert index.gaps(second) == []


def test_files_outside_the_directory_are_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "x.jsonl", sample(1, 1))
    root = tmp_path / "results"
    write(root / "in.jsonl", sample(1, 1))
    os.symlink(outside, root / "link.jsonl")
    os.symlink(outside.parent, root / "linked-dir")
    index = ResultsIndex([root])
    index.refresh()
    assert list(index.sessions) == ["in"]


def test_unfinished_measurements_in_a_report(tmp_path: Path) -> None:
    write(tmp_path / "res" / "a.jsonl", _series(sample(2, 5)[:2], "A"))
    write(tmp_path / "res" / "b.jsonl", _series(sample(2, 2, scenario="sad"), "B"))
    [note] = unfinished(read_results([tmp_path / "res"], summary=True))
    assert note["text"] == "series A: build/happy has 2 of 5 runs"
    assert note["command"].endswith(f"--ooda-results={tmp_path / 'res'} --ooda-resume")
    assert record(True).series is None
