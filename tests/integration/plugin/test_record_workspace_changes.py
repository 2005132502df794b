"""A live recording keeps the agent's file changes, so its replay meets ``expect.files``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

SECRET = "s3cr3t-value-0123456789"
API_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"

# An agent that edits its working directory as the plan says, one step per invocation.
AGENT = """\
import json, os, sys
from pathlib import Path

sys.stdin.read()
here = Path(__file__).parent
plan = json.loads((here / "plan.json").read_text())
count_file = here / "plan.count"
index = int(count_file.read_text()) if count_file.exists() else 0
count_file.write_text(str(index + 1))
step = plan[min(index, len(plan) - 1)]
for name, text in step.get("write", {}).items():
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("$TOKEN", os.environ["OODA_TEST_API_TOKEN"]))
for name in step.get("binary", []):
    Path(name).write_bytes(bytes(range(256)))
for name in step.get("delete", []):
    Path(name).unlink()
print(step.get("print", "working"))
"""

PLAN = [
    {
        "write": {
            "GREETING.md": "Hello, Ann!\n",
            "src/app.py": "print('v2')\n",
            "settings.env": "API_TOKEN=$TOKEN\nANTHROPIC_KEY=" + API_KEY + "\n",
        },
        "binary": ["avatar.png"],
    },
    {"delete": ["old.txt"], "print": "Done.\n<promise>SUCCESS</promise>"},
]

SCENARIO = """\
procedure: greet
max_iterations: 3
workspace: repo
expect:
  status: success
  files: {GREETING.md: exists, old.txt: absent}
iterations: []
"""


def record(project: Project) -> None:
    project.write("fake-ai/agent.py", AGENT)
    project.write("fake-ai/plan.json", json.dumps(PLAN))
    project.write("scenarios/greet/repo/src/app.py", "print('v1')\n")
    project.write("scenarios/greet/repo/old.txt", "obsolete\n")
    project.scenario("hello", SCENARIO)
    cmd = f"{sys.executable} {project.path / 'fake-ai' / 'agent.py'}"
    result = project.run("-m", "live", "--ooda-ai-cmd", cmd, "--ooda-record-mode=once")
    result.assert_outcomes(passed=1, deselected=7)
    result.stdout.fnmatch_lines(
        ["*RecordingWarning: scenario greet/hello: iteration 1: avatar.png: binary file*"]
    )


def test_recording_replays_the_agents_file_changes(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OODA_TEST_API_TOKEN", SECRET)
    record(project)

    path = project.path / "scenarios/greet/hello.yml"
    text = path.read_text()
    assert SECRET not in text
    assert API_KEY not in text
    files = [it.get("files") for it in yaml.safe_load(text)["iterations"]]
    assert files[0]["GREETING.md"] == "Hello, Ann!\n"
    assert files[0]["src/app.py"] == "print('v2')\n"
    assert files[0]["settings.env"] == "API_TOKEN=<redacted>\nANTHROPIC_KEY=<redacted>\n"
    assert "binary file, 256 bytes" in files[0]["avatar.png"]
    assert files[1] == {"old.txt": None}
    # The scenario's workspace is copied for the run, never changed.
    assert (project.path / "scenarios/greet/repo/src/app.py").read_text() == "print('v1')\n"
    assert (project.path / "scenarios/greet/repo/old.txt").exists()

    # Plain pytest replays the recording: the files are back, expect.files holds.
    project.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)

    # And content checks hold too, against what the agent wrote (redacted). The
    # recording kept the user's flow-style expect block as written.
    path.write_text(
        text.replace(
            "files: {GREETING.md: exists, old.txt: absent}\n",
            "files: {GREETING.md: {contains: 'Hello, Ann!'}, src/app.py: {contains: v2},"
            " settings.env: {contains: 'API_TOKEN=<redacted>'}, avatar.png: exists}\n",
            1,
        )
    )
    assert "contains: v2" in path.read_text()
    project.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)

    # A content check the recording does not satisfy still fails.
    path.write_text(path.read_text().replace("contains: v2", "contains: v3", 1))
    failed = project.run("-k", "scenario")
    failed.assert_outcomes(failed=1, deselected=7)
    failed.stdout.fnmatch_lines(["*file src/app.py: expected to contain 'v3'*"])
