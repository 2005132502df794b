"""``ooda view`` over real live sessions, opened in headless Debian Chromium: two agents
of known behaviour as two variants (the matrix's colours, the outputs side by side), a
session written while the page is open (it fills in without a restart and stops
refreshing when the session ends), and the judge section from a local judge, asked live
and then answered from the cache."""

from __future__ import annotations

import json
import struct
import sys
import zlib
from typing import TYPE_CHECKING

from html_browser import Browser
from judge_server import JudgeServer, verdict
from view_server import ViewServer

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from ooda_project import Project

#: An agent that does the job: writes GREETING.md and signals SUCCESS.
GOOD = """\
import sys, pathlib
sys.stdin.read()
pathlib.Path("GREETING.md").write_text("Hello Ada and Bob!\\n")
print("Greeted everyone in GREETING.md (good agent).\\n<promise>SUCCESS</promise>")
"""
#: An agent that never finishes: no file, no signal, so every run ends max-iters.
BAD = """\
import sys
sys.stdin.read()
print("Still looking for the people in the room (bad agent).")
"""
#: A slow agent for a session that runs while the page is open.
SLOW = """\
import sys, time, pathlib
sys.stdin.read()
time.sleep(1.5)
pathlib.Path("GREETING.md").write_text("Hello!\\n")
print("Done slowly.\\n<promise>SUCCESS</promise>")
"""
#: The matrix cells' background colours (_style.css.j2): success and failure.
GREEN = (0xDA, 0xFB, 0xE1)
RED = (0xFF, 0xEB, 0xE9)


def _pixels(png: bytes) -> set[tuple[int, int, int]]:
    """The distinct RGB colours of an 8-bit RGB/RGBA, non-interlaced PNG."""
    width, height, depth, kind = struct.unpack(">IIBB", png[16:26])
    assert (depth, kind in (2, 6)) == (8, True)
    channels = 3 if kind == 2 else 4
    data, position = b"", 8
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        if png[position + 4 : position + 8] == b"IDAT":
            data += png[position + 8 : position + 8 + length]
        position += 12 + length
    raw, stride = zlib.decompress(data), width * channels
    previous, found = bytearray(stride), set()
    for row in range(height):
        start = row * (stride + 1)
        kind_byte, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind_byte == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind_byte == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind_byte == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind_byte == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (
                    line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)
                ) & 0xFF
        found.update((line[i], line[i + 1], line[i + 2]) for i in range(0, stride, channels))
        previous = line
    return found  # fmt: skip


def _live(project: Project, *args: str) -> pytest.RunResult:
    """A live session in its own process, as a user runs it."""
    return project.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:benchmark", "-m", "live", *args
    )


def _agent(project: Project, name: str, source: str) -> str:
    project.write(f"agents/{name}.py", source)
    return f"{sys.executable} {project.path / 'agents' / f'{name}.py'}"


def _layout(browser: Browser, page: str) -> dict[str, float]:
    """Where the page's parts sit: nothing wider than the window."""
    found: dict[str, float] = browser.evaluate(
        page,
        "(() => ({scroll: document.documentElement.scrollWidth, inner: innerWidth,"
        " cells: document.querySelectorAll('table.matrix td.cell').length,"
        " tops: new Set([...document.querySelectorAll('table.matrix tbody tr:first-child td')]"
        ".map(c => Math.round(c.getBoundingClientRect().top))).size}))()",
    )
    return found


