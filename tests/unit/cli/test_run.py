"""``ooda run``: real runs, dry runs, record/replay, exit codes and interruption; with
agent CLIs, output formats, budgets and their summary."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.cli import main
from pytest_ooda.scenario import load_scenario

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"
ROOT = Path(__file__).resolve().parents[3]
SUCCESS: dict[str, Any] = {"print": "done\n<promise>SUCCESS</promise>\n"}

CONFIG = """\
procedures:
  build:
    display: Build
    observe:
      - path: observe.md
    act:
      - content: "Do the work; say <promise>SUCCESS</promise> when done."
"""


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    (tmp_path / "observe.md").write_text("Look around.")
    home = tmp_path / "config-home"
    home.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("OODA_LOOP_"):
            monkeypatch.delenv(name)
    return tmp_path


def agent_cmd(tmp_path: Path, *steps: dict[str, Any]) -> str:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(list(steps)))
    return shlex.join([sys.executable, str(AGENT), "--plan", str(plan)])


def ooda_env(workspace: Path) -> dict[str, str]:
    """The environment of an ``ooda`` subprocess: this checkout's library, the
    workspace's empty global config home, and none of the caller's ``OODA_LOOP_*``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OODA_LOOP_")}
    env.update(OODA_CONFIG_HOME=str(workspace / "config-home"), PYTHONPATH=str(ROOT))
    return env


