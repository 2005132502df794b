"""The command backend against real subprocesses (tests/fake_ai/agent.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends import Backend, BackendResult
from pytest_ooda.backends.command import CommandBackend, TailBuffer, resolve_executable
from pytest_ooda.errors import BackendError

if TYPE_CHECKING:
    from collections.abc import Mapping

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"
MB = 1 << 20


def agent(
    step: Mapping[str, object], *, kill_grace: float = 5.0, drain_grace: float = 1.0
) -> CommandBackend:
    argv = [sys.executable, str(AGENT), json.dumps(step)]
    return CommandBackend(argv, kill_grace=kill_grace, drain_grace=drain_grace)


def run(
    backend: CommandBackend,
    tmp_path: Path,
    prompt: str = "hello",
    *,
    timeout: float | None = None,
    max_output: int = MB,
    stream: list[bytes] | None = None,
) -> BackendResult:
    return backend.run(
        prompt,
        iteration=1,
        workdir=tmp_path,
        timeout=timeout,
        max_output=max_output,
        stream=stream.append if stream is not None else None,
    )


def group_alive(pgid: int) -> list[int]:
    """Pids of non-zombie processes in process group ``pgid`` (zombies are dead already)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


def test_satisfies_protocol() -> None:
    assert isinstance(agent({}), Backend)


def test_prompt_goes_to_stdin_and_output_is_captured(tmp_path: Path) -> None:
    result = run(agent({"echo_prompt": True, "print": "\ndone\n"}), tmp_path, "the prompt ✓")
    assert result.output == "the prompt ✓\ndone\n"
    assert result.exit_code == 0
    assert result.term_signal is None
    assert not result.truncated
    assert not result.timed_out


def test_runs_in_workdir(tmp_path: Path) -> None:
    backend = CommandBackend([sys.executable, "-c", "import os; print(os.getcwd())"])
    assert run(backend, tmp_path).output.strip() == str(tmp_path)


def test_exit_code_reported(tmp_path: Path) -> None:
    assert run(agent({"exit": 3}), tmp_path).exit_code == 3


def test_stdout_and_stderr_merged_in_order(tmp_path: Path) -> None:
    result = run(agent({"interleave": 40}), tmp_path)
    assert result.output.splitlines() == [f"line {i}" for i in range(40)]


@pytest.mark.parametrize(("name", "signum"), [("SIGKILL", 9), ("SIGSEGV", 11)])
def test_crash_keeps_partial_output(tmp_path: Path, name: str, signum: int) -> None:
    result = run(agent({"print": "<promise>SUCCESS</promise>\n", "kill": name}), tmp_path)
    assert result.exit_code == -signum
    assert result.term_signal == signum
    assert "<promise>SUCCESS</promise>" in result.output


def test_invalid_utf8_decoded_with_replacement(tmp_path: Path) -> None:
    result = run(agent({"invalid_utf8": True}), tmp_path)
    assert "bad \ufffd\ufffd bytes \ufffd(" in result.output


def test_big_prompt_to_process_that_exits_at_once(tmp_path: Path) -> None:
    prompt = "p" * (50 * MB)
    started = time.monotonic()
    result = run(agent({"read_stdin": False, "print": "bye\n"}), tmp_path, prompt)
    assert result.output == "bye\n"
    assert result.exit_code == 0
    assert result.broken_pipe
    assert time.monotonic() - started < 15


def test_big_prompt_fully_delivered_to_reader(tmp_path: Path) -> None:
    prompt = "abc\n" * (5 * MB)
    record = tmp_path / "prompt.txt"
    result = run(agent({"record_prompt": str(record)}), tmp_path, prompt)
    assert not result.broken_pipe
    assert record.read_text() == prompt + "\n=====\n"


def test_output_tail_kept_signal_at_end(tmp_path: Path) -> None:
    step = {"flood": 200 * MB, "signal_at": "end"}
    result = run(agent(step), tmp_path, max_output=MB)
    assert result.truncated
    assert len(result.output.encode()) == MB
    assert result.output.endswith("<promise>SUCCESS</promise>\n")
    assert result.total_bytes == 200 * MB + len("<promise>SUCCESS</promise>\n")
    assert result.dropped_bytes == result.total_bytes - MB


def test_output_head_dropped_signal_at_start(tmp_path: Path) -> None:
    step = {"flood": 200 * MB, "signal_at": "start"}
    result = run(agent(step), tmp_path, max_output=MB)
    assert result.truncated
    assert "<promise>" not in result.output
    assert len(result.output) == MB


def test_stream_receives_everything_live(tmp_path: Path) -> None:
    chunks: list[bytes] = []
    result = run(agent({"flood": 3 * MB}), tmp_path, max_output=1000, stream=chunks)
    assert sum(len(c) for c in chunks) == 3 * MB
    assert len(result.output) == 1000


