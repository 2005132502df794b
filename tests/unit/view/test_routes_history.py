"""The viewer's history page (every scenario across the sessions) and an ablation
session's page, and the links that lead to them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sample_records import changed, record, write

from pytest_ooda.results import FragmentHash, RunRecord
from pytest_ooda.view import ResultsIndex, Viewer

if TYPE_CHECKING:
    from pathlib import Path


def _session(name: str, day: int, successes: int, runs: int, model: str) -> list[RunRecord]:
    return [
        replace(
            record(
                k < successes,
                run=k + 1,
                runs=runs,
                session=name,
                finished_at=f"2025-06-{day:02d}T00:00:{k:02d}+00:00",
            ),
            id=f"{name}-{k}",
            model=model,
        )
        for k in range(runs)
    ]


def _arm(variant: str, outcomes: list[bool]) -> list[RunRecord]:
    return [
        changed(
            record(
                ok, procedure="fix", scenario="one", run=k, runs=10, session="20250701T000000Z-abl"
            ),
            id=f"{variant}-{k}",
            variant=variant,
            fragments=(FragmentHash("observe", 0, "prompts/key.md", "a" * 64),),
        )
        for k, ok in enumerate(outcomes, start=1)
    ]


def test_the_history_page_tells_flaky_from_broken(tmp_path: Path) -> None:
    write(
        tmp_path / "20250601T000000Z-aaaaaa.jsonl",
        _session("20250601T000000Z-aaaaaa", 1, 10, 10, "m1"),
    )
    write(
        tmp_path / "20250602T000000Z-bbbbbb.jsonl",
        _session("20250602T000000Z-bbbbbb", 2, 10, 10, "m1"),
    )
    write(
        tmp_path / "20250603T000000Z-cccccc.jsonl",
        _session("20250603T000000Z-cccccc", 3, 1, 10, "m2"),
    )
    write(
        tmp_path / "20250604T000000Z-dddddd.jsonl",
        _session("20250604T000000Z-dddddd", 4, 2, 10, "m2"),
    )
    viewer = Viewer(ResultsIndex([tmp_path]), k=3)
    index = viewer.respond("/").body.decode()
    assert '<a href="/history">history</a>' in index
    response = viewer.respond("/history")
    assert response.status == 200
    html = response.body.decode()
    assert 'data-scenario="build/happy" data-state="flaky"' in html
    assert "change point at session 20250603T000000Z-cccccc" in html
    assert "agent m1 -&gt; m2" in html
    # The sessions before the change point are greyed: the state is not judged on them.
    assert html.count('<tr class="muted">') == 2


def test_an_ablation_session_has_its_page(tmp_path: Path) -> None:
    runs = _arm("full", [True] * 10) + _arm("without.observe.0", [False] * 10)
    write(tmp_path / "20250701T000000Z-abl.jsonl", runs)
    viewer = Viewer(ResultsIndex([tmp_path]), k=3)
    session = viewer.respond("/session/20250701T000000Z-abl").body.decode()
    assert '<a href="/ablation/20250701T000000Z-abl">ablation</a>' in session
    html = viewer.respond("/ablation/20250701T000000Z-abl").body.decode()
    assert 'data-scenario="fix/one"' in html
    assert '<tr data-verdict="keep">' in html
    assert "observe[0] prompts/key.md" in html
    assert viewer.respond("/ablation/nope").status == 404