def ooda(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full_env = {**ooda_env(cwd), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# --------------------------------------------------------------------------- runs


def test_success_prints_log_lines(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cmd = agent_cmd(workspace, {"print": "working\n"}, {"print": "oops\n", "exit": 1}, SUCCESS)
    code = main(["run", "build", "--ai-cmd", cmd, "--max-iterations", "5"])
    err = capsys.readouterr().err.splitlines()
    assert code == 0
    assert err[0] == "Starting loop procedure=build max_iterations=5"
    assert err[1] == "Starting iteration 1/5 procedure=build"
    assert err[2].startswith("Completed iteration 1/5 elapsed=")
    assert err[2].endswith("status=ok")
    assert err[4].endswith('status=failure consecutive_failures=1 reason="exit code 1"')
    assert err[6].endswith("status=success")
    assert err[7].startswith("Loop completed status=success iterations=3 total_elapsed=")
    assert err[8].startswith("Iteration timing: count=3 min=")
    assert "stddev=" in err[8]


@pytest.mark.parametrize(
    ("steps", "args", "code", "status"),
    [
        ([{"print": "meh"}], ["-n", "2"], 3, "max-iters"),
        ([{"exit": 1}], ["-n", "9"], 1, "aborted"),
        ([{"print": "<promise>FAILURE</promise>"}], ["--unlimited"], 1, "aborted"),
    ],
)
def test_exit_codes(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    steps: list[dict[str, Any]],
    args: list[str],
    code: int,
    status: str,
) -> None:
    assert main(["run", "build", "--ai-cmd", agent_cmd(workspace, *steps), *args]) == code
    assert f"Loop completed status={status}" in capsys.readouterr().err


def test_ai_cmd_from_environment(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OODA_LOOP_AI_CMD", agent_cmd(workspace, SUCCESS))
    assert main(["run", "build", "-q"]) == 0


def test_quiet_prints_only_summary(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "build", "-q", "--ai-cmd", agent_cmd(workspace, SUCCESS)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert err[0].startswith("Loop completed status=success iterations=1")
    assert err[1].startswith("Iteration timing: count=1")


def test_verbose_streams_ai_output_to_stdout(workspace: Path) -> None:
    cmd = agent_cmd(workspace, {"print": "live words\n<promise>SUCCESS</promise>\n"})
    proc = ooda("run", "build", "--verbose", "--ai-cmd", cmd, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "live words\n<promise>SUCCESS</promise>\n"
    assert "  iteration 1: success (SUCCESS signal) exit=0 signal=SUCCESS" in proc.stderr


def test_not_a_tty_has_no_progress_line(workspace: Path) -> None:
    proc = ooda("run", "build", "--ai-cmd", agent_cmd(workspace, SUCCESS), cwd=workspace)
    assert "\r" not in proc.stderr
    assert "\x1b[" not in proc.stderr


def test_no_ai_command_configured(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "build"]) == 2
    err = capsys.readouterr().err
    assert "no AI command configured for procedure 'build'" in err
    assert "OODA_LOOP_AI_CMD" in err
    assert "--ai-cmd" in err
    assert "claude" in err  # known aliases are listed


def test_command_not_found_aborts(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "build", "--ai-cmd", "no-such-agent-cli -p"]) == 1
    err = capsys.readouterr().err
    assert "AI command not found: 'no-such-agent-cli' (searched" in err
    assert "install it so that no-such-agent-cli is on PATH" in err
    assert "Loop completed status=aborted iterations=0" in err


def test_unknown_procedure(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A usage mistake, as in rooda (exit 1), pointing at `ooda list`.
    assert main(["run", "biuld", "--ai-cmd", "x"]) == 1
    err = capsys.readouterr().err
    assert "did you mean 'build'?" in err
    assert "Run `ooda list` to see the available procedures" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--ai-cmd", "a", "--ai-cmd-alias", "claude"],
        ["--max-iterations", "2", "--unlimited"],
        ["--max-iterations", "0"],
        ["--max-iterations", "two"],
        ["--verbose", "--quiet"],
        ["--replay", "s.yml", "--ai-cmd", "a"],
        ["--replay", "s.yml", "--record", "t.yml"],
    ],
)
def test_usage_errors(workspace: Path, args: list[str]) -> None:
    assert main(["run", "build", *args]) == 1


# --------------------------------------------------------------------------- dry run


def test_dry_run_validates_and_starts_nothing(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pidfile = workspace / "started"
    cmd = agent_cmd(workspace, {"pidfile": str(pidfile), **SUCCESS})
    code = main(["run", "build", "--dry-run", "--ai-cmd", cmd, "-n", "4", "-x", "be brief"])
    out, err = capsys.readouterr()
    assert code == 0
    assert not pidfile.exists()
    assert "Iteration: 1 of 4" in out
    assert "be brief" in out
    assert "Look around." in out
    assert "max_iterations     4" in err
    assert "cli (--max-iterations)" in err
    assert "cli (--ai-cmd)" in err
    assert f"executable         {sys.executable}" in err


def test_dry_run_reports_missing_command(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{workspace / 'bin'}{os.pathsep}{workspace / 'sbin'}")
    assert main(["run", "build", "--dry-run", "--ai-cmd", "claude -p"]) == 2
    err = capsys.readouterr().err
    assert "AI command not found: 'claude'" in err
    assert str(workspace / "bin") in err
    assert str(workspace / "sbin") in err


def test_a_dry_run_without_an_ai_command_shows_the_prompt_and_says_what_is_missing(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "build", "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert "PHASE 1: OBSERVE" in out  # the prompt, all the same
    error = err[err.index("ooda: error:") :].splitlines()
    assert error[0] == (
        "ooda: error: no AI command configured for procedure 'build': the prompt above is "
        "what a run would send, once it has one"
    )
    assert error[1].startswith("  give --ai-cmd 'my-cli --flag' or --ai-cmd-alias NAME")
    assert len(error) == 2


def test_a_missing_alias_is_named_in_two_lines(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join(str(workspace / f"d{i}") for i in range(10)))
    assert main(["run", "build", "--dry-run", "--ai-cmd-alias", "kiro-cli"]) == 2
    out, err = capsys.readouterr()
    assert "PHASE 1: OBSERVE" in out
    error = err[err.index("ooda: error:") :].splitlines()
    assert error == [
        "ooda: error: alias kiro-cli: AI command not found: 'kiro-cli' (searched the 10 "
        "folders of PATH)",
        "  install it so that kiro-cli is on PATH (`ooda help agents`), or write its full "
        'path in the config: ai_cmd: "/path/to/kiro-cli …", or the alias under '
        "ai_cmd_aliases:",
    ]


def test_an_alias_only_a_run_needs_stops_neither_show_nor_lint(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Defined in a global config `ooda lint` does not read (nor this test's `show`).
    config = workspace / "ooda-config.yml"
    config.write_text("loop:\n  ai_cmd_alias: kiro\n" + config.read_text())
    assert main(["show", "build"]) == 0
    assert "PHASE 1: OBSERVE" in capsys.readouterr().out
    assert main(["lint", "--select", "OODA0"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ooda-config.yml:2:3: OODA003 warning: loop.ai_cmd_alias: unknown AI command alias "
        "'kiro' (a run of it will fail until the alias is defined)",
        "  did you mean 'kiro-cli'?",
        "  known aliases: claude, copilot, cursor-agent, kiro-cli",
        "1 finding: 0 errors, 1 warning, 0 infos (1 procedure checked)",
    ]
    # The run that needs it stops before anything starts, at the alias's line.
    assert main(["run", "build", "--dry-run"]) == 2
    assert "ooda: error: ooda-config.yml:2:3: loop.ai_cmd_alias: unknown AI command alias" in (
        capsys.readouterr().err
    )


def test_dry_run_reports_not_executable(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "agent.sh").write_text("#!/bin/sh\n")
    assert main(["run", "build", "--dry-run", "--ai-cmd", "./agent.sh"]) == 2
    assert "AI command is not executable" in capsys.readouterr().err


def test_dry_run_reports_broken_fragment(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "observe.md").unlink()
    assert main(["run", "build", "--dry-run", "--ai-cmd", sys.executable]) == 2
    assert "observe.md" in capsys.readouterr().err


# --------------------------------------------------------------------------- record / replay


def test_record_then_replay(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cmd = agent_cmd(workspace, {"print": "step one\n"}, SUCCESS)
    scenario = workspace / "scenarios" / "build" / "happy.yml"
    assert main(["run", "build", "--ai-cmd", cmd, "-n", "3", "--record", str(scenario)]) == 0
    assert f"recorded 2 iteration(s) to {scenario}" in capsys.readouterr().err
    recorded = load_scenario(scenario)
    assert [it.output for it in recorded.iterations] == ["step one\n", SUCCESS["print"]]
    assert recorded.max_iterations == 3
    assert recorded.expect is not None
    assert recorded.expect.status == "success"

    # Replay needs no AI command and starts none.
    assert main(["run", "build", "--replay", str(scenario)]) == 0
    err = capsys.readouterr().err
    assert "Loop completed status=success iterations=2" in err
    assert "warning" not in err

    # A fragment edit shows up as drift naming the fragment.
    (workspace / "observe.md").write_text("Look around twice.")
    assert main(["run", "build", "--replay", str(scenario)]) == 0
    err = capsys.readouterr().err
    assert "prompt of iteration 1 drifted" in err
    assert "changed fragments: observe.md" in err
    assert "-Look around.\n+Look around twice." in err


def test_replay_running_out(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workspace / "short.yml"
    path.write_text("procedure: build\niterations:\n  - output: nothing yet\n")
    assert main(["run", "build", "--replay", str(path), "-n", "3"]) == 2
    assert "scenario 'build/short' has 1 iteration, loop asked for a 2nd" in capsys.readouterr().err


def test_replay_of_other_procedure(workspace: Path) -> None:
    path = workspace / "other.yml"
    path.write_text("procedure: publish\n")
    assert main(["run", "build", "--replay", str(path)]) == 1


@pytest.mark.parametrize("flag", ["--record", "--replay"])
def test_a_trigger_set_is_neither_recorded_nor_replayed(
    workspace: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """A trigger set is a live run per prompt (``pytest -m live``): ``ooda run`` says so
    before running anything, and leaves the file as it was."""
    path = workspace / "scenarios" / "build" / "hi.yml"
    path.parent.mkdir(parents=True)
    text = "procedure: build\ntriggers: {skill: greet, should: [Greet Ada]}\niterations: []\n"
    path.write_text(text)
    cmd = agent_cmd(workspace, SUCCESS)
    extra = ["--ai-cmd", cmd] if flag == "--record" else []
    assert main(["run", "build", flag, str(path), *extra]) == 1
    err = capsys.readouterr().err
    assert f"{flag} {path}: scenario build/hi is a trigger set" in err
    assert "pytest -m live -k hi" in err
    assert path.read_text() == text


# --------------------------------------------------------------------------- interruption


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


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_to_ooda_run_mid_iteration(workspace: Path, signum: int) -> None:
    pidfile = workspace / "agent.pid"
    step = {"pidfile": str(pidfile), "grandchild": 60, "print": "thinking\n", "sleep": 60}
    env = ooda_env(workspace)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest_ooda",
            "run",
            "build",
            "--ai-cmd",
            agent_cmd(workspace, step),
        ],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pidfile.exists(), "the fake agent never started"
    time.sleep(0.3)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "Loop completed status=interrupted iterations=0" in err
    assert not _group_alive(int(pidfile.read_text()))


# --------------------------------------------------------------------------- user mistakes


def test_context_naming_a_directory_is_a_usage_error_before_running(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "specs").mkdir()
    marker = workspace / "started"
    cmd = agent_cmd(workspace, {**SUCCESS, "pidfile": str(marker)})
    assert main(["run", "build", "--ai-cmd", cmd, "--context", "specs"]) == 1
    assert "--context specs: is a directory" in capsys.readouterr().err
    assert not marker.exists()
    assert main(["show", "build", "--context", "specs"]) == 1


def test_context_file_that_cannot_be_read(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    (workspace / "secret.txt").write_text("x")
    real_open = builtins.open

    def fake_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        # Tests run as root, where chmod 000 does not stop open(); simulate EACCES.
        if str(file) == "secret.txt":
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    assert main(["show", "build", "--context", "secret.txt"]) == 1
    assert "--context secret.txt: cannot read: Permission denied" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("adir", "adir: cannot write scenario file: it is a directory"),
        ("afile/x.yml", "afile/x.yml: cannot write scenario file: afile is not a directory"),
        ("/proc/ooda-x.yml", "/proc/ooda-x.yml: cannot write scenario file: "),
    ],
)
def test_record_target_that_cannot_be_written_fails_before_the_run(
    workspace: Path, capsys: pytest.CaptureFixture[str], target: str, expected: str
) -> None:
    (workspace / "adir").mkdir()
    (workspace / "afile").write_text("x")
    marker = workspace / "started"
    cmd = agent_cmd(workspace, {**SUCCESS, "pidfile": str(marker)})
    assert main(["run", "build", "--ai-cmd", cmd, "--record", target]) == 2
    err = capsys.readouterr().err
    assert f"ooda: error: {expected}" in err
    assert "Traceback" not in err
    assert not marker.exists()


def test_record_into_new_directories(workspace: Path) -> None:
    cmd = agent_cmd(workspace, SUCCESS)
    assert main(["run", "build", "--ai-cmd", cmd, "--record", "new/sub/s.yml", "-q"]) == 0
    assert load_scenario(workspace / "new" / "sub" / "s.yml").iterations


def test_unexpected_os_error_is_reported_without_traceback(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ooda.cli import list as list_command

    def boom(args: Any, **overrides: Any) -> Any:
        raise PermissionError(13, "Permission denied", "/some/where")

    monkeypatch.setattr(list_command, "load_from_args", boom)
    assert main(["list"]) == 2
    assert capsys.readouterr().err == "ooda: error: /some/where: Permission denied\n"


def test_log_level_from_config_and_environment(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cmd = agent_cmd(workspace, SUCCESS)
    (workspace / "ooda-config.yml").write_text(CONFIG + "loop:\n  log_level: warn\n")
    assert main(["run", "build", "--ai-cmd", cmd]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("Loop completed status=success iterations=1")
    monkeypatch.setenv("OODA_LOOP_LOG_LEVEL", "info")
    assert main(["run", "build", "--ai-cmd", cmd]) == 0
    assert capsys.readouterr().err.startswith("Starting loop procedure=build")


def test_context_that_is_not_utf8_does_not_crash_the_run(workspace: Path) -> None:
    prompt_file = workspace / "prompt.txt"
    cmd = agent_cmd(workspace, {**SUCCESS, "record_prompt": str(prompt_file)})
    args = [sys.executable, "-m", "pytest_ooda", "run", "build", "--ai-cmd", cmd, "-q"]
    env = ooda_env(workspace)
    proc = subprocess.run(
        [os.fsencode(a) for a in args] + [b"--context", b"caf\xe9"],
        cwd=workspace,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    assert "caf\ufffd" in prompt_file.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args", [["show", "build"], ["run", "build", "--dry-run"], ["run", "build", "--verbose"]]
)
def test_closed_stdout_is_not_a_traceback(workspace: Path, args: list[str]) -> None:
    cmd = agent_cmd(workspace, SUCCESS)
    env = ooda_env(workspace)
    extra = ["--ai-cmd", cmd] if args[0] == "run" else []
    full = [sys.executable, "-m", "pytest_ooda", *args, *extra]
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *full],
        cwd=workspace,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_deleted_working_directory(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def gone() -> str:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(os, "getcwd", gone)
    assert main(["list"]) == 2
    assert capsys.readouterr().err == (
        "ooda: error: cannot use the current directory: No such file or directory "
        "(was it deleted?)\n"
    )


def test_replay_never_touches_the_working_tree(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "important.txt").write_text("keep me")
    (workspace / "fixture").mkdir()
    (workspace / "fixture" / "seed.txt").write_text("from the workspace")
    (workspace / "s.yml").write_text(
        "procedure: build\n"
        "workspace: fixture\n"
        "expect:\n"
        "  status: success\n"
        "  files:\n"
        "    important.txt: absent\n"
        "    seed.txt: {contains: from the workspace}\n"
        "    new.txt: {contains: hello}\n"
        "iterations:\n"
        "  - output: <promise>SUCCESS</promise>\n"
        "    files: {important.txt: null, new.txt: hello}\n"
    )
    assert main(["run", "build", "--replay", "s.yml", "-q"]) == 0
    err = capsys.readouterr().err
    assert "expectation not met" not in err
    assert (workspace / "important.txt").read_text() == "keep me"
    assert not (workspace / "new.txt").exists()
    assert sorted(p.name for p in (workspace / "fixture").iterdir()) == ["seed.txt"]


def test_replay_with_missing_workspace(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "s.yml").write_text("procedure: build\nworkspace: nowhere\niterations: []\n")
    assert main(["run", "build", "--replay", "s.yml"]) == 2
    assert "s.yml:2:1: workspace directory not found: nowhere" in capsys.readouterr().err


def test_replay_keeps_the_workspace_inside_the_project(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As in pytest: a scenario may not copy a directory above the project."""
    (workspace / "s.yml").write_text("procedure: build\nworkspace: ..\niterations: []\n")
    assert main(["run", "build", "--replay", "s.yml"]) == 2
    err = capsys.readouterr().err
    assert "s.yml:2:1: workspace '..' is outside the project" in err


def test_closed_stderr_pipe_keeps_the_run_exit_code(workspace: Path) -> None:
    # Slow enough that the log is still being written after the reader hangs up.
    cmd = agent_cmd(workspace, {"print": "nope\n", "sleep": 0.3, "exit": 1})
    env = ooda_env(workspace)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_ooda", "run", "build", "--ai-cmd", cmd, "-n", "3"],
        cwd=workspace,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    proc.stderr.readline()  # like `| head -1`: read the first log line, then hang up
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1  # aborted after three failures, not 0


def test_dry_run_checks_the_record_target_without_creating_anything(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cmd = agent_cmd(workspace, SUCCESS)
    (workspace / "afile").write_text("x")
    assert main(["run", "build", "--ai-cmd", cmd, "--dry-run", "--record", "afile/s.yml"]) == 2
    assert "afile/s.yml: cannot write scenario file: afile is not a directory" in (
        capsys.readouterr().err
    )
    assert main(["run", "build", "--ai-cmd", cmd, "--dry-run", "--record", "new/sub/s.yml"]) == 0
    assert "  record  new/sub/s.yml (checked: writable)" in capsys.readouterr().err
    assert not (workspace / "new").exists()
    (workspace / "other.yml").write_text("procedure: audit\niterations: []\n")
    assert main(["run", "build", "--ai-cmd", cmd, "--dry-run", "--record", "other.yml"]) == 1
    assert "records procedure 'audit', not 'build'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("iterations", "expected"),
    [
        (
            '  - output: x\n  - output: y\n    files: {"../evil.txt": hi}\n',
            "s.yml:4: iterations[1]: replayed file change '../evil.txt' points outside "
            "the workspace",
        ),
        (
            '  - output: "half a pair \\ud800"\n',
            "s.yml:3: iterations[0]: the text holds '\\ud800', which is not a character",
        ),
    ],
)
def test_replay_step_errors_are_located_not_tracebacks(
    workspace: Path, capsys: pytest.CaptureFixture[str], iterations: str, expected: str
) -> None:
    (workspace / "s.yml").write_text("procedure: build\niterations:\n" + iterations)
    assert main(["run", "build", "--replay", "s.yml", "-q"]) == 2
    err = capsys.readouterr().err
    assert f"ooda: error: {expected}" in err
    assert not (workspace.parent / "evil.txt").exists()


def test_binary_parameter_bytes_reach_the_ai_as_bytes(workspace: Path) -> None:
    # Go's yaml.v3 decodes !!binary into a string of raw bytes and the template prints
    # them as they are; the runner must send them, not crash encoding them.
    (workspace / "ooda-config.yml").write_text(
        CONFIG + '      - content: "raw:{{.x}}."\n        parameters: {x: !!binary /w==}\n'
    )
    received = workspace / "prompt.bin"
    cmd = agent_cmd(workspace, {**SUCCESS, "record_prompt": str(received)})
    assert main(["run", "build", "--ai-cmd", cmd, "-q"]) == 0
    assert b"raw:\xff." in received.read_bytes()


def test_a_prompt_holding_no_value_stops_the_run_before_the_first_iteration(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A misspelt parameter would send the agent the text <no value> (OODA205).
    (workspace / "observe.md").write_text("Look around.\nRead {{.pathz}} first.\n")
    (workspace / "ooda-config.yml").write_text(
        CONFIG.replace("      - path: observe.md\n", "      - path: observe.md\n"
                       "        parameters: {paths: src/}\n")
    )  # fmt: skip
    started = workspace / "started"
    agent = workspace / "agent.py"
    agent.write_text(f"import pathlib\npathlib.Path({str(started)!r}).touch()\nprint('hi')\n")
    cmd = f"{sys.executable} {agent}"
    code = main(["run", "build", "--ai-cmd", cmd, "-n", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert not started.exists()
    assert (
        "observe.md:2:8: OODA205 error: procedure build: observe[0]: observe.md renders "
        "<no value> for .pathz: the action does not supply it"
    ) in err
    assert "did you mean 'paths'?" in err
    assert "used by procedure build: observe[0] at ooda-config.yml:5:9" in err
    assert "1 lint error(s) that would make the run meaningless; the run was not started" in err
    assert "--no-lint" in err
    assert main(["run", "build", "--ai-cmd", cmd, "-n", "1", "--dry-run"]) == 2
    # --no-lint runs it anyway; the iteration limit has its own exit code.
    assert main(["run", "build", "--ai-cmd", cmd, "-n", "1", "--no-lint"]) == 3
    assert started.exists()


def test_advice_level_lint_errors_are_warnings_and_the_run_goes_on(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No fragment says when to print SUCCESS (OODA301): an error in `ooda lint`, advice
    # in a run (the preamble explains the signal, as rooda's does).
    (workspace / "ooda-config.yml").write_text(
        CONFIG.replace("; say <promise>SUCCESS</promise> when done", "")
    )
    cmd = agent_cmd(workspace, SUCCESS)
    assert main(["run", "build", "--ai-cmd", cmd, "-n", "1"]) == 0
    err = capsys.readouterr().err
    assert (
        "warning: ooda-config.yml:2:3: OODA301 warning: procedure build: no fragment says "
        "when to emit <promise>SUCCESS</promise> (an error in `ooda lint`)"
    ) in err
    assert "the run was not started" not in err
    assert main(["lint"]) == 1
    assert "OODA301 error" in capsys.readouterr().out


def test_the_exit_codes_are_documented_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "  3    iteration limit reached without a signal (max-iters)" in out
    assert "  2    configuration error" in out
    assert main(["--help"]) == 0
    assert "3 iteration limit reached" in capsys.readouterr().out


# --- with agent CLIs: --ai-output, --max-cost/--max-tokens, the summary's cost and
# tokens, live rendering with --verbose, and recordings that say a budget stopped
# the run (fake agents printing Claude Code's stream-json; the real CLI is in
# tests/agents/test_real_claude.py).


@pytest.fixture
def agent_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  build:\n    act:\n"
        "      - content: Do the work; say <promise>SUCCESS</promise> when done.\n",
        encoding="utf-8",
    )
    home = tmp_path / "config-home"
    home.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("OODA_LOOP_"):
            monkeypatch.delenv(name)
    return tmp_path


def _stream(text: str, cost: float, command: str = "pytest -q") -> str:
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "model": "m"},
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}},
        {"type": "result", "is_error": False, "result": text, "num_turns": 2,
         "total_cost_usd": cost, "usage": {"input_tokens": 900, "output_tokens": 100}},
    ]  # fmt: skip
    return "".join(json.dumps(event) + "\n" for event in events)


def _agent(tmp_path: Path, *outputs: str) -> str:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"print": output} for output in outputs]), encoding="utf-8")
    return shlex.join([sys.executable, str(AGENT), "--plan", str(plan)])


def test_a_budget_stops_the_run_and_the_summary_says_what_it_cost(
    agent_workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cmd = _agent(agent_workspace, _stream("working", 0.05))
    code = main(
        ["run", "build", "--ai-cmd", cmd, "--ai-output", "claude-stream-json",
         "--max-cost", "0.08", "-n", "5", "--verbose"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    assert "warning: Loop aborted: budget reached: the run cost $0.1000, max_cost is $0.08" in err
    assert "Loop completed status=aborted iterations=2" in err
    assert "tokens=2000 cost=$0.1000" in err
    assert "turns=2 tool_calls=1" in err  # the per-iteration detail line
    # --verbose shows the stream as readable lines, never raw JSON.
    assert out.count("→ Bash: pytest -q\n") == 2
    assert "✓ done: 2 turns · 1000 tokens · $0.0500" in out
    assert '"type"' not in out


def test_the_format_follows_the_commands_flags_and_tokens_budget(
    agent_workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The fake takes any arguments; "--output-format stream-json" on a command named
    # claude is what makes a run read stream-json without --ai-output.
    fake_claude = agent_workspace / "bin" / "claude"
    fake_claude.parent.mkdir()
    plan = agent_workspace / "plan.json"
    plan.write_text(json.dumps([{"print": _stream("w", 0.01)}]), encoding="utf-8")
    fake_claude.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(AGENT))} "
        f"--plan {shlex.quote(str(plan))}\n",
        encoding="utf-8",
    )
    fake_claude.chmod(0o755)
    cmd = f"{fake_claude} -p --output-format stream-json --verbose"
    assert main(["run", "build", "--ai-cmd", cmd, "--max-tokens", "1500", "-n", "4"]) == 1
    err = capsys.readouterr().err
    assert "budget reached: the run used 2000 tokens, max_tokens is 1500" in err


def test_dry_run_shows_format_and_budget_with_their_sources(
    agent_workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (agent_workspace / "ooda-config.yml").write_text(
        "loop:\n  max_tokens: 5000\nprocedures:\n  build:\n    max_cost: 3\n"
        "    act: [{content: 'go; say <promise>SUCCESS</promise>'}]\n",
        encoding="utf-8",
    )
    cmd = _agent(agent_workspace, "x")
    code = main(
        ["run", "build", "--dry-run", "--ai-cmd", cmd, "--ai-output", "claude-json",
         "--max-cost", "2.5"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0
    rows = {line.split()[0]: line.split()[1:] for line in err.splitlines()[1:] if line.strip()}
    assert rows["ai_output"] == ["claude-json", "cli", "(--ai-output)"]
    assert rows["max_cost"] == ["$2.5", "cli", "(--max-cost)"]
    assert rows["max_tokens"][:2] == ["5000", "workspace"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-cost", "cheap"], "--max-cost: expected an amount in US dollars > 0, got 'cheap'"),
        (["--max-cost", "0"], "--max-cost: expected an amount in US dollars > 0, got '0'"),
        (["--max-cost", "inf"], "--max-cost: expected an amount in US dollars > 0, got 'inf'"),
        (["--max-tokens", "1.5"], "--max-tokens: expected an integer >= 1, got '1.5'"),
        (["--ai-output", "json"], "--ai-output: expected one of text, claude-json"),
        (
            ["--ai-output", "claude-jsn"],
            "--ai-output: expected one of text, claude-json, claude-stream-json, codex-json, "
            "gemini-stream-json, gemini-json, qwen-stream-json, got 'claude-jsn'; did you mean "
            "'claude-json'?",
        ),
        (["--sandbox", "bwarp"], "--sandbox: unknown sandbox kind 'bwarp'; did you mean 'bwrap'?"),
    ],
)
def test_bad_values_are_usage_errors(
    agent_workspace: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["run", "build", "--ai-cmd", "x", *args]) == 1
    assert message in capsys.readouterr().err


def test_a_recording_says_a_budget_stopped_the_run_and_replays_to_it(
    agent_workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cmd = _agent(agent_workspace, _stream("working", 0.05, command=f"ls {agent_workspace}/src"))
    args = ["run", "build", "--ai-cmd", cmd, "--ai-output", "claude-stream-json"]
    assert main([*args, "--max-cost", "0.08", "-n", "5", "--record", "rec.yml"]) == 1
    recorded = load_scenario(agent_workspace / "rec.yml")
    assert recorded.recorded is not None
    assert recorded.recorded.status == "aborted"
    assert recorded.recorded.reason == "budget reached: the run cost $0.1000, max_cost is $0.08"
    assert recorded.recorded.cost == pytest.approx(0.10)
    first = recorded.iterations[0]
    assert first.tool_calls is not None
    assert first.tool_calls[0].summary == "ls src"  # the workspace path made relative
    assert first.usage is not None
    assert first.usage.cost == pytest.approx(0.05)
    assert recorded.max_cost == 0.08  # the budget that stopped it, kept for the replay
    capsys.readouterr()
    assert main(["run", "build", "--replay", "rec.yml"]) == 1
    err = capsys.readouterr().err
    assert "Loop completed status=aborted iterations=2" in err
    assert "scenario expectation not met" not in err
