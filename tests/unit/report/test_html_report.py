"""The HTML report: it cannot be broken (or made to fetch anything) by an agent's output;
commands, rate bars, verdicts, transcripts and their budget."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser

from sample_records import changed, record, sample

from pytest_ooda.report import render_html
from pytest_ooda.report.pages import BAR_WIDTH
from pytest_ooda.scenario import CommandOutcome
from pytest_ooda.stats import summarize


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_escapes_outputs_and_fetches_nothing() -> None:
    hostile = '</pre><script>alert("x")</script><img src="https://example.com/t.png">'
    base = record(False, iterations=1)
    evil = replace(
        base,
        iterations=(replace(base.iterations[0], output_tail=hostile),),
        problems=("<b>bold</b>",),
        files_changed={"<x>.md": "created"},
    )
    html = render_html(summarize([evil, *sample(3, 4)]), k=3, title="<t>")
    parser = _Collector()
    parser.feed(html)
    tags = [tag for tag, _ in parser.tags]
    assert "script" not in tags
    assert "img" not in tags
    assert hostile in "".join(parser.text)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    csp = next(attrs for tag, attrs in parser.tags if attrs.get("http-equiv"))
    assert "default-src 'none'" in (csp.get("content") or "")
    assert "<title>&lt;t&gt;</title>" in html


def test_html_shows_each_verification_command() -> None:
    commands = (
        CommandOutcome("python -m pytest -q", 0, 0, 4.25, output_tail="3 passed"),
        CommandOutcome("make lint", 2, 0, 0.5, problem="command 'make lint': exited 2"),
        CommandOutcome("sleep 999", -9, 0, 300.0, timed_out=True, problem="timed out"),
    )
    html = render_html(summarize([replace(record(False), commands=commands)]), k=3, title="r")
    parser = _Collector()
    parser.feed(html)
    rows = re.findall(r"<tr>\s*<td><code>(.*?)</code></td>(.*?)</tr>", html, re.S)
    shown = {run: re.sub(r"<[^>]+>|\s+", " ", cells).split() for run, cells in rows}
    assert shown["python -m pytest -q"] == ["0", "4.2s", "passed"]
    assert shown["make lint"] == ["2", "(expected", "0)", "0.5s", "failed"]
    assert shown["sleep 999"][-2:] == ["timed", "out"]
    assert "3 passed" in "".join(parser.text)


def test_html_names_the_protected_paths_the_agent_changed() -> None:
    changed = replace(record(False), protected_changes=("tests/check.sh", "tests/conftest.py"))
    html = render_html(summarize([changed, record(True)]), k=3, title="r")
    parser = _Collector()
    parser.feed(html)
    text = re.sub(r"\s+", " ", "".join(parser.text))
    assert "the agent changed protected paths (restored before the checks ran):" in text
    assert "tests/check.sh changed, tests/conftest.py changed" in text
    assert text.count("the agent changed protected paths") == 1


def test_html_draws_the_rate_and_its_interval() -> None:
    [stats] = summarize(sample(15, 20))
    html = render_html([stats], k=3, title="r")
    parser = _Collector()
    parser.feed(html)
    bars = [
        attrs for tag, attrs in parser.tags if tag == "svg" and attrs.get("class") == "rate-bar"
    ]
    assert len(bars) == 2  # the summary row and the scenario's section
    low, high = stats.interval
    assert float(bars[0]["data-rate"] or 0) == 0.75
    fills = [attrs for tag, attrs in parser.tags if tag == "rect" and attrs.get("class") == "fill"]
    assert float(fills[0]["width"] or 0) == round(0.75 * BAR_WIDTH, 2)
    whiskers = [attrs for tag, attrs in parser.tags if tag == "line" and attrs.get("class") == "ci"]
    assert float(whiskers[0]["x1"] or 0) == round(low * BAR_WIDTH, 2)
    assert float(whiskers[0]["x2"] or 0) == round(high * BAR_WIDTH, 2)
    runs = [attrs for tag, attrs in parser.tags if tag == "details" and attrs.get("class") == "run"]
    assert len(runs) == 20


def _transcript(output: str) -> dict[str, object]:
    return {
        "prompt": [{"source": "inline", "text": "Do it.\n"}],
        "iterations": [
            {
                "number": 1,
                "output": output,
                "tool_calls": [
                    {"name": "Bash", "summary": "ls", "ok": False, "error": "exit 2",
                     "input": '{"command": "ls"}', "result": "no such dir <x>"}
                ],
                "permission_denials": [],
                "diffs": {"a.txt": "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hi\n"},
            }
        ],
        "notes": ["iteration 1: output cut"],
    }  # fmt: skip


def test_the_verdict_leads_and_an_error_run_shows_its_reason() -> None:
    ok = changed(record(True), transcript=_transcript("fine"), variant="terse")
    # The loop ended `success`, but an expectation was missed: the verdict is failure.
    missed = replace(
        record(False, status="success"),
        problems=("file GREETING.md: expected to exist, but it is missing",),
        transcript=_transcript("done"),
    )
    broken = replace(
        record(False, status="aborted", run=2, runs=2),
        outcome="error",
        error_reason="the AI command could not start: agent-cli: not found",
        judge={"passed": False, "rule": "all 1", "votes": [{"verdict": "fail", "reason": "no hi"}]},
    )
    html = render_html(summarize([ok, missed, broken]), k=3, title="t")
    runs = re.findall(
        r'<details class="run"[^>]*data-verdict="(\w+)"[^>]*>\s*<summary>(.*?)</summary>',
        html,
        re.S,
    )
    summaries = dict(runs)
    assert sorted(summaries) == ["error", "failure", "success"]
    for verdict, summary in summaries.items():
        # The badge leads the summary and names the verdict, whatever the loop's status.
        assert summary.strip().startswith(f'<span class="verdict verdict-{verdict}">{verdict}<')
    # The loop's status is the neutral badge; the reason sits in the summary.
    assert 'class="status status-success"' in summaries["failure"]
    assert "expected to exist, but it is missing" in summaries["failure"]
    assert "agent-cli: not found" in summaries["error"]
    assert ".verdict-error { background: #fff1e5; color: #bc4c00;" in html
    # The transcript: tool call input and result, the diff lines, the notes, the judge.
    assert '<pre class="tool-input">{&#34;command&#34;: &#34;ls&#34;}</pre>' in html
    assert "no such dir &lt;x&gt;" in html
    assert '<span class="add">+hi</span>' in html
    assert "iteration 1: output cut" in html
    assert '<div class="judge" data-verdict="fail">' in html
    assert "<td>no hi</td>" in html
    # Filters: a radio per verdict and per variant, and the rules that use them.
    assert 'id="fx-1"' in html
    assert '#fx-1:checked ~ main details.run:not([data-variant-index="1"])' in html
    # Permalinks are run numbers.
    assert 'id="build/happy/1"' in html
    assert 'id="build/happy/2"' in html
    assert 'id="build/happy@terse/1"' in html


def test_past_the_transcript_budget_runs_show_their_summary_and_a_note() -> None:
    runs = [
        replace(record(i % 2 == 0, run=i + 1, runs=6), transcript=_transcript("x" * 1000))
        for i in range(6)
    ]
    html = render_html(summarize(runs), k=3, title="t", transcript_budget=3500)
    # Three transcripts fit; the failures (runs 2, 4, 6) are kept first.
    assert html.count('<pre class="output">' + "x" * 1000) == 3
    assert "3 run(s) show their summary only" in html
    kept = re.findall(r'data-verdict="(\w+)"[^>]*>\s*<summary>(?:(?!</details>).)*?'
                      r'<pre class="output">x', html, re.S)  # fmt: skip
    assert set(kept) == {"failure"}


def test_a_large_report_pages_its_runs() -> None:
    from pytest_ooda.report import report_files, report_pages

    runs = [
        replace(record(i % 3 != 0, run=i + 1, runs=7), transcript=_transcript(f"run {i + 1}"))
        for i in range(7)
    ]
    stats = summarize(runs)
    pages = list(report_pages(stats, k=3, title="t", name="r.html", runs_per_page=3))
    assert report_files(stats, "r.html", runs_per_page=3) == [page.name for page in pages]
    assert [page.name for page in pages] == ["r.html", "r-2.html", "r-3.html", "r-4.html"]
    first = pages[0].html
    # The first file: the figures and a row per run, its permalink the run number,
    # linking to the page that holds its details.
    assert first.count('<tr id="build/happy/') == 7
    assert '<a class="permalink" href="r-2.html#build/happy/1">1/7</a>' in first
    assert '<a class="permalink" href="r-4.html#build/happy/7">7/7</a>' in first
    assert '<details class="run"' not in first
    assert 'id="prompt-1-1"' in first
    # Each run page: its runs' details, every one under its permalink.
    second = pages[1].html
    assert second.count('<details class="run"') == 3
    assert 'id="build/happy/2"' in second
    assert "run 2" in second
    assert 'href="r.html#prompt-1-1"' in second
    assert '<a href="r.html">t</a>' in second


def test_merged_sessions_that_repeat_a_run_number_keep_both_runs_apart() -> None:
    first = changed(record(True, run=1, runs=1), series="A")
    again = changed(record(False, run=1, runs=1), series="B")
    html = render_html(summarize([first, again]), k=3, title="t")
    assert 'id="build/happy/A/1"' in html
    assert 'id="build/happy/B/1"' in html
