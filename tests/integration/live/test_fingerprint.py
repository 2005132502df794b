"""Every live run's record carries its agent's fingerprint: an agent named ``claude`` (a
small script standing in for the CLI) is asked its version once per process, what it
loads is read from the workspace (its ``CLAUDE.md``, a skill the scenario's ``.claude/``
holds) and from the session's ``HOME``; a plain command is never asked its version.
``ooda report`` shows each fingerprint with its scenarios. The real Claude Code is
tests/agents/test_claude_fingerprint.py."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ooda_project import greet_project

from pytest_ooda.cli import main

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from ooda_project import Project

#: Answers --version (and counts how often it was asked), else promises success.
AGENT = """\
#!/bin/sh
if [ "$1" = "--version" ]; then
  echo asked >> "$(dirname "$0")/versions.log"
  echo "9.9.${FAKE_MINOR:-1} (Fake Code)"
  exit 0
fi
cat > /dev/null
echo "hello <promise>SUCCESS</promise>"
"""


def fake_claude(project: Project) -> Path:
    """The stand-in program, named as the agent it claims to be."""
    program = project.write("bin/claude", AGENT)
    program.chmod(0o755)
    return program


def records(project: Project) -> list[dict[str, object]]:
    [log] = (project.path / ".ooda/results").glob("*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_every_record_carries_its_agents_fingerprint(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = greet_project(pytester, monkeypatch)
    program = fake_claude(project)
    home = project.path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    project.write("home/.claude/commands/mine.md", "A command of the user's own.\n")
    project.write("ws/CLAUDE.md", "Be brief.\n")
    project.write("ws/.claude/skills/greet/SKILL.md", "---\ndescription: Greets.\n---\nHi.\n")
    project.scenario("plain", "procedure: greet\nrepeat: 2\nexpect: {status: success}\n")
    project.scenario("rules", "procedure: greet\nworkspace: ../../ws\nexpect: {status: success}\n")
    # Deselected: the procedure's items, and those of the workspace's own .claude/.
    project.run("-m", "live", f"--ooda-ai-cmd={program} -p").assert_outcomes(
        passed=3, deselected=11
    )
    found = {(record["scenario"], record["run"]): record for record in records(project)}
    plain, rules = found[("plain", 1)]["fingerprint"], found[("rules", 1)]["fingerprint"]
    assert plain == found[("plain", 2)]["fingerprint"]
    assert plain["agent"] == rules["agent"] == "claude"
    assert plain["version"] == "9.9.1 (Fake Code)"
    # Asked once in the session's process, not once per run.
    assert (project.path / "bin/versions.log").read_text() == "asked\n"
    assert plain["env"] == ["*"]
    assert len(plain["settings"]) == 64
    assert plain["settings"] == rules["settings"]
    mine = {"commands": [{"name": "mine", "scope": "user",
                          "sha256": plain["loaded"]["commands"][0]["sha256"]}]}  # fmt: skip
    assert plain["loaded"] == mine
    assert [(i["name"], i["scope"]) for i in rules["loaded"]["instructions"]] == [
        ("CLAUDE.md", "project")
    ]
    assert [(i["name"], i["scope"]) for i in rules["loaded"]["skills"]] == [("greet", "project")]
    capsys.readouterr()
    assert main(["report", str(project.path / ".ooda/results")]) == 0
    out = capsys.readouterr().out
    assert "agent of greet/plain: claude 9.9.1 (Fake Code) · settings " in out
    assert "loaded: commands mine (user)" in out
    assert "agent of greet/rules: claude 9.9.1 (Fake Code)" in out
    assert "skills greet (project)" in out


def test_a_plain_command_is_never_asked_its_version(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = greet_project(pytester, monkeypatch)
    program = project.write("bin/my-agent", AGENT)
    program.chmod(0o755)
    project.scenario("plain", "procedure: greet\nexpect: {status: success}\n")
    project.run("-m", "live", f"--ooda-ai-cmd={program}").assert_outcomes(passed=1, deselected=7)
    [record] = records(project)
    fingerprint = record["fingerprint"]
    assert fingerprint["agent"] == "command"
    assert fingerprint["version"] is None
    assert fingerprint["loaded"] == {}
    assert not (project.path / "bin/versions.log").exists()
