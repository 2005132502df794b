"""``ooda view``'s pages, asked of the viewer directly (the server is driven over HTTP
in tests/unit/cli/test_view.py and in Chromium in tests/integration/cli/)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from sample_records import changed, sample, write

from pytest_ooda.view import ResultsIndex, Viewer

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.results import RunRecord


def _transcript(output: str, prompt: str) -> dict[str, object]:
    return {
        "prompt": [
            {"source": "prompts/look.md", "text": prompt},
            {"source": "inline", "text": "Act."},
        ],
        "iterations": [
            {
                "number": 1,
                "output": output,
                "tool_calls": [
                    {"name": "Bash", "summary": "ls", "ok": True, "input": "{}", "result": "a.txt"}
                ],
                "permission_denials": [],
                "diffs": {"a.txt": f"--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+{output}\n"},
            }
        ],
        "notes": [],
    }  # fmt: skip


def _runs(variant: str, successes: int, prompt: str) -> list[RunRecord]:
    return [
        changed(
            item,
            id=f"{variant}-{item.head.run}",
            variant=variant,
            session="20250101T000000Z",
            series="20250101T000000Z",
            prompt_sha256=prompt[0] * 64,
            transcript=_transcript(f"{variant} says {item.head.run}", prompt),
        )
        for item in sample(successes, 3)
    ]


@pytest.fixture
def viewer(tmp_path: Path) -> Viewer:
    runs = [*_runs("terse", 3, "Look at the room."), *_runs("chatty", 1, "Look around.")]
    write(tmp_path / "20250101T000000Z.jsonl", runs)
    return Viewer(ResultsIndex([tmp_path]), k=3)


def _get(viewer: Viewer, target: str, status: int = 200) -> str:
    response = viewer.respond(target)
    assert response.status == status, response.body[:300]
    return response.body.decode("utf-8")


def test_the_index_lists_sessions_with_their_matrix(viewer: Viewer) -> None:
    html = _get(viewer, "/")
    assert 'data-session="20250101T000000Z"' in html
    assert '<a href="/session/20250101T000000Z">20250101T000000Z</a>' in html
    assert "<th>chatty</th><th>terse</th>" in html
    cell = 'class="cell cell-{0}" data-verdict="{0}" data-scenario="build/happy@{1}"'
    assert cell.format("mixed", "chatty") in html
    assert cell.format("success", "terse") in html
    assert 'href="/session/20250101T000000Z?scenario=build%2Fhappy%40terse#runs"' in html
    # The index keeps polling: a new session can start at any time.
    assert 'data-always="yes"' in html
    assert '<script src="/static/refresh.js"></script>' in html
    # The page may run the server's own script, nothing else.
    assert "script-src &#39;self&#39;" in html


def test_a_session_page_lists_a_cells_runs(viewer: Viewer) -> None:
    html = _get(viewer, "/session/20250101T000000Z?scenario=build%2Fhappy%40chatty")
    assert html.count('<tr id="run-chatty-') == 3
    assert 'href="/run/chatty-2"' in html
    assert "terse-1" not in html.split('<h2 id="runs">')[1]
    # An ended session does not poll.
    assert "refresh.js" not in html


def test_a_run_page_shows_the_transcript(viewer: Viewer) -> None:
    html = _get(viewer, "/run/chatty-2")
    assert '<h1 class="run-title">build/happy · chatty · run 2 of 3</h1>' in html
    assert "chatty says 2" in html
    assert '<pre class="tool-result">a.txt</pre>' in html
    assert '<span class="add">+chatty says 2</span>' in html
    assert 'href="/run/chatty-1"' in html
    assert 'href="/run/chatty-3"' in html
    assert 'id="prompt-1-1"' in html


def test_outputs_side_by_side(viewer: Viewer) -> None:
    html = _get(viewer, "/outputs/20250101T000000Z?scenario=build%2Fhappy")
    assert '<th data-variant="chatty">' in html
    rows = html.split('<tr data-run="')[1:]
    assert len(rows) == 3
    first = rows[0]
    assert first.index("chatty says 1") < first.index("terse says 1")
    assert "compare" in html


def test_compare_two_variants_with_the_prompt_diff(viewer: Viewer) -> None:
    html = _get(viewer, "/compare?session=20250101T000000Z&a=chatty&b=terse")
    assert "variant chatty against variant terse" in html
    assert '<td class="num p-value">' in html
    assert '<code class="source">prompts/look.md</code> <span class="muted">changed</span>' in html
    assert '<span class="del">-Look around.</span>' in html
    assert '<span class="add">+Look at the room.</span>' in html
    assert 'href="/run/terse-1"' in html


def test_the_variants_page(viewer: Viewer) -> None:
    html = _get(viewer, "/variants/20250101T000000Z")
    assert '<tr data-variant="terse">' in html
    assert 'href="/run/chatty-1"' in html


def test_the_version_api_and_the_script(viewer: Viewer) -> None:
    state = json.loads(_get(viewer, "/api/version"))
    assert state == {"version": 1, "running": False}
    assert "location.reload()" in _get(viewer, "/static/refresh.js")


@pytest.mark.parametrize(
    "target",
    [
        "/session/../../etc/passwd",
        "/session/%2e%2e/%2e%2e/etc/passwd",
        "/session/..%2f..%2fetc%2fpasswd",
        "/static/../index.py",
        "/static/%2e%2e/viewer.py",
        "/run/..%5c..%5cetc",
        "/session/x%00y",
    ],
)
def test_paths_out_of_the_directories_are_refused(viewer: Viewer, target: str) -> None:
    html = _get(viewer, target, status=404)
    assert "refused" in html or "no " in html
    assert "root:" not in html


def test_unknown_pages_are_not_found(viewer: Viewer) -> None:
    assert "no session nope" in _get(viewer, "/session/nope", status=404)
    assert "no run nope" in _get(viewer, "/run/nope", status=404)
    _get(viewer, "/elsewhere", status=404)
    _get(viewer, "/static/secret.txt", status=404)


def test_a_running_sessions_pages_poll_until_it_ends(tmp_path: Path) -> None:
    from pytest_ooda.results import ResultsLog

    log = ResultsLog(tmp_path, session="S")
    [first, second] = sample(1, 2)
    log.append(changed(first, id="r1", session="S"))
    viewer = Viewer(ResultsIndex([tmp_path]), k=3)
    index = _get(viewer, "/")
    assert 'data-verdict="running"' in index
    page = _get(viewer, "/session/S")
    assert 'data-poll="/api/version?session=S"' in page
    assert json.loads(_get(viewer, "/api/version?session=S"))["running"] is True
    assert "/run/r1" in _get(viewer, "/session/S")
    log.append(changed(second, id="r2", session="S"))
    log.close()
    page = _get(viewer, "/session/S")
    assert "/run/r2" in page
    assert "refresh.js" not in page
    assert json.loads(_get(viewer, "/api/version?session=S"))["running"] is False
