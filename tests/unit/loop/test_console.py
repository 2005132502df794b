"""``loop.log_timestamp_format``: the timestamps on ``ooda run``'s log lines."""

from __future__ import annotations

import datetime
import io
import json
import re
import shlex
import sys
import time
from pathlib import Path

import pytest

from pytest_ooda.cli import main
from pytest_ooda.loop import ConsoleReporter
from pytest_ooda.loop.console import format_timestamp
from pytest_ooda.loop.events import LoopStarted, LoopWarning

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"
PACIFIC = datetime.timezone(datetime.timedelta(hours=-8))
MOMENT = datetime.datetime(2026, 2, 8, 20, 59, 35, 877000, tzinfo=PACIFIC)


@pytest.mark.parametrize(
    ("fmt", "now", "expected"),
    [
        ("none", MOMENT, ""),
        ("iso", MOMENT, "2026-02-08T20:59:35.877-08:00"),
        ("iso", MOMENT.replace(microsecond=0), "2026-02-08T20:59:35-08:00"),
        ("iso", MOMENT.replace(microsecond=120, tzinfo=datetime.UTC), "2026-02-08T20:59:35.00012Z"),
        (
            "iso",
            MOMENT.replace(tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
            "2026-02-08T20:59:35.877+05:30",
        ),
    ],
)
def test_iso_is_go_rfc3339nano(fmt: str, now: datetime.datetime, expected: str) -> None:
    assert format_timestamp(fmt, since=0.0, now=now) == expected  # type: ignore[arg-type]


def test_iso_in_the_local_zone() -> None:
    text = format_timestamp("iso", since=0.0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?(Z|[+-]\d\d:\d\d)", text)


def test_time_and_time_ms_are_wall_clock_milliseconds() -> None:
    now = datetime.datetime(2026, 2, 8, 7, 5, 3, 4999, tzinfo=PACIFIC)
    assert format_timestamp("time", since=0.0, now=now) == "[07:05:03.004]"
    assert format_timestamp("time-ms", since=0.0, now=now) == "[07:05:03.004]"


def test_relative_counts_from_the_loop_start() -> None:
    text = format_timestamp("relative", since=time.monotonic() - 1.25)
    match = re.fullmatch(r"\[\+(\d+\.\d{3})s\]", text)
    assert match is not None
    assert 1.25 <= float(match.group(1)) < 5


def test_the_reporter_stamps_every_log_line() -> None:
    stream = io.StringIO()
    reporter = ConsoleReporter(stream, progress=False, timestamps="relative")
    reporter(LoopStarted("p", 3, "backend"))
    reporter(LoopWarning("p", "first line\nsecond line"))
    lines = stream.getvalue().splitlines()
    assert [re.sub(r"^\[\+\d+\.\d{3}s\] ", "", line) for line in lines] == [
        "Starting loop procedure=p max_iterations=3",
        "warning: first line",
        "second line",
    ]
    assert all(re.match(r"\[\+0\.\d{3}s\] ", line) for line in lines)


def test_no_timestamps_by_default() -> None:
    stream = io.StringIO()
    ConsoleReporter(stream, progress=False)(LoopStarted("p", 3, "backend"))
    assert stream.getvalue() == "Starting loop procedure=p max_iterations=3\n"


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="timestamps must be one of none, time, time-ms"):
        ConsoleReporter(io.StringIO(), timestamps="epoch")  # type: ignore[arg-type]


def test_ooda_run_uses_the_configured_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"print": "<promise>SUCCESS</promise>\n"}]))
    (tmp_path / "ooda-config.yml").write_text(
        "loop:\n  log_timestamp_format: time\nprocedures:\n  p:\n"
        "    act: [{content: 'go; say <promise>SUCCESS</promise>'}]\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(tmp_path / "none"))
    cmd = shlex.join([sys.executable, str(AGENT), "--plan", str(plan)])
    assert main(["run", "p", "--ai-cmd", cmd]) == 0
    err = capsys.readouterr().err.splitlines()
    assert re.fullmatch(
        r"\[\d\d:\d\d:\d\d\.\d{3}\] Starting loop procedure=p max_iterations=5", err[0]
    )
    assert all(re.match(r"\[\d\d:\d\d:\d\d\.\d{3}\] ", line) for line in err)
    # The environment (rooda's variable too) beats the file.
    monkeypatch.setenv("ROODA_LOOP_LOG_TIMESTAMP_FORMAT", "none")
    assert main(["run", "p", "--ai-cmd", cmd]) == 0
    assert capsys.readouterr().err.splitlines()[0] == "Starting loop procedure=p max_iterations=5"
