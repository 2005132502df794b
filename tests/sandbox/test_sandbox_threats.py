"""The threat table, row by row. A probe agent — a shell script and a static C helper
(probe.c), both in the run's workspace — tries every escape issue 28 found: reading a
hidden home, unmounting what hides it, remounting ``/`` writable, a device node, a
set-user-ID file, ``chown`` to another user, ``ptrace`` of a host process, a TCP port
and a Unix socket of the host under ``network: none``, a fork bomb, a hard link to a
host secret. It runs with no sandbox, in ``bwrap`` and in ``docker``, as root (as CI
containers run), and in ``bwrap`` as an ordinary user (``setpriv`` to ``nobody``).
What it achieves is what docs/sandbox.md and docs/security.md state, cell by cell
(tests/sandbox/helpers.py holds the table; the rows a whole pytest session observes are
test_sandbox_adversarial.py's)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from external_tools import require
from sandbox_images import (
    ProbeTargets,
    attempts,
    busybox_image,
    leftovers,
    probe_binary,
    probe_targets,
    require_bwrap,
    require_docker,
)

from pytest_ooda.backends import CommandBackend
from pytest_ooda.sandbox import load_kind, parse_spec

from .helpers import KINDS, NA, PROBE, THREATS, docs_table, expected

if TYPE_CHECKING:
    from collections.abc import Mapping

ROOT = Path(__file__).resolve().parents[2]
NOBODY = (65534, 65534)


def _workspace(parent: Path) -> Path:
    workspace = parent / "workspace"
    workspace.mkdir(parents=True)
    shutil.copy2(probe_binary(), workspace / "probe")
    (workspace / "result.txt").write_text("work\n")
    return workspace


def _in_sandbox(kind: str, network: str, script: str, parent: Path) -> tuple[str, Path]:
    workspace = _workspace(parent)
    if kind == "none":
        done = subprocess.run(
            ["/bin/sh", "-c", script], cwd=workspace, capture_output=True, text=True, timeout=300
        )
        return done.stdout + done.stderr, workspace
    options: dict[str, object] = {"kind": kind, "network": network}
    if kind == "docker":
        options["image"] = busybox_image()
    sandbox = load_kind(kind)(parse_spec(options))
    sandbox.prepare()
    scratch = parent / "scratch"
    scratch.mkdir()
    with sandbox.start(workspace, scratch) as run:
        result = CommandBackend(["/bin/sh", "-c", script], sandbox=run).run(
            "", iteration=1, workdir=workspace, timeout=300, max_output=1 << 20, stream=None
        )
    return result.output, workspace


def _observed(output: str, workspace: Path) -> dict[str, str]:
    """The probe's attempts as the table words them: ``possible`` when the kernel let
    it through; a set-user-ID file counts when it is still in the host's workspace."""
    found = {
        what: "possible" if how == "ESCAPED" else "stopped"
        for what, how in attempts(output).items()
    }
    left = leftovers(workspace)
    setuid = [name for name in left if name.startswith("su")]
    found["setuid"] = "possible" if setuid else "stopped"
    found.pop("setuid chmod", None)
    found.pop("setuid create", None)
    assert [name for name in left if not name.startswith("su")] in ([], ["dev0"])
    return found


def _probe(kind: str, targets: ProbeTargets, tmp_path: Path) -> dict[str, str]:
    output, workspace = _in_sandbox(kind, "none", targets.script(), tmp_path / kind)
    observed = _observed(output, workspace)
    assert targets.planted not in output or observed["home-read"] == "possible"
    if kind == "none":
        # No sandbox, no network option: what it reached is what network: host reaches.
        observed["tcp socket, network host"] = observed.pop("tcp socket")
    else:
        host, _ = _in_sandbox(
            kind, "host", f"./probe tcp {targets.port}", tmp_path / f"{kind}-host"
        )
        observed["tcp socket, network host"] = _observed(host, tmp_path)["tcp socket"]
    return observed


def _compare(kind: str, observed: Mapping[str, str]) -> list[str]:
    """The rows where the probe did otherwise than the table says."""
    wrong = []
    for row, cells, test, key in THREATS:
        if test != PROBE or key is None:
            continue
        if cells[kind] == NA:
            if kind == "none" and key in observed and key in ("umount", "remount rw"):
                wrong.append(f"{row}: attempted on the host")
            continue
        if observed.get(key) != expected(key, kind):
            wrong.append(f"{row}: {observed.get(key)}, the table says {cells[kind]}")
    return wrong


def test_the_docs_state_the_table_the_tests_check() -> None:
    rows = [(row, cells) for row, cells, _, _ in THREATS]
    assert docs_table("sandbox.md") == rows
    assert docs_table("security.md") == rows


@pytest.mark.parametrize("kind", KINDS)
def test_the_probe_does_what_the_table_says(kind: str, tmp_path: Path) -> None:
    if kind == "bwrap":
        require_bwrap()
    if kind == "docker":
        require_docker()
    with probe_targets() as targets:
        observed = _probe(kind, targets, tmp_path)
    assert _compare(kind, observed) == [], observed
    if kind != "none":
        # Nothing reached the host's listeners but the network: host probe.
        assert targets.connections == ["tcp"]


DRIVER = """\
import sys
from pathlib import Path
from pytest_ooda.backends import CommandBackend
from pytest_ooda.sandbox import open_sandbox, parse_spec

workspace, scratch, script, network = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
sandbox = open_sandbox(parse_spec({"kind": "bwrap", "network": network}))
with sandbox.start(workspace, scratch) as run:
    done = CommandBackend(["/bin/sh", "-c", script], sandbox=run).run(
        "", iteration=1, workdir=workspace, timeout=300, max_output=1 << 20, stream=None
    )
print(done.output)
"""


def _as_nobody(script: str, network: str, home: Path, parent: Path) -> tuple[str, Path]:
    """The probe in bwrap started by ``nobody`` (the library, as a user's session
    would call it), in a workspace of its own under ``parent``."""
    parent.mkdir()
    workspace = _workspace(parent)
    scratch = parent / "scratch"
    scratch.mkdir()
    for path in (parent, *parent.rglob("*")):
        os.lchown(path, *NOBODY)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY[0]}", f"--regid={NOBODY[1]}", "--clear-groups",
         sys.executable, "-c", DRIVER, str(workspace), str(scratch), script, network],
        capture_output=True, text=True, timeout=600, env=env, cwd=parent, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, workspace


def test_the_probe_does_what_the_table_says_in_bwrap_as_a_user() -> None:
    require(os.geteuid() == 0, "root (to start the session as another user)", "run as root")
    require(shutil.which("setpriv") is not None, "setpriv", "apt-get install -y util-linux")
    require_bwrap()
    home = Path(tempfile.mkdtemp(prefix="ooda-probe-", dir="/home"))
    runs = Path(tempfile.mkdtemp(prefix="ooda-nobody-", dir="/var/tmp"))
    runs.chmod(0o755)
    try:
        with probe_targets(home=home, owner=NOBODY) as targets:
            output, workspace = _as_nobody(targets.script(), "none", home, runs / "none")
            host, _ = _as_nobody(f"./probe tcp {targets.port}", "host", home, runs / "host")
        observed = _observed(output, workspace)
        observed["tcp socket, network host"] = _observed(host, workspace)["tcp socket"]
        # The user's own secret, readable by it outside: hidden inside.
        assert targets.planted not in output
        assert _compare("bwrap", observed) == [], output
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(runs, ignore_errors=True)
