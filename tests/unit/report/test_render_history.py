"""A scenario's history as the terminal and Markdown show it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sample_records import changed, record

from pytest_ooda.report import history_lines, history_markdown
from pytest_ooda.stats import history

if TYPE_CHECKING:
    from pytest_ooda.results import RunRecord


def _session(name: str, day: int, successes: int, prompt: str = "a") -> list[RunRecord]:
    return [
        changed(
            record(
                k < successes,
                run=k + 1,
                runs=6,
                session=name,
                prompt=prompt * 64,
                finished_at=f"2025-06-{day:02d}T00:00:{k:02d}+00:00",
            ),
            git_commit="f" * 40,
            model="claude-x",
        )
        for k in range(6)
    ]


def test_the_terminal_lines_name_each_session_and_the_state() -> None:
    records = (
        _session("s1", 1, 0) + _session("s2", 2, 3, prompt="b") + _session("s3", 3, 4, prompt="b")
    )
    lines = history_lines(history(records))
    assert lines[0] == "history of 1 scenario(s) over 3 session(s)"
    assert lines[2].startswith("build/happy: flaky: 58% (7/12, 95% CI")
    assert lines[3].split() == [
        "session",
        "date",
        "commit",
        "agent",
        "prompt",
        "runs",
        "rate",
        "95%",
        "CI",
    ]
    assert lines[4].split()[:7] == [
        "s1",
        "2025-06-01",
        "ffffffff",
        "claude-x",
        "aaaaaaaa",
        "0/6",
        "0%",
    ]
    assert lines[5].startswith("> s2")
    assert lines[-1] == "  (judged from session s2: the prompt changed)"


def test_the_markdown_table() -> None:
    markdown = history_markdown(history(_session("s1", 1, 6)))
    assert "| build/happy | stable-pass | 100% | 61%–100% | 1 | s1 |" in markdown
