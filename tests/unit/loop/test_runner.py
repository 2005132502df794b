"""The loop runner, end to end with real fake-AI processes (tests/fake_ai/agent.py)."""

from __future__ import annotations

import json
import logging
import os
import random
import shlex
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import responses

from pytest_ooda.backends.replay import script
from pytest_ooda.config import Config, load_config
from pytest_ooda.errors import ConfigError, ScenarioError
from pytest_ooda.loop import (
    IterationFinished,
    IterationStarted,
    LoopEvent,
    LoopFinished,
    LoopResult,
    LoopStarted,
    LoopWarning,
    RunningStats,
    run_procedure,
)

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"
OK: dict[str, Any] = {"print": "worked\n"}
SUCCESS: dict[str, Any] = {"print": "done\n<promise>SUCCESS</promise>\n"}
FAILURE: dict[str, Any] = {"print": "<promise>FAILURE</promise>\n"}
BROKEN: dict[str, Any] = {"print": "oops\n", "exit": 1}

CONFIG = """\
loop:
  failure_threshold: {threshold}
procedures:
  build:
    display: Build
    observe:
      - content: "Look around."
    act:
      - content: "Do the work."
"""


def make_config(tmp_path: Path, threshold: int = 3, extra: str = "") -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text(CONFIG.format(threshold=threshold) + extra)
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return make_config(tmp_path)


