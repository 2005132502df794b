"""The HTML report as a transcript viewer, for a session of real Claude Code runs (the
shared agent mock scripts its tool calls): opened in headless Chromium, the DOM holds
each run's verdict badge (coloured by verdict, never by the loop's status), the reason a
run failed outside any closed section, every tool call with its input and result, the
diffs, the prompt by fragment and permalinks; no script; a screenshot shows the verdict
colours; and 1,000 such runs make a report of bounded size."""

from __future__ import annotations

import re
import struct
import textwrap
import zlib
from typing import TYPE_CHECKING

from claude_mock import CLAUDE
from html_browser import Dom, chromium
from sample_records import changed

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pytest
    from claude_mock import AgentMock


CONFIG = f"""\
loop:
  iteration_timeout: 120
  ai_cmd: "{CLAUDE}"
procedures:
  build:
    act:
      - content: "Write hello.py, run it, and say <promise>SUCCESS</promise> when it works."
"""
SCENARIO = """\
procedure: build
max_iterations: 2
repeat: 2
expect: {status: success, files: {hello.py: {contains: agent}}}
iterations: []
"""
WRITE = {
    "text": "Writing hello.py.",
    "tool": "Write",
    "input": {"file_path": "hello.py", "content": "print('Hello, mock!')\n"},
}
RUN = {"tool": "Bash", "input": {"command": "python3 hello.py", "description": "Run it"}}
EDIT = {
    "tool": "Edit",
    "read_first": True,
    "input": {"file_path": "hello.py", "old_string": "mock", "new_string": "agent"},
}
#: The verdict badges' background colours (report.html.j2).
COLOURS = {"success": (0xDA, 0xFB, 0xE1), "failure": (0xFF, 0xEB, 0xE9)}


def _pixels(png: bytes) -> set[tuple[int, int, int]]:
    """The distinct RGB colours of an 8-bit RGB/RGBA, non-interlaced PNG."""
    width, height, depth, kind = struct.unpack(">IIBB", png[16:26])
    assert depth == 8
    assert kind in (2, 6)
    channels = 3 if kind == 2 else 4
    data, position = b"", 8
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        tag = png[position + 4 : position + 8]
        if tag == b"IDAT":
            data += png[position + 8 : position + 8 + length]
        position += 12 + length
    raw = zlib.decompress(data)
    stride = width * channels
    previous = bytearray(stride)
    found: set[tuple[int, int, int]] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind_byte, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind_byte == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind_byte == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind_byte == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind_byte == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        found.update((line[i], line[i + 1], line[i + 2]) for i in range(0, stride, channels))
        previous = line
    return found


def test_a_session_of_claude_runs_as_a_transcript_in_chromium(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # Run 1: writes and runs hello.py, then edits it and succeeds. Run 2 (a fresh
    # workspace) gets the edit session again: the edit fails, the expectation is missed.
    mock = agent_mock(
        [
            [WRITE, RUN, {"text": "Wrote and ran it; more to do."}],
            [EDIT, {"text": "Done.\n<promise>SUCCESS</promise>"}],
        ]
    )
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / "no-global-config"))
    pytester.makefile(".yml", **{"ooda-config": CONFIG})
    scenario = pytester.path / "scenarios" / "build" / "hello.yml"
    scenario.parent.mkdir(parents=True)
    scenario.write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    live = pytester.runpytest_subprocess("-m", "live", "-p", "no:cacheprovider")
    live.assert_outcomes(passed=1, failed=1)

    report = tmp_path / "report.html"
    assert ooda(["report", str(pytester.path / ".ooda/results"), "--html", str(report)]) == 0
    html = report.read_text(encoding="utf-8")
    dumped = chromium("--dump-dom", report.as_uri(), profile=tmp_path / "profile").stdout
    dom = Dom()
    dom.feed(dumped)

    runs = dom.find("details", **{"class": "run"})
    assert [(run["id"], run["data-verdict"]) for run in runs] == [
        ("build/hello/1", "success"),
        ("build/hello/2", "failure"),
    ]
    # The verdict leads each run's summary, in the badge of its own colour; the loop's
    # status (success for both) is the neutral badge after it.
    summaries = re.findall(r'<details class="run"[^>]*>\s*<summary>(.*?)</summary>', html, re.S)
    assert [re.search(r'class="(verdict verdict-\w+)"', s).group(1) for s in summaries] == [  # type: ignore[union-attr]
        "verdict verdict-success",
        "verdict verdict-failure",
    ]
    assert all('class="status status-success"' in summary for summary in summaries)
    # Why run 2 failed, in its summary: visible without opening anything.
    assert "hello.py" in summaries[1]
    assert 'class="reason"' in summaries[1]
    assert 'class="reason"' not in summaries[0]
    # Permalinks.
    assert dom.find("a", **{"class": "permalink", "href": "#build/hello/2"})
    # Tool calls with input and result as Claude Code reported them.
    inputs = [text for text in dom.pre if "Hello, mock!" in text]
    assert any('"file_path": "hello.py"' in text for text in inputs)
    assert any(text.strip() == "Hello, mock!" for text in dom.pre)  # Bash's result
    # The diffs of each iteration.
    assert "+print('Hello, mock!')" in dumped
    assert "-print('Hello, mock!')" in dumped
    assert "+print('Hello, agent!')" in dumped
    # The prompt, once per version, fragment by fragment.
    [prompt] = dom.find("details", **{"class": "prompt"})
    assert "inline" in dumped
    assert "Write hello.py, run it" in dumped
    assert prompt["id"] == "prompt-1-1"
    # Filters (radio buttons and CSS), and nothing to run or fetch.
    assert dom.find("input", **{"id": "fv-failure"})
    assert '#fv-failure:checked ~ main details.run:not([data-verdict="failure"])' in html
    assert not dom.find("script")
    assert not [e for e in dom.elements if e[1].get("src") or e[0] == "link"]

    # The screenshot of the failing run's permalink shows both verdict colours.
    shot = tmp_path / "report.png"
    chromium(
        f"--screenshot={shot}",
        "--window-size=1280,1000",
        report.as_uri(),
        profile=tmp_path / "profile",
    )
    colours = _pixels(shot.read_bytes())
    assert COLOURS["success"] in colours
    assert COLOURS["failure"] in colours

    # 1,000 such runs: a report of bounded size (the figure is in the benchmark).
    from pytest_ooda.report import render_html
    from pytest_ooda.results import read_results
    from pytest_ooda.stats import summarize

    records = read_results([str(pytester.path / ".ooda/results")]).records
    many = [changed(records[i % 2], id=f"run-{i}", run=i + 1, runs=1000) for i in range(1000)]
    size = len(render_html(summarize(many, k=3), k=3, title="1,000 runs").encode("utf-8"))
    assert size < 8 * 1024 * 1024  # 3.8 MB when written
