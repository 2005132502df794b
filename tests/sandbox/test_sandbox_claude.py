"""The real Claude Code CLI (2.1.197, driven offline by the shared agent mock) as a live
run's agent inside ``bwrap`` and inside Docker: it writes a script and runs it in the
workspace, and its attempt to write outside the workspace fails. The Docker image is
built offline: busybox, the host's C library and Claude Code's native binary."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox_images import claude_image, require_bwrap, require_docker

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest
    from agents.claude_mock import AgentMock
    from integration.ooda_project import Project

ROOT = Path(__file__).resolve().parents[2]


def claude_binary() -> Path:
    """Claude Code's native executable (what ``claude`` on PATH links to)."""
    found = shutil.which("claude")
    assert found is not None
    return Path(found).resolve()


CLAUDE = (
    "claude -p --no-session-persistence --permission-mode bypassPermissions "
    "--output-format stream-json --verbose"
)
#: What Claude Code needs inside the sandbox: the mock's address and its own settings;
#: as root, bypassPermissions runs only with IS_SANDBOX=1 (docs/sandbox.md).
ENV = (
    "[ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "
    "DISABLE_AUTOUPDATER, DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, "
    "CLAUDE_CODE_MAX_RETRIES, IS_SANDBOX=1, SHELL=/usr/bin/bash]"
)


def _script(outside: Path) -> list[object]:
    return [
        [
            {
                "text": "Writing the script.",
                "tool": "Write",
                "input": {"file_path": "hello.sh", "content": "echo hello from the sandbox\n"},
            },
            {"tool": "Bash", "input": {"command": "sh hello.sh > ran.txt", "description": "run"}},
            {
                "tool": "Bash",
                "input": {"command": f"echo escaped > {outside}/escape.txt", "description": "out"},
            },
            {"text": "Done.\n<promise>SUCCESS</promise>"},
        ]
    ]


def _live(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    sandbox: str,
) -> tuple[dict[str, object], Path]:
    outside = tmp_path / f"outside-{secrets.token_hex(3)}"
    outside.mkdir()
    mock = claude_mock(_script(outside))
    mock.use(monkeypatch)
    config = project.path / "ooda-config.yml"
    config.write_text(f"loop:\n  sandbox: {sandbox}\n" + config.read_text())
    project.scenario(
        "claude",
        "procedure: greet\nexpect:\n  status: success\n"
        "  files: {ran.txt: {contains: hello from the sandbox}}\n"
        "  tools: {called: [Write, Bash]}\n"
        "  commands:\n    - run: sh hello.sh\n      output_contains: hello from the sandbox\n"
        "iterations: []\n",
    )
    result = project.run("-m", "live", "--ooda-ai-cmd", CLAUDE)
    result.assert_outcomes(passed=1, deselected=7)
    [log] = (project.path / ".ooda/results").glob("*.jsonl")
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(mock.sessions()) == 1
    return record, outside


def _assert_blocked_outside(record: dict[str, object], outside: Path) -> None:
    assert not (outside / "escape.txt").exists()
    [iteration] = record["iterations"]  # type: ignore[misc]
    calls = iteration["tool_calls"]
    assert [call["name"] for call in calls] == ["Write", "Bash", "Bash"]
    # The escape ran and failed; the script's own run succeeded.
    assert calls[1]["ok"] is True
    assert calls[2]["ok"] is False
    assert record["files_changed"] == {"hello.sh": "created", "ran.txt": "created"}


def test_claude_code_inside_bwrap(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    require_bwrap()
    record, outside = _live(
        project, claude_mock, monkeypatch, tmp_path, f"{{kind: bwrap, network: host, env: {ENV}}}"
    )
    assert record["sandbox"] == {"kind": "bwrap", "image": None, "image_id": None}
    _assert_blocked_outside(record, outside)


def test_claude_code_inside_docker(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    require_docker()
    image = claude_image()
    record, outside = _live(
        project,
        claude_mock,
        monkeypatch,
        tmp_path,
        f"{{kind: docker, image: '{image}', network: host, env: {ENV}}}",
    )
    assert record["sandbox"]["image"] == image  # type: ignore[index]
    _assert_blocked_outside(record, outside)


def test_claude_from_a_native_install_in_the_home_inside_bwrap(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # As Claude Code's native installer lays it out: ~/.local/bin/claude, a link into
    # ~/.local/share/claude/versions/. The sandbox hides the home (and /tmp, where this
    # one is): it shows the link, the version it points at, and nothing else.
    require_bwrap()
    binary = claude_binary()
    home = tmp_path / "home"
    versions = home / ".local" / "share" / "claude" / "versions"
    versions.mkdir(parents=True)
    try:
        os.link(binary, versions / "2.1.197")
    except OSError:
        shutil.copy2(binary, versions / "2.1.197")
    (home / ".local" / "bin").mkdir()
    (home / ".local" / "bin" / "claude").symlink_to(versions / "2.1.197")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_planted").write_text("HOME-SECRET\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home}/.local/bin{os.pathsep}{os.environ['PATH']}")
    # No IS_SANDBOX: inside, the agent is an ordinary uid, even when root runs this.
    monkeypatch.delenv("IS_SANDBOX", raising=False)
    env = ENV.replace("IS_SANDBOX=1, ", "")
    record, outside = _live(
        project, claude_mock, monkeypatch, tmp_path, f"{{kind: bwrap, network: host, env: {env}}}"
    )
    assert record["sandbox"]["kind"] == "bwrap"  # type: ignore[index]
    _assert_blocked_outside(record, outside)
    assert "HOME-SECRET" not in json.dumps(record)


def test_an_agent_the_sandbox_cannot_show_is_refused_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    project = tmp_path / "project"
    project.mkdir()
    (project / "ooda-config.yml").write_text(
        "loop:\n  sandbox: bwrap\n"
        "procedures:\n  p:\n    act: [{content: 'go <promise>SUCCESS</promise>'}]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OODA_", "ROODA_"))}
    env.update(OODA_CONFIG_HOME=str(tmp_path / "none"), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "run", "p", "--dry-run",
         "--ai-cmd", "no-such-agent-anywhere -p"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "the agent no-such-agent-anywhere cannot start inside the bwrap sandbox" in done.stderr
    assert "is not on PATH" in done.stderr
