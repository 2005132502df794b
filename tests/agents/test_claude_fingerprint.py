"""Every live run's record carries its agent's fingerprint, taken where the agent runs:
with the real Claude Code (2.1.197, driven by the offline agent mock) and a skill and a
hook planted in the home of the session (a temporary one), a run with no sandbox loads
both — the model is shown the skill, the hook's output reaches it — and its fingerprint
names them; the same run in ``bwrap`` starts Claude Code with a fresh ``HOME``, loads
neither, and its fingerprint has neither."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from claude_mock import CLAUDE, require_claude
from ooda_project import greet_project
from sandbox_images import require_bwrap

if TYPE_CHECKING:
    from collections.abc import Callable

    from claude_mock import AgentMock

SKILL = """\
---
name: planted
description: A skill planted in the user's home that no sandboxed run may load.
---
Say PLANTED-SKILL-BODY.
"""
#: A hook whose output Claude Code hands the model when a session starts.
HOOK = {"hooks": {"SessionStart": [{"hooks": [{"type": "command",
                                               "command": "echo PLANTED-HOOK-RAN"}]}]}}  # fmt: skip
#: What Claude Code needs inside bwrap: the mock's address and its own settings.
ENV = (
    "[ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "
    "DISABLE_AUTOUPDATER, DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, "
    "CLAUDE_CODE_MAX_RETRIES, IS_SANDBOX=1, SHELL=/usr/bin/bash]"
)


def _version() -> str:
    done = subprocess.run(
        [require_claude(), "--version"], capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()[0].strip()


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_the_users_own_claude_configuration_is_loaded_and_fingerprinted_only_without_a_sandbox(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    agent_mock: Callable[..., AgentMock],
    sandbox: str,
) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    project = greet_project(pytester, monkeypatch)
    mock = agent_mock([[{"text": "Done.\n<promise>SUCCESS</promise>"}]], dump=True)
    # The session's HOME (and CLAUDE_CONFIG_DIR) are the mock's temporary ones.
    mock.use(monkeypatch)
    user = Path(os.environ["CLAUDE_CONFIG_DIR"])
    (user / "skills" / "planted").mkdir(parents=True)
    (user / "skills" / "planted" / "SKILL.md").write_text(SKILL)
    (user / "settings.json").write_text(json.dumps(HOOK))
    if sandbox == "bwrap":
        config = project.path / "ooda-config.yml"
        spec = f"{{kind: bwrap, network: host, env: {ENV}}}"
        config.write_text(f"loop:\n  sandbox: {spec}\n" + config.read_text())
    project.scenario("home", "procedure: greet\nexpect: {status: success}\niterations: []\n")
    result = project.run("-m", "live", "-k", "home", f"--ooda-ai-cmd={CLAUDE}")
    result.assert_outcomes(passed=1, deselected=7)
    [log] = (project.path / ".ooda/results").glob("*.jsonl")
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    sent = json.dumps(mock.bodies())
    fingerprint = record["fingerprint"]
    assert fingerprint["agent"] == "claude"
    assert fingerprint["version"] == _version()
    # As Claude Code reports it (its 1M-context variant of the model the mock answered).
    assert fingerprint["model"] == record["model"] == "claude-opus-4-8[1m]"
    assert len(fingerprint["settings"]) == 64
    loaded = fingerprint["loaded"]
    if sandbox == "none":
        # Loaded: the model is shown the skill, and the hook's output reaches it.
        assert "planted: A skill planted in the user's home" in sent
        assert "PLANTED-HOOK-RAN" in sent
        assert [(i["name"], i["scope"]) for i in loaded["skills"]] == [("planted", "user")]
        assert [(i["name"], i["scope"]) for i in loaded["hooks"]] == [("SessionStart", "user")]
        assert fingerprint["env"] == ["*"]
    else:
        assert "planted" not in sent
        assert "PLANTED-HOOK-RAN" not in sent
        assert loaded == {}
        assert "ANTHROPIC_BASE_URL" in fingerprint["env"]
        assert "HOME" not in fingerprint["env"]
        assert "CLAUDE_CONFIG_DIR" not in fingerprint["env"]
