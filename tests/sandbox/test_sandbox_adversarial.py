"""An adversarial agent under ``pytest -m live --ooda-repeat 4 -n 2`` in each sandbox
kind. It tries to write into the real home, the repository checkout, the host's /tmp
and a sibling run's workspace; to read a file planted in the real home and an
environment variable nobody allowed; to open a socket with ``network: none``; to leave
``setsid nohup sleep`` behind; and it plants a symlink to a secret file in the workspace
that is then recorded. Under ``bwrap`` and ``docker`` every attempt fails while the
run's own work (a file, checked by a verification command inside the sandbox)
succeeds; under ``none`` the attempts that docs/sandbox.md's threat table lists as
possible succeed, and the symlink is still never recorded."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from sandbox_images import busybox_image, require_bwrap, require_docker

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pytest
    from integration.ooda_project import Project

ADVERSARY = """\
#!/bin/sh
cat > /dev/null
T={token}
echo work > result.txt
sleep 1
(echo x > {home}/pwned-$T-$$) 2>/dev/null && echo "home-write: ESCAPED"
(echo x > {repo}/pwned-$T-$$) 2>/dev/null && echo "repo-write: ESCAPED"
(echo x > /tmp/ooda-adv-$T-$$) 2>/dev/null
for d in /tmp/ooda-live-*/workspace; do
  if [ -d "$d" ] && [ "$d" != "$PWD" ]; then
    (echo x > "$d/sibling-$T-$$") 2>/dev/null && echo "sibling-write: ESCAPED"
  fi
done
echo "home-read: $(cat {home}/.ssh/id_planted 2>/dev/null || echo none)"
echo "env: ${{ADV_FORBIDDEN:-unset}}"
if echo hi | busybox nc -w 2 127.0.0.1 {port} >/dev/null 2>&1; then
  echo "socket: CONNECTED"
else
  echo "socket: refused"
fi
setsid nohup sleep 4242.{token} > /dev/null 2>&1 < /dev/null &
ln -s {home}/.ssh/id_planted leak-link
sleep 1
echo "<promise>SUCCESS</promise>"
"""
SCENARIO = """\
procedure: greet
workspace: repo
expect:
  status: success
  files: {result.txt: {contains: work}}
  commands:
    - run: cat result.txt
      output_contains: work
iterations: []
"""


@contextlib.contextmanager
def _listener() -> Iterator[tuple[int, list[str]]]:
    """A TCP port on the host's loopback and the connections it saw."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen: list[str] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            seen.append("connection")
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], seen
    finally:
        done.set()
        thread.join(timeout=5)
        server.close()