def test_two_agents_as_variants_in_the_matrix_and_side_by_side(
    project: Project, tmp_path: Path
) -> None:
    good, bad = _agent(project, "good", GOOD), _agent(project, "bad", BAD)
    project.scenario(
        "hello",
        "procedure: greet\nmax_iterations: 2\nrepeat: 3\n"
        "expect: {status: success, files: {GREETING.md: exists}}\n"
        f"variants:\n  good: {{ai_cmd: {json.dumps(good)}}}\n  bad: {{ai_cmd: {json.dumps(bad)}}}\n"
        "iterations: []\n",
    )
    _live(project).assert_outcomes(passed=3, failed=3)
    with (
        ViewServer(str(project.path / ".ooda/results")) as server,
        Browser(tmp_path / "profile") as browser,
    ):
        page = browser.open(server.url)
        browser.wait_for(page, "document.querySelector('table.matrix')")
        cells = browser.evaluate(
            page,
            "[...document.querySelectorAll('table.matrix td.cell')].map(c =>"
            " [c.dataset.scenario, c.dataset.verdict, c.querySelector('.rate').textContent])",
        )
        assert sorted(cells) == [
            ["greet/hello@bad", "failure", "0%"],
            ["greet/hello@good", "success", "100%"],
        ]
        layout = _layout(browser, page)
        assert layout["scroll"] <= layout["inner"]
        assert (layout["cells"], layout["tops"]) == (2, 1)  # one row, side by side
        colours = _pixels(browser.screenshot(page))
        assert GREEN in colours
        assert RED in colours

        # Outputs side by side: a column per variant, run k beside run k.
        outputs = browser.evaluate(page, "document.querySelector('a.outputs').getAttribute('href')")
        side = browser.open(server.url.rstrip("/") + outputs)
        browser.wait_for(side, "document.querySelector('table.grid-outputs')")
        columns = browser.evaluate(
            side,
            "[...document.querySelectorAll('thead th[data-variant]')].map(t => t.dataset.variant)",
        )
        assert columns == ["bad", "good"]
        rows = browser.evaluate(
            side,
            "[...document.querySelectorAll('tr[data-run]')].map(r => [...r.querySelectorAll("
            "'td.output-cell')].map(c => [c.dataset.variant, c.dataset.verdict,"
            " c.querySelector('pre.final-output').textContent]))",
        )
        assert len(rows) == 3
        for row in rows:
            (bad_name, bad_verdict, bad_text), (good_name, good_verdict, good_text) = row
            assert (bad_name, bad_verdict) == ("bad", "failure")
            assert "Still looking for the people in the room (bad agent)." in bad_text
            assert (good_name, good_verdict) == ("good", "success")
            assert "Greeted everyone in GREETING.md (good agent)." in good_text
        assert "+Hello Ada and Bob!" in browser.evaluate(side, "document.body.innerText")


def test_a_session_written_while_the_page_is_open_fills_it_in(
    project: Project, tmp_path: Path
) -> None:
    slow = _agent(project, "slow", SLOW)
    project.scenario(
        "hello",
        "procedure: greet\nmax_iterations: 1\nrepeat: 4\nexpect: {status: success}\n"
        "iterations: []\n",
    )
    results = project.path / "res"
    results.mkdir()
    with ViewServer(str(results)) as server, Browser(tmp_path / "profile") as browser:
        page = browser.open(server.url)
        browser.wait_for(page, "document.querySelector('main h1')")
        assert browser.evaluate(page, "document.querySelectorAll('section.session').length") == 0
        session = project.pytester.popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "live",
             f"--ooda-ai-cmd={slow}", f"--ooda-results={results}"],
            stdout=sys.stdout, stderr=sys.stderr,
        )  # fmt: skip
        try:
            # The session shows up while it runs, badge "running", without a restart.
            browser.wait_for(
                page, "document.querySelector('section.session[data-verdict=running]')", timeout=120
            )
            seen = browser.evaluate(
                page, "document.querySelector('section.session .meta').textContent"
            )
            assert "run(s)" in seen
            # And fills in: all four runs, then the end of the session.
            browser.wait_for(
                page,
                "(() => { const s = document.querySelector('section.session');"
                " return s && s.dataset.verdict !== 'running'"
                " && s.querySelector('.meta').textContent.includes('4 run(s)'); })()",
                timeout=120,
            )
        finally:
            assert session.wait(timeout=120) == 0
        cell = browser.evaluate(page, "document.querySelector('td.cell').dataset.verdict")
        assert cell == "success"
        # A session page of the ended session does not refresh itself.
        key = browser.evaluate(page, "document.querySelector('section.session').dataset.session")
        ended = browser.open(f"{server.url}session/{key}")
        browser.wait_for(ended, "document.querySelector('table.runs')")
        assert browser.evaluate(ended, "document.querySelectorAll('script').length") == 0
        assert (
            browser.evaluate(ended, "document.querySelectorAll('table.runs tbody tr').length") == 4
        )


