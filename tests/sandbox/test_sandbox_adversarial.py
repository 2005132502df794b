"""An adversarial agent under ``pytest -m live --ooda-repeat 4 -n 2`` in each sandbox
kind. It tries to write into the real home, the repository checkout, the host's /tmp
and another run's workspace; to read a file planted in the real home and an environment
variable nobody allowed; to open a socket with ``network: none``; to leave ``setsid
nohup sleep`` behind; and it links a secret file into the workspace twice — a symlink
its ``expect.files`` asks about (``contains:`` the secret) and a hard link — which are
then recorded, logged, reported and rendered. What it achieves is what the threat
table of docs/sandbox.md says for the rows a whole session observes
(tests/sandbox/helpers.py); the probe's rows are test_sandbox_threats.py's. Under
``bwrap`` and ``docker`` every attempt fails while the run's own work (a file, checked
by a verification command inside the sandbox) succeeds; under every kind the file check
fails the link ("links outside the workspace") without reading it, and the secret
reaches no recording, log, report or page."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from sandbox_images import busybox_image, require_bwrap, require_docker

from .helpers import session_rows

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
for d in /tmp/ooda-live-*/workspace {sibling}; do
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
ln -s {home}/.ssh/id_linked PLAN.md
ln {home}/.ssh/id_linked hard.txt 2>/dev/null
sleep 1
echo "<promise>SUCCESS</promise>"
"""
SCENARIO = """\
procedure: greet
workspace: repo
expect:
  status: success
  files: {result.txt: {contains: work}, PLAN.md: {contains: PLANTED-HOME-CONTENT}}
  commands:
    - run: cat result.txt
      output_contains: work
iterations: []
"""
LINK_PROBLEM = "file PLAN.md: links outside the workspace (not read)"


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
    # Linked, never printed: what reaches a sink of it came through a link.
    linked = f"PLANTED-HOME-CONTENT-LINKED-{token}"
    (home / ".ssh" / "id_linked").write_text(linked + "\n")
    # Another run's workspace, there for the whole session (siblings come and go).
    sibling = Path(tempfile.mkdtemp(prefix="ooda-sibling-")) / "workspace"
    sibling.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ADV_FORBIDDEN", f"forbidden-{token}")
    config = project.path / "ooda-config.yml"
    config.write_text(f"loop:\n  sandbox: {sandbox}\n" + config.read_text())
    scenario = project.scenario("adversary", SCENARIO)
    with _listener() as (port, connections):
        project.write(
            "scenarios/greet/repo/adversary.sh",
            ADVERSARY.format(token=token, home=home, repo=project.path, port=port, sibling=sibling),
        )
        # Every run fails its file check of the link, and a failed run is recorded only
        # on request: asked for, so the recording the secret must stay out of is written.
        result = project.run(
            "-m", "live", "--ooda-repeat", "4", "-n", "2", "--ooda-record-mode", "once",
            "--ooda-record-failures", "--ooda-ai-cmd", "sh adversary.sh",
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
        "linked": linked,
        "token": token,
        "connections": list(connections),
        "sleeps": sleeps,
        "home_writes": list(home.glob("pwned-*")),
        "repo_writes": list(project.path.glob("pwned-*")),
        "tmp_writes": list(Path("/tmp").glob(f"ooda-adv-{token}-*")),
        "sibling_writes": list(sibling.glob("sibling-*")),
        "recording": scenario.read_text(),
        "log": log.read_text(),
        "html": _html_report(log, tmp_path / "report.html"),
        "terminal": result.stdout.str(),
    }
    # Clean up what an unsandboxed agent could leave.
    for pid in sleeps:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
    for leftover in found["tmp_writes"]:  # type: ignore[attr-defined]
        leftover.unlink()
    shutil.rmtree(sibling.parent, ignore_errors=True)
    return found


def _verdict(count: int, runs: int = 4) -> str:
    """``possible`` when every run managed it, ``stopped`` when none did."""
    assert count in (0, runs), f"{count} of {runs} runs"
    return "possible" if count else "stopped"