def plan(tmp_path: Path, *steps: dict[str, Any]) -> str:
    """An ai_cmd running the fake agent through ``steps``, one per iteration."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(list(steps)))
    return shlex.join([sys.executable, str(AGENT), "--plan", str(path)])


def run(config: Config, tmp_path: Path, *steps: dict[str, Any], **kwargs: Any) -> LoopResult:
    kwargs.setdefault("workdir", tmp_path)
    return run_procedure(config, "build", ai_cmd=plan(tmp_path, *steps), **kwargs)


# --------------------------------------------------------------------------- outcome matrix


@pytest.mark.parametrize(
    ("step", "outcome", "signal", "status"),
    [
        pytest.param({"print": "nothing\n"}, "ok", None, "max-iters", id="exit0-none"),
        pytest.param(SUCCESS, "success", "SUCCESS", "success", id="exit0-success"),
        pytest.param({**SUCCESS, "exit": 4}, "success", "SUCCESS", "success", id="exit4-success"),
        pytest.param(FAILURE, "failure", "FAILURE", "max-iters", id="exit0-failure"),
        pytest.param({**FAILURE, "exit": 2}, "failure", "FAILURE", "max-iters", id="exit2-failure"),
        pytest.param(
            {"print": "<promise>SUCCESS</promise> <promise>FAILURE</promise>"},
            "failure",
            "FAILURE",
            "max-iters",
            id="both-failure-wins",
        ),
        pytest.param(BROKEN, "failure", None, "max-iters", id="exit1-none"),
    ],
)
def test_outcome_matrix(
    config: Config,
    tmp_path: Path,
    step: dict[str, Any],
    outcome: str,
    signal: str | None,
    status: str,
) -> None:
    result = run(config, tmp_path, step, max_iterations=1)
    assert result.status == status
    (record,) = result.records
    assert record.outcome == outcome
    assert record.signal == signal
    assert record.exit_code == step.get("exit", 0)


def test_timeout_ignores_success_signal(config: Config, tmp_path: Path) -> None:
    step = {**SUCCESS, "sleep": 30}
    result = run(config, tmp_path, step, max_iterations=1, iteration_timeout=0.5)
    (record,) = result.records
    assert record.timed_out
    assert record.signal == "SUCCESS"
    assert record.outcome == "failure"
    assert record.reason == "timed out"
    assert result.status == "max-iters"
    assert record.duration < 10


@pytest.mark.parametrize("name", ["SIGKILL", "SIGSEGV"])
def test_crash_with_success_in_partial_output_is_success(
    config: Config, tmp_path: Path, name: str
) -> None:
    result = run(config, tmp_path, {**SUCCESS, "kill": name}, max_iterations=3)
    result.assert_status("success", iterations=1)
    assert result.records[0].exit_code == -getattr(signal, name)
    assert result.records[0].term_signal == getattr(signal, name)


def test_crash_without_signal_is_a_failure(config: Config, tmp_path: Path) -> None:
    result = run(config, tmp_path, {"print": "partial", "kill": "SIGKILL"}, max_iterations=1)
    assert result.records[0].outcome == "failure"
    assert result.records[0].reason == "killed by SIGKILL"


# --------------------------------------------------------------------------- limits


def test_threshold_reached_after_n_failures(tmp_path: Path) -> None:
    config = make_config(tmp_path, threshold=3)
    result = run(config, tmp_path, BROKEN, FAILURE, BROKEN, SUCCESS, max_iterations=10)
    result.assert_status("aborted", iterations=3)
    assert result.exit_code == 1
    assert result.error is not None
    assert "3 consecutive failed" in result.error


def test_threshold_reset_by_an_ok_iteration(tmp_path: Path) -> None:
    config = make_config(tmp_path, threshold=3)
    steps = (BROKEN, BROKEN, OK, FAILURE, BROKEN, SUCCESS)
    result = run(config, tmp_path, *steps, max_iterations=10)
    result.assert_status("success", iterations=6)
    assert [r.outcome for r in result.records] == [
        "failure",
        "failure",
        "ok",
        "failure",
        "failure",
        "success",
    ]


def test_failure_threshold_argument_overrides_config(config: Config, tmp_path: Path) -> None:
    result = run(config, tmp_path, BROKEN, max_iterations=10, failure_threshold=1)
    result.assert_status("aborted", iterations=1)


@pytest.mark.parametrize("limit", [1, 5])
def test_max_iterations(config: Config, tmp_path: Path, limit: int) -> None:
    result = run(config, tmp_path, OK, max_iterations=limit)
    result.assert_status("max-iters", iterations=limit)
    assert result.exit_code == 3
    for number, prompt in enumerate(result.prompts, start=1):
        assert f"Iteration: {number} of {limit}" in prompt


def test_unlimited_ends_on_success(config: Config, tmp_path: Path) -> None:
    events: list[LoopEvent] = []
    steps = [OK] * 6 + [SUCCESS]
    result = run(config, tmp_path, *steps, unlimited=True, on_event=events.append)
    result.assert_status("success", iterations=7)
    assert result.max_iterations is None
    assert "Iteration: 7 (unlimited)" in result.prompts[-1]
    lines = [e.message() for e in events]
    assert lines[0] == "Starting loop procedure=build max_iterations=unlimited"
    assert "Starting iteration 7 procedure=build" in lines


def test_prompt_is_assembled_fresh_each_iteration(tmp_path: Path) -> None:
    fragment = tmp_path / "act.md"
    fragment.write_text("version one")
    path = tmp_path / "ooda-config.yml"
    path.write_text("procedures:\n  build:\n    act:\n      - path: act.md\n")
    loaded = load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)

    def edit_fragment(prompt: str) -> str:
        fragment.write_text("version two")
        return "edited"

    result = run_procedure(
        loaded, "build", backend=script([edit_fragment, "x"]), max_iterations=2, workdir=tmp_path
    )
    assert "version one" in result.prompts[0]
    assert "version two" in result.prompts[1]


# --------------------------------------------------------------------------- process handling


def test_output_truncation_warns_once(config: Config, tmp_path: Path) -> None:
    events: list[LoopEvent] = []
    step = {"flood": 3 << 20, "signal_at": "start"}
    result = run(
        config, tmp_path, step, max_iterations=2, max_output_buffer=1 << 20, on_event=events.append
    )
    warnings = [e for e in events if isinstance(e, LoopWarning)]
    assert len(warnings) == 1
    assert "max_output_buffer=1048576" in warnings[0].message()
    assert all(r.truncated for r in result.records)
    # The SUCCESS line was at the start, so it was dropped with the head.
    assert result.signals == ["none", "none"]


@pytest.mark.parametrize(("where", "status"), [("end", "success"), ("start", "max-iters")])
def test_200mb_output_under_1mb_buffer(
    config: Config, tmp_path: Path, where: str, status: str
) -> None:
    step = {"flood": 200 << 20, "signal_at": where}
    result = run(config, tmp_path, step, max_iterations=1, max_output_buffer=1 << 20)
    assert result.status == status
    record = result.records[0]
    assert record.truncated
    assert len(record.output.encode()) == 1 << 20


def test_invalid_utf8_output(config: Config, tmp_path: Path) -> None:
    result = run(config, tmp_path, {"invalid_utf8": True, **SUCCESS}, max_iterations=1)
    result.assert_status("success")
    assert "\ufffd" in result.outputs[0]


def test_big_prompt_to_exiting_process(config: Config, tmp_path: Path) -> None:
    big = "c" * (50 << 20)
    step = {"read_stdin": False, **SUCCESS}
    result = run(config, tmp_path, step, max_iterations=1, context=[big])
    result.assert_status("success")
    assert result.records[0].broken_pipe
    assert len(result.prompts[0]) > 50 << 20


def test_stream_sees_output_live(config: Config, tmp_path: Path) -> None:
    seen: list[bytes] = []
    run(config, tmp_path, SUCCESS, max_iterations=1, stream=seen.append)
    assert b"".join(seen) == SUCCESS["print"].encode()


def test_command_not_found_aborts_with_path(config: Config, tmp_path: Path) -> None:
    result = run_procedure(
        config, "build", ai_cmd="definitely-not-an-ai-cli --go", workdir=tmp_path
    )
    result.assert_status("aborted", iterations=0)
    assert result.error is not None
    assert "AI command not found: 'definitely-not-an-ai-cli' (searched" in result.error
    assert "install it so that definitely-not-an-ai-cli is on PATH" in result.error


def test_no_ai_command_configured_is_guidance_error(config: Config, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        run_procedure(config, "build", workdir=tmp_path)
    text = str(info.value)
    assert "no AI command configured" in text
    assert "OODA_LOOP_AI_CMD" in text
    assert "--ai-cmd" in text


def test_ai_cmd_from_config_is_used(tmp_path: Path) -> None:
    command = plan(tmp_path, SUCCESS)
    make_config(tmp_path)
    path = tmp_path / "ooda-config.yml"
    setting = f"loop:\n  ai_cmd: {json.dumps(command)}\n"
    path.write_text(path.read_text().replace("loop:\n", setting))
    config = load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)
    result = run_procedure(config, "build", workdir=tmp_path)
    result.assert_status("success", iterations=1)


def _group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def test_sigint_interrupts_and_kills_group(config: Config, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    step = {"pidfile": str(pidfile), "grandchild": 60, "print": "busy\n", "sleep": 60}

    def interrupt() -> None:
        deadline = time.monotonic() + 10
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        if pidfile.exists():  # never signal a process that is not in the loop
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    started = time.monotonic()
    result = run(config, tmp_path, step, max_iterations=3)
    assert result.status == "interrupted"
    assert result.exit_code == 130
    assert result.error == "interrupted by SIGINT"
    assert time.monotonic() - started < 10
    assert not _group_alive(int(pidfile.read_text()))
    # Our handler is gone again: the default SIGINT handler is back.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# --------------------------------------------------------------------------- other backends


def test_replay_running_out_raises_scenario_error(config: Config, tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="has 2 iterations, loop asked for a 3rd"):
        run_procedure(config, "build", backend=script(["a", "b"]), max_iterations=5)


@responses.activate
def test_http_backend_from_config_accumulates_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ooda-config.yml"
    path.write_text(
        CONFIG.format(threshold=3) + "    ai_api:\n      provider: openai\n      model: gpt-test\n"
        "      price_input_per_mtok: 2.0\n      price_output_per_mtok: 8.0\n"
    )
    config = load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)
    url = "https://api.openai.com/v1/chat/completions"
    replies = (("first", 100, 10), ("<promise>SUCCESS</promise>", 200, 20))
    for text, tokens_in, tokens_out in replies:
        responses.post(
            url,
            json={
                "choices": [{"message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out},
            },
        )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-for-stub")
    result = run_procedure(config, "build", max_iterations=3, workdir=tmp_path)
    result.assert_status("success", iterations=2)
    usage = result.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (300, 30)
    assert usage.cost == pytest.approx((300 * 2 + 30 * 8) / 1e6)


@responses.activate
def test_http_client_errors_count_as_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda.backends.http import HttpBackend

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k" * 10)
    url = "https://api.anthropic.com/v1/messages"
    responses.post(url, status=400, json={"error": "bad request"})
    responses.post(url, status=404, body="nope")
    config = make_config(tmp_path, threshold=2)
    backend = HttpBackend(provider="anthropic", model="m")
    result = run_procedure(config, "build", backend=backend, max_iterations=5)
    result.assert_status("aborted", iterations=2)
    assert result.infra_error is None
    assert next(r.error for r in result.records) == 'HTTP 400 Bad Request: {"error": "bad request"}'
    assert result.records[0].reason.startswith("HTTP 400")


@responses.activate
def test_http_rate_limits_and_server_errors_are_retried_not_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda.backends.http import HttpBackend

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k" * 10)
    url = "https://api.anthropic.com/v1/messages"
    responses.post(url, status=429, json={"error": "rate limited"}, headers={"Retry-After": "7"})
    responses.post(url, status=500, body="boom")
    responses.post(
        url,
        json={"content": [{"type": "text", "text": "<promise>SUCCESS</promise>"}], "usage": {}},
    )
    waits: list[float] = []
    config = make_config(tmp_path, threshold=1)
    backend = HttpBackend(provider="anthropic", model="m")
    result = run_procedure(config, "build", backend=backend, max_iterations=5, sleep=waits.append)
    # Two spoiled tries neither failed the iteration nor reached failure_threshold=1.
    result.assert_status("success", iterations=1)
    assert result.records[0].retries == 2
    assert result.retries == 2
    assert result.infra_error is None
    # Retry-After honoured for the first wait; the second is back-off from 1s * 2.
    assert waits[0] == 7
    assert 1.0 <= waits[1] <= 2.0


@responses.activate
def test_retries_run_out_and_the_run_is_an_infrastructure_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda.backends.http import HttpBackend

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k" * 10)
    url = "https://api.anthropic.com/v1/messages"
    for _ in range(4):
        responses.post(url, status=529, body="overloaded")
    waits: list[float] = []
    config = make_config(tmp_path, threshold=3)
    backend = HttpBackend(provider="anthropic", model="m")
    result = run_procedure(
        config, "build", backend=backend, max_iterations=5, retries=3, sleep=waits.append
    )
    result.assert_status("aborted", iterations=1)
    assert result.infra_error is not None
    assert result.infra_error.startswith("overloaded: HTTP 529")
    assert result.records[0].retries == 3
    assert len(waits) == 3
    # Exponential: each wait's upper bound doubles (1, 2, 4 seconds before jitter).
    assert waits[0] <= 1.0 < waits[2]
    assert result.error is not None
    assert "still after 3 retries" in result.error


def test_an_agent_command_that_cannot_start_is_an_infrastructure_error(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, threshold=3)
    result = run_procedure(
        config, "build", ai_cmd="no-such-agent-command-xyz", max_iterations=2, sleep=_no_sleep
    )
    result.assert_status("aborted", iterations=0)
    assert result.infra_error is not None
    assert result.infra_error.startswith("cannot-start: ")
    assert "no-such-agent-command-xyz" in result.infra_error


def _no_sleep(seconds: float) -> None:
    raise AssertionError(f"a command that cannot start is not retried (asked to wait {seconds})")


# --------------------------------------------------------------------------- results and events


def test_events_and_log_lines(
    config: Config, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[LoopEvent] = []
    caplog.set_level(logging.INFO, logger="pytest_ooda.loop")
    result = run_procedure(
        config,
        "build",
        backend=script(["a", ("b", 1), "<promise>SUCCESS</promise>"]),
        max_iterations=3,
        on_event=events.append,
    )
    kinds = [type(e) for e in events]
    assert kinds == [
        LoopStarted,
        IterationStarted,
        IterationFinished,
        IterationStarted,
        IterationFinished,
        IterationStarted,
        IterationFinished,
        LoopFinished,
    ]
    lines = [e.message() for e in events]
    assert lines[0] == "Starting loop procedure=build max_iterations=3"
    assert lines[1] == "Starting iteration 1/3 procedure=build"
    assert lines[2].startswith("Completed iteration 1/3 elapsed=")
    assert lines[2].endswith("s status=ok")
    assert lines[4].endswith('status=failure consecutive_failures=1 reason="exit code 1"')
    assert lines[6].endswith("status=success")
    assert lines[7].startswith("Loop completed status=success iterations=3 total_elapsed=")
    assert "\nIteration timing: count=3 min=" in lines[7]
    assert "stddev=" in lines[7]
    assert [r.getMessage() for r in caplog.records] == lines
    assert result.signals == ["none", "none", "SUCCESS"]


def test_timing_line_omits_stddev_for_one_iteration(config: Config) -> None:
    result = run_procedure(config, "build", backend=script(["<promise>SUCCESS</promise>"]))
    assert result.timing.count == 1
    assert result.timing.stddev is None
    assert "stddev" not in result.timing.describe()


def test_record_fields(config: Config, tmp_path: Path) -> None:
    import hashlib

    result = run(config, tmp_path, {**SUCCESS, "exit": 0}, max_iterations=2)
    record = result.records[0]
    assert record.number == 1
    assert record.prompt_sha256 == hashlib.sha256(record.prompt.encode()).hexdigest()
    assert record.output == SUCCESS["print"]
    assert record.duration > 0
    assert not record.truncated
    assert record.usage is None
    assert result.timing.count == 1
    assert result.elapsed >= record.duration


def test_welford_matches_population_stddev() -> None:
    rng = random.Random(7)
    values = [rng.uniform(0.1, 100) for _ in range(1000)]
    stats = RunningStats()
    for value in values:
        stats.add(value)
    snap = stats.snapshot()
    assert snap.count == 1000
    assert snap.mean == pytest.approx(statistics.fmean(values))
    assert snap.stddev == pytest.approx(statistics.pstdev(values))
    assert (snap.min, snap.max) == (min(values), max(values))


def test_assert_status_reports_each_iteration(config: Config) -> None:
    result = run_procedure(
        config, "build", backend=script(["first try", ("crashed hard", 3)]), max_iterations=2
    )
    result.assert_status("max-iters", iterations=2)
    with pytest.raises(AssertionError) as info:
        result.assert_status("success", iterations=1)
    text = str(info.value)
    assert text.startswith("expected status 'success', got 'max-iters'; expected 1 iteration(s)")
    assert "iteration 1: ok exit=0 signal=none" in text
    assert "iteration 2: failure (exit code 3) exit=3 signal=none" in text
    assert "| crashed hard" in text
    with pytest.raises(ValueError, match="unknown status"):
        result.assert_status("done")
    result.assert_signals(["none", "none"])
    with pytest.raises(AssertionError, match="expected signals"):
        result.assert_signals(["SUCCESS"])


# --------------------------------------------------------------------------- console rendering


def test_console_reporter_progress_line(config: Config) -> None:
    import io

    from pytest_ooda.backends.replay import ReplayStep
    from pytest_ooda.loop import ConsoleReporter

    stream = io.StringIO()
    reporter = ConsoleReporter(stream, progress=True, interval=0.05)
    steps = [
        ReplayStep("x", exit_code=1, delay=0.3),
        ReplayStep("<promise>SUCCESS</promise>", delay=0.3),
    ]
    backend = script(steps)
    run_procedure(config, "build", backend=backend, max_iterations=2, on_event=reporter)
    reporter.close()
    text = stream.getvalue()
    assert "\r\x1b[Kbuild: iteration 1/2 running 0:00 · total 0:00 · last: none yet" in text
    assert "build: iteration 2/2 running 0:00 · total 0:00 · last: failure (exit code 1)" in text
    # Every log line starts on a cleared line, never glued to a progress line.
    cleaned = [line.rsplit("\x1b[K", 1)[-1] for line in text.split("\n")]
    assert "Loop completed status=success iterations=2" in "\n".join(cleaned)
    assert all(not line.startswith("build: iteration") for line in cleaned if line)


def test_console_reporter_quiet_and_verbose(config: Config) -> None:
    import io

    from pytest_ooda.loop import ConsoleReporter

    quiet = io.StringIO()
    backend = script(["a" * 50, "<promise>SUCCESS</promise>"])
    run_procedure(
        config,
        "build",
        backend=backend,
        max_output_buffer=30,
        on_event=ConsoleReporter(quiet, quiet=True),
    )
    lines = quiet.getvalue().splitlines()
    assert lines[0].startswith("warning: AI output of iteration 1 exceeded max_output_buffer=30")
    assert lines[1].startswith("Loop completed status=success")
    verbose = io.StringIO()
    run_procedure(
        config,
        "build",
        backend=script([("x", 2), "<promise>SUCCESS</promise>"]),
        on_event=ConsoleReporter(verbose, verbose=True),
    )
    assert "  iteration 1: failure (exit code 2) exit=2 signal=none" in verbose.getvalue()


def test_keyboard_interrupt_propagates_without_signal_handling(
    config: Config, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    step = {"pidfile": str(pidfile), "grandchild": 60, "print": "busy\n", "sleep": 60}

    def interrupt() -> None:
        deadline = time.monotonic() + 10
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        if pidfile.exists():  # never signal a process that is not in the loop
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run(config, tmp_path, step, max_iterations=3, handle_signals=False)
    assert not _group_alive(int(pidfile.read_text()))


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("error", ["Loop completed status=success iterations=2"]),
        (
            "warn",
            [
                "warning: AI output of iteration 1 exceeded max_output_buffer=30",
                "Loop completed status=success iterations=2",
            ],
        ),
        (
            "debug",
            [
                "Starting loop procedure=build max_iterations=5",
                "Starting iteration 1/5 procedure=build",
                "warning: AI output of iteration 1 exceeded max_output_buffer=30",
                "Completed iteration 1/5 elapsed=",
                "  iteration 1: ok exit=0 signal=none",
                "Starting iteration 2/5 procedure=build",
                "Completed iteration 2/5 elapsed=",
                "  iteration 2: success (SUCCESS signal) exit=0 signal=SUCCESS",
                "Loop completed status=success iterations=2",
            ],
        ),
    ],
)
def test_console_reporter_honours_log_level(
    config: Config, level: str, expected: list[str]
) -> None:
    import io

    from pytest_ooda.loop import ConsoleReporter

    out = io.StringIO()
    backend = script(["a" * 50, "<promise>SUCCESS</promise>"])
    run_procedure(
        config,
        "build",
        backend=backend,
        max_iterations=5,
        max_output_buffer=30,
        on_event=ConsoleReporter(out, level=level),
    )
    lines = [ln for ln in out.getvalue().splitlines() if not ln.startswith("Iteration timing")]
    assert len(lines) == len(expected), lines
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start)


def test_backend_that_cannot_start_is_warned_about_once(config: Config, tmp_path: Path) -> None:
    events: list[LoopEvent] = []
    result = run_procedure(
        config, "build", ai_cmd=str(tmp_path), workdir=tmp_path, on_event=events.append
    )
    result.assert_status("aborted", iterations=0)
    warnings = [e.message() for e in events if isinstance(e, LoopWarning)]
    assert warnings == [
        f"Loop aborted: AI backend could not be started: AI command is not executable: {tmp_path}"
        "\n  make it executable (chmod +x) or run it through its interpreter"
    ]


def test_streaming_to_a_vanished_stdout_keeps_capturing(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    result = run(config, tmp_path, SUCCESS, max_iterations=1, show_ai_output=True)
    result.assert_status("success", iterations=1)
    assert result.outputs == [SUCCESS["print"]]


def test_progress_line_fits_the_terminal_width(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from pytest_ooda.backends.replay import ReplayStep
    from pytest_ooda.loop import ConsoleReporter

    monkeypatch.setenv("COLUMNS", "31")
    stream = io.StringIO()
    reporter = ConsoleReporter(stream, progress=True, interval=0.05)
    backend = script([ReplayStep("<promise>SUCCESS</promise>", delay=0.3)])
    run_procedure(config, "build", backend=backend, max_iterations=1, on_event=reporter)
    reporter.close()
    shown = [part for part in stream.getvalue().split("\r\x1b[K") if part.startswith("build:")]
    assert shown
    assert all(len(part.rstrip("\n")) <= 30 for part in shown)
    assert shown[0] == "build: iteration 1/1 running 0"


def test_console_reporter_on_a_broken_stream_does_not_end_the_run(config: Config) -> None:
    from pytest_ooda.loop import ConsoleReporter

    class Closed:
        writes = 0

        def write(self, text: str) -> int:
            Closed.writes += 1
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    reporter = ConsoleReporter(Closed(), progress=False)
    result = run_procedure(
        config, "build", backend=script([("x", 1)] * 3), max_iterations=5, on_event=reporter
    )
    result.assert_status("aborted", iterations=3)
    assert Closed.writes == 1  # gave up after the first failure