def test_timeout_kills_sleeping_child_and_grandchild_holding_pipe(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    step = {"pidfile": str(pidfile), "grandchild": 60, "print": "working\n", "sleep": 60}
    started = time.monotonic()
    result = run(agent(step, kill_grace=0.5), tmp_path, timeout=1.0)
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert result.exit_code == -signal.SIGTERM
    assert "working" in result.output
    assert elapsed < 5
    pgid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group_alive(pgid) == []


def test_timeout_escalates_to_sigkill(tmp_path: Path) -> None:
    step = {"ignore_term": True, "sleep": 60}
    started = time.monotonic()
    result = run(agent(step, kill_grace=0.3), tmp_path, timeout=0.5)
    assert result.timed_out
    assert result.exit_code == -signal.SIGKILL
    assert time.monotonic() - started < 5


def test_grandchild_holding_pipe_after_exit_does_not_block(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    step = {"pidfile": str(pidfile), "grandchild": 60, "print": "<promise>SUCCESS</promise>"}
    started = time.monotonic()
    result = run(agent(step, drain_grace=0.3), tmp_path)
    assert time.monotonic() - started < 5
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.output == "<promise>SUCCESS</promise>"


def test_interrupt_kills_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    step = {"pidfile": str(pidfile), "grandchild": 60, "sleep": 60}

    class Stop(Exception):
        pass

    def stop_when_started(chunk: bytes) -> None:
        raise Stop

    backend = agent({**step, "print": "go\n"}, kill_grace=0.5)
    with pytest.raises(Stop):
        backend.run(
            "x",
            iteration=1,
            workdir=tmp_path,
            timeout=None,
            max_output=MB,
            stream=stop_when_started,
        )
    pgid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group_alive(pgid) == []


def test_command_not_found_lists_path(tmp_path: Path) -> None:
    env = {"PATH": f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}"}
    backend = CommandBackend(["no-such-ai-cli", "-p"], env=env)
    with pytest.raises(BackendError) as info:
        run(backend, tmp_path)
    text = str(info.value)
    assert "AI command not found: 'no-such-ai-cli'" in text
    assert str(tmp_path / "a") in text
    assert str(tmp_path / "b") in text


def test_not_executable_reported(tmp_path: Path) -> None:
    script = tmp_path / "ai"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(BackendError, match="not executable"):
        resolve_executable(["./ai"], workdir=tmp_path)
    with pytest.raises(BackendError, match="not executable"):
        resolve_executable(["ai"], workdir=tmp_path, env={"PATH": str(tmp_path)})
    script.chmod(0o755)
    assert resolve_executable(["./ai"], workdir=tmp_path) == str(script)


def test_relative_command_resolved_against_workdir(tmp_path: Path) -> None:
    script = tmp_path / "ai.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\necho from-script\n")
    script.chmod(0o755)
    result = run(CommandBackend(["./ai.sh"]), tmp_path)
    assert result.output == "from-script\n"


def test_from_string_splits_like_shell(tmp_path: Path) -> None:
    code = "'import sys; print(sys.argv[1:])'"
    backend = CommandBackend.from_string(f'{sys.executable} -c {code} a\\ b "c d"')
    assert run(backend, tmp_path).output.strip() == "['a b', 'c d']"
    with pytest.raises(BackendError, match="cannot split"):
        CommandBackend.from_string("claude 'unterminated")


def test_empty_command_rejected() -> None:
    with pytest.raises(BackendError, match="empty"):
        CommandBackend([])


class TestTailBuffer:
    def test_keeps_last_bytes(self) -> None:
        buf = TailBuffer(10)
        for piece in (b"abcd", b"efgh", b"ijkl", b"mn"):
            buf.add(piece)
        assert buf.getvalue() == b"efghijklmn"
        assert buf.dropped == 4
        assert buf.total == 14

    def test_chunk_larger_than_limit(self) -> None:
        buf = TailBuffer(3)
        buf.add(b"ab")
        buf.add(b"0123456789")
        assert buf.getvalue() == b"789"
        assert buf.dropped == 9

    def test_not_truncated_at_exact_limit(self) -> None:
        buf = TailBuffer(4)
        buf.add(b"ab")
        buf.add(b"cd")
        assert buf.getvalue() == b"abcd"
        assert not buf.truncated


def test_no_file_descriptor_leak(tmp_path: Path) -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    def stop(chunk: bytes) -> None:
        raise KeyboardInterrupt

    backend = CommandBackend(["wc", "-c"])
    run(backend, tmp_path)
    before = open_fds()
    for _ in range(30):
        run(backend, tmp_path, "x" * 1000)
    sleeper = agent({"print": "x\n", "sleep": 30}, kill_grace=0.2)
    for _ in range(3):
        with pytest.raises(KeyboardInterrupt):
            sleeper.run(
                "p", iteration=1, workdir=tmp_path, timeout=None, max_output=MB, stream=stop
            )
    assert open_fds() == before


def test_unstartable_file_is_a_backend_error(tmp_path: Path) -> None:
    junk = tmp_path / "agent.bin"
    junk.write_bytes(b"\x00\x01not a program")
    junk.chmod(0o755)
    with pytest.raises(BackendError, match=r"cannot start AI command '\./agent\.bin': Exec format"):
        run(CommandBackend(["./agent.bin"]), tmp_path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#!/nonexistent/python3\nprint(1)\n", "#! interpreter /nonexistent/python3 was not found"),
        ("#!/usr/bin/env no-such-ai-9\n", "runs 'no-such-ai-9', which is not on PATH"),
        ("echo hi\n", "is a text file without a #! line"),
        ("", "is a text file without a #! line"),
        ("#!\n", "has an empty #! line"),
    ],
)
def test_scripts_exec_would_refuse_are_explained(tmp_path: Path, text: str, expected: str) -> None:
    script = tmp_path / "ai"
    script.write_text(text)
    script.chmod(0o755)
    with pytest.raises(BackendError) as info:
        resolve_executable(["./ai"], workdir=tmp_path)
    assert expected in info.value.message
    # The run reports the same instead of exec's "No such file or directory".
    with pytest.raises(BackendError) as info:
        run(CommandBackend(["./ai"]), tmp_path)
    assert expected in info.value.message


