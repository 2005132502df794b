"""The ``bwrap`` sandbox with the real bubblewrap, through the command backend's seam:
the workspace is the only writable place, /tmp is private, HOME is fresh (listed files
copied in), the environment is an allow-list, ``network: none`` has no route out, and
nothing the run started outlives it. Verification commands run in the same sandbox."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sandbox_images import require_bwrap

from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.sandbox import parse_spec
from pytest_ooda.sandbox.bwrap import BwrapSandbox
from pytest_ooda.scenario.verify import CommandCheck

#: An act fragment that says when to signal (`ooda run` refuses lint errors).
GO = "'go, then <promise>SUCCESS</promise>'"


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def _run(spec: dict[str, object], script: str, tmp_path: Path, **env: str) -> tuple[str, Path]:
    sandbox = BwrapSandbox(parse_spec({"kind": "bwrap", **spec}))
    sandbox.prepare()
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    with sandbox.start(workspace, scratch) as run:
        backend = CommandBackend(["/bin/sh", "-c", script], env={**os.environ, **env}, sandbox=run)
        done = backend.run(
            "", iteration=1, workdir=workspace, timeout=60, max_output=1 << 20, stream=None
        )
    return done.output, workspace


def test_the_workspace_is_the_only_writable_place(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    home = Path(os.environ.get("HOME", "/root"))
    script = (
        f"echo ok > in-workspace.txt && echo WORKSPACE-OK; "
        f"touch {outside}/x 2>/dev/null && echo OUTSIDE-WRITTEN; "
        f"touch {home}/ooda-bwrap-probe 2>/dev/null && echo HOME-WRITTEN; "
        f"touch /usr/ooda-bwrap-probe 2>/dev/null && echo USR-WRITTEN; "
        "echo private > /tmp/ooda-bwrap-private && echo TMP-WRITTEN"
    )
    output, workspace = _run({}, script, tmp_path)
    assert "WORKSPACE-OK" in output
    assert (workspace / "in-workspace.txt").read_text() == "ok\n"
    for escaped in ("OUTSIDE-WRITTEN", "HOME-WRITTEN", "USR-WRITTEN"):
        assert escaped not in output
    assert not list(outside.iterdir())
    assert not (home / "ooda-bwrap-probe").exists()
    # /tmp is the run's own: writable inside, never the host's.
    assert "TMP-WRITTEN" in output
    assert not Path("/tmp/ooda-bwrap-private").exists()


def test_a_fresh_home_holds_the_listed_files_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-home"
    (real / ".config" / "agent").mkdir(parents=True)
    (real / ".config" / "agent" / "auth.json").write_text("agent credentials\n")
    (real / ".ssh").mkdir()
    (real / ".ssh" / "id_ed25519").write_text("private key\n")
    monkeypatch.setenv("HOME", str(real))
    script = (
        'echo "HOME=$HOME"; cat "$HOME/.config/agent/auth.json"; '
        f"cat {real}/.ssh/id_ed25519 2>/dev/null || echo SSH-HIDDEN; "
        'ls -A "$HOME"'
    )
    output, _ = _run({"home_files": ["~/.config/agent/auth.json"]}, script, tmp_path)
    assert f"HOME={real}" not in output
    assert "agent credentials" in output
    assert "SSH-HIDDEN" in output
    assert "private key" not in output
    assert output.strip().endswith(".config")


def test_the_environment_is_an_allow_list(tmp_path: Path) -> None:
    script = 'echo "key=$ANTHROPIC_API_KEY other=$OTHER_SECRET fixed=$IS_SANDBOX path=${PATH:+set}"'
    output, _ = _run(
        {"env": ["ANTHROPIC_API_KEY", "IS_SANDBOX=1"]},
        script,
        tmp_path,
        ANTHROPIC_API_KEY="allowed-value",
        OTHER_SECRET="must-not-pass",
    )
    assert output.strip() == "key=allowed-value other= fixed=1 path=set"


def test_network_none_has_no_route_even_to_the_hosts_loopback(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(8)
    port = server.getsockname()[1]
    accepted: list[str] = []

    def accept() -> None:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        accepted.append("connection")
        connection.close()

    thread = threading.Thread(target=accept)
    thread.start()
    script = f"echo hi | busybox nc -w 2 127.0.0.1 {port} && echo CONNECTED || echo REFUSED"
    try:
        output, _ = _run({"network": "none"}, script, tmp_path)
        host_output, _ = _run({"network": "host"}, script, tmp_path)
    finally:
        thread.join(timeout=10)
        server.close()
    assert "REFUSED" in output
    # The same probe with the host's network does connect: the check can fail.
    assert "CONNECTED" in host_output
    assert len(accepted) == 1


def test_nothing_the_run_started_outlives_it(tmp_path: Path) -> None:
    marker = "31337.25"
    script = f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null & echo started"
    output, _ = _run({}, script, tmp_path)
    assert "started" in output
    # The PID namespace dies with the run; the kernel's SIGKILL lands within moments.
    deadline = time.monotonic() + 5
    while True:
        left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
        if left.stdout == "" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left.stdout == ""


def test_a_verification_command_runs_in_the_same_sandbox(tmp_path: Path) -> None:
    sandbox = BwrapSandbox(parse_spec({"kind": "bwrap"}))
    sandbox.prepare()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "made.txt").write_text("the agent's work\n")
    with sandbox.start(workspace, tmp_path) as run:
        check = CommandCheck(
            f"cat made.txt && touch {tmp_path}/escaped /usr/ooda-escaped",
            output_contains=("agent's work",),
        )
        outcome = check.verify(workspace, sandbox=run)
    # Writes outside the workspace reach nothing of the host: a private /tmp, a
    # read-only /usr.
    assert not (tmp_path / "escaped").exists()
    assert not Path("/usr/ooda-escaped").exists()
    assert "Read-only file system" in outcome.output_tail
    assert outcome.exit_code != 0
    assert outcome.problem is not None
    assert "exited 1, expected 0" in outcome.problem


def test_ooda_run_sandbox_bwrap_runs_the_agent_inside(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    act: [{content: " + GO + "}]\n"
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    agent = (
        "cat > /dev/null; echo made > made.txt; "
        f"touch {outside}/escaped 2>/dev/null || echo blocked; "
        "echo '<promise>SUCCESS</promise>'"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OODA_", "ROODA_"))}
    env.update(OODA_CONFIG_HOME=str(tmp_path / "none"), PYTHONPATH=str(Path(__file__).parents[3]))
    done = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "run", "p", "--sandbox", "bwrap",
         "--ai-cmd", f"sh -c {agent!r}", "--max-iterations", "1", "--verbose"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (project / "made.txt").read_text() == "made\n"
    assert not (outside / "escaped").exists()
    assert "blocked" in done.stdout + done.stderr


def test_an_agent_bwrap_cannot_start_is_an_infrastructure_error(tmp_path: Path) -> None:
    # The launcher's own failure (bwrap: execvp …, nothing else printed) is no answer of
    # the agent's: the loop ends the run with `cannot-start`, never a failure.
    from pytest_ooda.loop import run_procedure
    from pytest_ooda.results import classify_outcome
    from pytest_ooda.scenario import load_scenario_text

    sandbox = BwrapSandbox(parse_spec({"kind": "bwrap"}))
    sandbox.prepare()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    act: [{content: 'go <promise>SUCCESS</promise>'}]\n"
    )
    from pytest_ooda.config import load_config

    config = load_config(tmp_path / "ooda-config.yml", cwd=tmp_path, global_config=False)
    with sandbox.start(workspace, tmp_path / "scratch") as run:
        backend = CommandBackend(["/no/such/agent", "-p"], sandbox=run)
        done = backend.run(
            "", iteration=1, workdir=workspace, timeout=60, max_output=1 << 16, stream=None
        )
        result = run_procedure(
            config, "p", backend=backend, workdir=workspace, handle_signals=False
        )
        # An agent that starts and fails is the prompt's failure, as before.
        failing = CommandBackend(["/bin/sh", "-c", "echo 'bwrap: execvp x'; echo more; exit 1"])
        own = CommandBackend(failing.argv, sandbox=run).run(
            "", iteration=1, workdir=workspace, timeout=60, max_output=1 << 16, stream=None
        )
    assert done.infra_error is not None
    assert done.infra_error.startswith("cannot-start: the sandbox could not start the agent:")
    assert "bwrap: execvp /no/such/agent" in done.infra_error
    assert result.status == "aborted"
    assert len(result.records) == 1  # not retried: it would not start on a second try
    scenario = load_scenario_text("procedure: p\nexpect: {status: success}\n")
    assert classify_outcome(scenario, result, ())[0] == "error"
    assert own.infra_error is None