def _observed(found: dict[str, Any]) -> dict[str, str]:
    """What the session shows of each row of the threat table it observes."""
    outputs: str = found["outputs"]
    records: list[dict[str, Any]] = found["records"]
    secret_seen = [
        sink for sink in ("recording", "log", "html", "terminal") if found["linked"] in found[sink]
    ]
    return {
        "write into your real `$HOME`": _verdict(len(found["home_writes"])),
        "write into the repository checkout or anywhere else on the host": _verdict(
            len(found["repo_writes"])
        ),
        "write into the host's `/tmp`": _verdict(len(found["tmp_writes"])),
        "write into a sibling run's workspace": _verdict(len(found["sibling_writes"])),
        "read an environment variable you did not allow": _verdict(
            outputs.count(f"env: forbidden-{found['token']}")
        ),
        "leave a process running (`setsid nohup sleep …`)": _verdict(len(found["sleeps"])),
        # The file check asked whether PLAN.md holds the secret: read through the link,
        # it would have passed.
        "have `expect.files` read a host file through a symlink": _verdict(
            sum(LINK_PROBLEM not in record["problems"] for record in records)
        ),
        "get a secret recorded through a symlink or a hard link in the workspace": (
            "possible" if secret_seen else "stopped"
        ),
    }


def _assert_the_table(found: dict[str, Any], kind: str) -> None:
    table = {row: cells[kind] for row, cells in session_rows().items()}
    assert _observed(found) == table
    records = found["records"]
    assert len(records) == 4
    # Every run did its own work and failed only the file check of the link.
    found["result"].assert_outcomes(failed=4)
    for record in records:
        assert record["outcome"] == "failure"
        assert record["problems"] == [LINK_PROBLEM]
        [command] = record["commands"]
        assert command["passed"] is True
    recording = yaml.safe_load(found["recording"])
    [iteration] = recording["iterations"]
    # The links' content never: the symlink is left out, a hard link is a note.
    own = {name: text for name, text in iteration["files"].items() if "sibling-" not in name}
    assert own == {"result.txt": "work\n"}


def test_bwrap_contains_the_adversary(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    found = _session(project, tmp_path, monkeypatch, "{kind: bwrap, network: none}")
    _assert_the_table(found, "bwrap")
    outputs = found["outputs"]
    assert "ESCAPED" not in outputs
    assert outputs.count("home-read: none") == 4
    assert outputs.count("socket: refused") == 4
    assert found["connections"] == []
    for record in found["records"]:
        assert record["sandbox"]["kind"] == "bwrap"
        # Nothing but the run's own files changed in its workspace.
        assert set(record["files_changed"]) == {"result.txt", "PLAN.md"}


def test_docker_contains_the_adversary(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_docker()
    image = busybox_image()
    found = _session(
        project, tmp_path, monkeypatch, f"{{kind: docker, image: '{image}', network: none}}"
    )
    _assert_the_table(found, "docker")
    outputs = found["outputs"]
    assert "ESCAPED" not in outputs
    assert outputs.count("home-read: none") == 4
    assert outputs.count("socket: refused") == 4
    assert found["connections"] == []
    for record in found["records"]:
        assert record["sandbox"]["kind"] == "docker"
        assert record["sandbox"]["image"] == image
        assert record["sandbox"]["image_id"].startswith("sha256:")
        assert set(record["files_changed"]) == {"result.txt", "PLAN.md"}


def test_no_sandbox_allows_what_the_threat_table_says(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _session(project, tmp_path, monkeypatch, "none")
    _assert_the_table(found, "none")
    outputs = found["outputs"]
    # The agent reads whatever you can and reaches the network.
    assert outputs.count(f"home-read: {found['planted']}") == 4
    assert outputs.count("socket: CONNECTED") == 4
    for record in found["records"]:
        assert record["sandbox"] is None
        # The hard link was made (the file check and the recording still never read it).
        assert "hard.txt" in record["files_changed"]