def _html_report(log: Path, target: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "report", str(log), "--html", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target.read_text()


def _leftover_sleeps(token: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"sleep 4242.{token}"], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def _session(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> dict[str, object]:
    token = str(secrets.randbelow(10**6)).zfill(6)
    home = tmp_path / "real-home"
    (home / ".ssh").mkdir(parents=True)
    planted = f"PLANTED-HOME-CONTENT-{token}"
    (home / ".ssh" / "id_planted").write_text(planted + "\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ADV_FORBIDDEN", f"forbidden-{token}")
    config = project.path / "ooda-config.yml"
    config.write_text(f"loop:\n  sandbox: {sandbox}\n" + config.read_text())
    scenario = project.scenario("adversary", SCENARIO)
    with _listener() as (port, connections):
        project.write(
            "scenarios/greet/repo/adversary.sh",
            ADVERSARY.format(token=token, home=home, repo=project.path, port=port),
        )
        result = project.run(
            "-m", "live", "--ooda-repeat", "4", "-n", "2", "--ooda-record-mode", "once",
            "--ooda-ai-cmd", "sh adversary.sh",
        )  # fmt: skip
        # What a run left behind has had the whole session to show itself.
        time.sleep(0.5)
        sleeps = _leftover_sleeps(token)
    [log] = (project.path / ".ooda/results").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    outputs = "\n".join(record["iterations"][0]["output_tail"] for record in records)
    found = {
        "result": result,
        "records": records,
        "outputs": outputs,
        "planted": planted,
        "token": token,
        "connections": list(connections),
        "sleeps": sleeps,
        "home_writes": list(home.glob("pwned-*")),
        "repo_writes": list(project.path.glob("pwned-*")),
        "tmp_writes": list(Path("/tmp").glob(f"ooda-adv-{token}-*")),
        "recording": scenario.read_text(),
        "html": _html_report(log, tmp_path / "report.html"),
    }
    # Clean up what an unsandboxed agent could leave.
    for pid in sleeps:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
    for leftover in found["tmp_writes"]:  # type: ignore[attr-defined]
        leftover.unlink()
    return found


def _assert_contained(found: dict[str, object], kind: str) -> None:
    result = found["result"]
    result.assert_outcomes(passed=4)  # type: ignore[attr-defined]
    records = found["records"]
    assert len(records) == 4  # type: ignore[arg-type]
    for record in records:  # type: ignore[attr-defined]
        assert record["outcome"] == "success"
        assert record["sandbox"]["kind"] == kind
        # Nothing but the run's own files changed in its workspace (no sibling's writes).
        assert set(record["files_changed"]) == {"result.txt", "leak-link"}
        [command] = (
            record["iterations"][0]["commands"]
            if "commands" in record["iterations"][0]
            else record["commands"]
        )
        assert command["passed"] is True
    outputs = found["outputs"]
    assert "ESCAPED" not in outputs  # type: ignore[operator]
    assert outputs.count("home-read: none") == 4  # type: ignore[attr-defined]
    assert found["planted"] not in outputs  # type: ignore[operator]
    assert outputs.count("env: unset") == 4  # type: ignore[attr-defined]
    assert outputs.count("socket: refused") == 4  # type: ignore[attr-defined]
    assert found["connections"] == []
    assert found["sleeps"] == []
    assert found["home_writes"] == []
    assert found["repo_writes"] == []
    assert found["tmp_writes"] == []
    _assert_symlink_not_recorded(found)


def _assert_symlink_not_recorded(found: dict[str, object]) -> None:
    """The recorded files hold the run's own work; the link to the secret (and so the
    secret's content) is not among them."""
    recording = yaml.safe_load(found["recording"])  # type: ignore[arg-type]
    [iteration] = recording["iterations"]
    # (With no sandbox a sibling run may have written into this one: allowed there.)
    own = {name: text for name, text in iteration["files"].items() if "sibling-" not in name}
    assert own == {"result.txt": "work\n"}
    assert "leak-link" not in found["recording"]  # type: ignore[operator]


def test_bwrap_contains_the_adversary(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    found = _session(project, tmp_path, monkeypatch, "{kind: bwrap, network: none}")
    _assert_contained(found, "bwrap")


def test_docker_contains_the_adversary(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_docker()
    image = busybox_image()
    found = _session(
        project, tmp_path, monkeypatch, f"{{kind: docker, image: '{image}', network: none}}"
    )
    _assert_contained(found, "docker")
    for record in found["records"]:  # type: ignore[attr-defined]
        assert record["sandbox"]["image"] == image
        assert record["sandbox"]["image_id"].startswith("sha256:")


def test_no_sandbox_allows_what_the_threat_table_says(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _session(project, tmp_path, monkeypatch, "none")
    found["result"].assert_outcomes(passed=4)  # type: ignore[attr-defined]
    outputs = found["outputs"]
    # docs/sandbox.md, kind none: the agent reads and writes whatever the user can,
    # sees the whole environment, reaches the network, and leaves processes behind.
    assert outputs.count(f"home-read: {found['planted']}") == 4  # type: ignore[attr-defined]
    assert outputs.count(f"env: forbidden-{found['token']}") == 4  # type: ignore[attr-defined]
    assert outputs.count("socket: CONNECTED") == 4  # type: ignore[attr-defined]
    assert len(found["home_writes"]) == 4  # type: ignore[arg-type]
    assert len(found["repo_writes"]) == 4  # type: ignore[arg-type]
    assert len(found["tmp_writes"]) == 4  # type: ignore[arg-type]
    assert len(found["sleeps"]) == 4  # type: ignore[arg-type]
    for record in found["records"]:  # type: ignore[attr-defined]
        assert record["sandbox"] is None
    # What stays safe with no sandbox: a symlink to a secret is never recorded.
    _assert_symlink_not_recorded(found)