PLAN = (
    '[{"print": "Hello Ada and Bob.\\n<promise>SUCCESS</promise>",'
    ' "files": {"GREETED.md": "Ada\\nBob\\n"}}]'
)


def test_the_judge_section_from_a_live_judge_and_from_the_cache(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OODA_TEST_JUDGE_KEY", "judge-key-0123456789")
    ai = project.fake_ai(PLAN)
    with JudgeServer() as judge:
        judge.answer(
            verdict("pass", "Both are named."),
            verdict("fail", "Bob is not greeted by name."),
            verdict("pass", "Ada and Bob are greeted."),
        )
        project.scenario(
            "hello",
            "procedure: greet\nmax_iterations: 1\nexpect:\n  status: success\n"
            + judge.judge_block(votes=3)
            + "iterations: []\n",
        )
        first = _live(project, "--ooda-ai-cmd", ai, "--ooda-results=res")
        first.assert_outcomes(passed=1)
        [first_log] = (project.path / "res").glob("*.jsonl")
        # The same run again: the same question, answered from the results' cache.
        again = _live(project, "--ooda-ai-cmd", ai, "--ooda-results=res")
        again.assert_outcomes(passed=1)
        assert len(judge.requests) == 3
    # Two sessions started in one second sort by their random part, not by time: the
    # second session's log is the one that was not there after the first.
    [again_log] = set((project.path / "res").glob("*.jsonl")) - {first_log}
    runs = {
        name: json.loads(log.read_text())
        for name, log in (("first", first_log), ("again", again_log))
    }
    assert runs["first"]["judge"]["rubric"] == "The greeting names everyone present."
    with ViewServer(str(project.path / "res")) as server, Browser(tmp_path / "profile") as browser:
        for folder, source, total in (
            ("first", "asked now: no vote came from the cache", "300 input / 30 output · $0.0004"),
            (
                "again",
                "from the cache: all 3 vote(s) answered earlier, nothing paid again",
                "0 input / 0 output · -",
            ),
        ):
            page = browser.open(f"{server.url}run/{runs[folder]['id']}")
            browser.wait_for(page, "document.querySelector('div.judge')")
            judged = browser.evaluate(
                page,
                "(() => { const j = document.querySelector('div.judge'); return {"
                " verdict: j.dataset.verdict,"
                " rubric: j.querySelector('pre.rubric').textContent,"
                " source: j.querySelector('.judge-source').textContent,"
                " votes: [...j.querySelectorAll('tr[data-vote]')].map(r =>"
                "   [...r.querySelectorAll('td')].map(c => c.textContent.trim())),"
                " text: j.innerText }; })()",
            )
            assert judged["verdict"] == "pass"
            assert judged["rubric"] == "The greeting names everyone present."
            assert judged["source"].startswith(source)
            assert [vote[:3] for vote in judged["votes"]] == [
                ["1", "pass", "Both are named."],
                ["2", "fail", "Bob is not greeted by name."],
                ["3", "pass", "Ada and Bob are greeted."],
            ]
            assert [vote[5] for vote in judged["votes"]] == (
                ["asked"] * 3 if folder == "first" else ["cache"] * 3
            )
            assert "agreement 67%" in judged["text"]
            assert f"judge total: {total.replace(' ·', ' tokens ·')}" in judged["text"]
