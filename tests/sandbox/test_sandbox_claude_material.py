"""A plugin of our own (``tests/agents/greeter``) through a live run of the real Claude
Code (2.1.197, driven by the agent mock) inside bwrap: the plugin installed into the
run's workspace (never the user's home), the scenario's ``setup:`` run before the agent,
a slash command passed through as the prompt, what fired observed and asserted
(``expect.activation``, ``expect.trajectory``), the run recorded and replayed offline,
and an edited SKILL.md drifting the replay."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox_images import require_bwrap

from pytest_ooda.agents import MATERIAL_SECTIONS
from pytest_ooda.scenario import load_scenario
from tests.sandbox.test_sandbox_claude import CLAUDE, ENV

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest
    from agents.claude_mock import AgentMock
    from integration.ooda_project import Project

(SECTION,) = MATERIAL_SECTIONS
GREETER = Path(__file__).resolve().parents[1] / "agents" / "greeter"

SESSION = [
    {"text": "Using the greet skill.", "tool": "Skill", "input": {"skill": "greeter:greet"}},
    {"tool": "Write", "input": {"file_path": "GREETING.md", "content": "Hello, Alice!\n"}},
    {
        "tool": "Agent",
        "input": {
            "description": "Review the greeting",
            "prompt": "Review GREETING.md",
            "subagent_type": "greeter:reviewer",
        },
    },
    {"text": "Greeted Alice; the reviewer is happy."},
]

SCENARIO = """\
procedure: hello
setup:
  - printf 'Be brief.\\n' > NOTES.md
expect:
  files: {GREETING.md: {contains: Alice}}
  activation:
    command: hello
    skill: greet
    subagent: reviewer
    hook: PostToolUse
  trajectory:
    calls:
      - Skill: {skill: greet}
      - Write: {file_path: GREETING}
iterations: []
"""


def _project(project: Project) -> None:
    shutil.copytree(GREETER, project.path / "greeter")
    project.write(
        "ooda-config.yml",
        f"""\
        {SECTION}: [greeter]
        loop:
          iteration_timeout: 120
          sandbox: {{kind: bwrap, network: host, env: {ENV}}}
        procedures:
          hello:
            prompt_format: raw
            act:
              - content: /greeter:hello Alice cheerful
        """,
    )
    project.scenario("alice", SCENARIO, procedure="hello")


def test_a_plugin_command_runs_live_in_bwrap_and_replays(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_bwrap()
    _project(project)
    mock = claude_mock([SESSION])
    mock.use(monkeypatch)
    live = project.run(
        "-m", "live", "-k", "alice", "--ooda-ai-cmd", CLAUDE, "--ooda-record-mode=once", "-p",
        "no:syrupy",
    )  # fmt: skip
    live.assert_outcomes(passed=1, deselected=live.parseoutcomes().get("deselected", 0))
    assert len(mock.sessions()) == 1
    recorded = load_scenario(project.path / "scenarios" / "hello" / "alice.yml")
    (iteration,) = recorded.iterations
    assert iteration.prompt == "/greeter:hello Alice cheerful"
    labels = [activation.label for activation in iteration.activations]
    assert labels[0] == "command:greeter:hello"
    assert {"skill:greeter:greet", "subagent:greeter:reviewer", "hook:PostToolUse:Write"} <= set(
        labels
    )
    assert iteration.files["GREETING.md"] == "Hello, Alice!\n"
    # The setup's file and the plugin are the workspace's, not the agent's doing.
    assert "NOTES.md" not in iteration.files
    assert not any(path.startswith(".ooda/") for path in iteration.files)

    # The replay starts no agent: what fired comes from the recording.
    replay = project.run("-k", "scenario and alice", "-p", "no:syrupy")
    replay.assert_outcomes(passed=1)
    assert len(mock.sessions()) == 1

    # An edited skill is another prompt: the replay drifts, naming the change.
    skill = project.path / "greeter" / "skills" / "greet" / "SKILL.md"
    skill.write_text(skill.read_text().replace("one line", "two lines"))
    drifted = project.run("-k", "scenario and alice", "-p", "no:syrupy")
    drifted.assert_outcomes(failed=1)
    drifted.stdout.fnmatch_lines(
        [
            "*prompt of iteration 1 drifted from the recording*",
            "*the text sent is the same: the agent material the run installs*",
        ]
    )