def test_env_with_options_and_binaries_are_left_to_exec(tmp_path: Path) -> None:
    script = tmp_path / "ai"
    script.write_text("#!/usr/bin/env -S sh -e\necho ok\n")
    script.chmod(0o755)
    assert resolve_executable(["./ai"], workdir=tmp_path) == str(script)
    assert resolve_executable([sys.executable], workdir=tmp_path) == sys.executable


_DAEMON = """
import os, sys, time
sys.stdin.read()
print("<promise>SUCCESS</promise>", flush=True)
if os.fork() == 0:
    os.setsid()  # leaves the process group the runner kills
    with open(sys.argv[1], "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(60)
    os._exit(0)
"""


def test_daemon_that_left_the_group_holding_stdout_does_not_hang_the_run(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "daemon.pid"
    backend = CommandBackend([sys.executable, "-c", _DAEMON, str(pidfile)], drain_grace=0.3)
    started = time.monotonic()
    try:
        result = run(backend, tmp_path)
        assert time.monotonic() - started < 10
        assert result.exit_code == 0
        assert result.output == "<promise>SUCCESS</promise>\n"
    finally:
        deadline = time.monotonic() + 5
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        if pidfile.exists() and pidfile.read_text():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_tilde_is_not_expanded_and_the_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with pytest.raises(BackendError) as info:
        resolve_executable(["~/bin/claude", "-p"], workdir=tmp_path)
    assert info.value.message == (
        f"AI command not found: '~/bin/claude' (looked for {tmp_path}/~/bin/claude)"
    )
    assert info.value.hint == (
        "the command is not run through a shell, so ~ is not expanded; "
        f"write the full path ({tmp_path}/home/bin/claude)"
    )


def test_dollar_variables_are_not_expanded_and_the_error_says_so(tmp_path: Path) -> None:
    with pytest.raises(BackendError) as info:
        resolve_executable(["$AI_CLI"], workdir=tmp_path, env={"PATH": str(tmp_path)})
    assert info.value.message == f"AI command not found: '$AI_CLI' (searched PATH: {tmp_path})"
    assert info.value.hint is not None
    assert info.value.hint.startswith(
        "the command is not run through a shell, so $VARIABLES are not expanded; write the value"
        "\n  install it so that $AI_CLI is on PATH"
    )


def test_pass_fds_reach_the_command_and_nothing_else_does(tmp_path: Path) -> None:
    # A relay inherits the socket it reaches the model-API proxy by.
    read_end, write_end = os.pipe()
    other_read, other_write = os.pipe()
    try:
        script = (
            "import os, sys\n"
            f"os.write({write_end}, b'through')\n"
            f"try:\n    os.write({other_write}, b'x')\nexcept OSError:\n    print('closed')\n"
        )
        backend = CommandBackend([sys.executable, "-c", script], pass_fds=[write_end])
        result = backend.run(
            "", iteration=1, workdir=tmp_path, timeout=30, max_output=1 << 16, stream=None
        )
        assert os.read(read_end, 100) == b"through"
        assert result.output.strip() == "closed"
    finally:
        for fd in (read_end, write_end, other_read, other_write):
            os.close(fd)
