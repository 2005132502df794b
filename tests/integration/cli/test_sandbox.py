"""``ooda sandbox image``: an offline image of the agent installed here, for the docker
sandbox — built once by content, holding what the agent and the sandbox need, and a
clear refusal for what cannot be imaged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sandbox_images import require_docker

ROOT = Path(__file__).resolve().parents[3]


def _ooda(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "sandbox", "image", *args],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        check=False,
    )


def test_an_image_of_busybox_holds_a_shell_and_is_built_once(tmp_path: Path) -> None:
    require_docker()
    first = _ooda("--agent", "busybox")
    assert first.returncode == 0, first.stderr
    tag = first.stdout.split(": ", 1)[1].split(" ", 1)[0]
    assert tag.startswith("pytest-ooda-agent-busybox:")
    assert f"sandbox: {{kind: docker, image: '{tag}'}}" in first.stdout
    again = _ooda("--agent", "busybox")
    assert again.stdout.startswith(f"already present: {tag} ")
    # What a run needs: /bin/sh, the agent on PATH, bash, and the stand-in user's name.
    done = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--user", "1000:1000", tag,
         "/bin/sh", "-c", "test -x /usr/bin/busybox && echo agent; command -v bash; id -un; "
         "echo $SHELL"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.stdout.split() == ["agent", "/usr/bin/bash", "agent", "/usr/bin/bash"]


def test_a_script_or_a_missing_agent_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    done = _ooda("--agent", str(script))
    assert done.returncode == 2
    assert "is a script for sh, not a native executable or a Node script" in done.stderr
    assert "build: path/to/Dockerfile" in done.stderr
    missing = _ooda("--agent", "no-such-agent-here")
    assert missing.returncode == 2
    assert "no agent 'no-such-agent-here' here" in missing.stderr


def test_a_node_script_outside_any_package_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "agent.js"
    script.write_text("#!/usr/bin/env node\nconsole.log('hi')\n")
    script.chmod(0o755)
    done = _ooda("--agent", str(script))
    assert done.returncode == 2
    assert "is a Node script outside any package" in done.stderr
