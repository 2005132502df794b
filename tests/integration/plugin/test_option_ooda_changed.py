"""``pytest -m live --ooda-changed=REF``: on the git fixture's three scenarios over
shared and private fragments, exactly the scenarios whose prompts a change touched run
live; the others replay their recordings (no agent started); a template branch no
scenario takes touches none; the selection is in the header and each live run's record
says why it ran. Under xdist the workers get the controller's selection."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest
from git_project import git, make_project, write

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = """\
import sys
from pathlib import Path
sys.stdin.read()
with open(Path(__file__).with_name("starts.txt"), "a") as starts:
    starts.write("started\\n")
print("done <promise>SUCCESS</promise>")
"""


@pytest.fixture
def recorded(project: Project) -> str:
    """The fixture's project with every scenario recorded and committed on main; the
    ``--ooda-ai-cmd`` option of its agent."""
    make_project(project.path)
    agent = project.write("agent/agent.py", AGENT)
    write(project.path, ".gitignore", ".ooda/\nagent/starts.txt\n")
    option = f"--ooda-ai-cmd={sys.executable} {agent}"
    project.run("-m", "live", option, "--ooda-record-mode=all").assert_outcomes(passed=3)
    git(project.path, "add", "-A")
    git(project.path, "commit", "-q", "-m", "recorded")
    (project.path / "agent/starts.txt").unlink()
    return option


def _records(project: Project) -> list[dict[str, object]]:
    return [
        json.loads(line)
        for path in (project.path / ".ooda/results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]


def _starts(project: Project) -> int:
    path = project.path / "agent/starts.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_private_fragment_runs_its_scenario_live_and_the_others_replay(
    project: Project, recorded: str
) -> None:
    for log in (project.path / ".ooda/results").glob("*.jsonl"):
        log.unlink()
    write(project.path, "prompts/count.md", "Find the odd numbers.\n")
    result = project.run("-m", "live", recorded, "--ooda-changed=main", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "ooda: changed since main (*): 1 of 3 scenario(s) touched",
            "  touched   count/numbers  observe[0] prompts/count.md",
        ],
        consecutive=False,
    )
    for line in (
        "*count::live[[]numbers[]] PASSED*",
        "*farewell::scenario[[]bye[]] PASSED*",
        "*greet::scenario[[]hello[]] PASSED*",
    ):
        result.stdout.fnmatch_lines([line])
    assert "greet::live" not in result.stdout.str()
    assert _starts(project) == 1
    [record] = _records(project)
    assert record["scenario"] == "numbers"
    assert record["changed"] == {
        "ref": "main",
        "commit": git(project.path, "rev-parse", "main"),
        "reasons": ["observe[0] prompts/count.md"],
        "untouched": 2,
    }


def test_a_template_branch_no_scenario_takes_runs_nothing_live_under_xdist(
    project: Project, recorded: str
) -> None:
    pytest.importorskip("xdist")
    tone = (project.path / "prompts/tone.md").read_text()
    write(project.path, "prompts/tone.md", tone.replace("Say nothing.", "Say nothing at all."))
    result = project.run("-m", "live", recorded, "--ooda-changed=main", "-n", "2")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["ooda: changed since main (*): 0 of 3 scenario(s) touched"])
    assert _starts(project) == 0
    # A shared fragment: the two scenarios that read it run live, on the workers.
    write(project.path, "prompts/shared.md", "Read the whole room first.\n")
    for log in (project.path / ".ooda/results").glob("*.jsonl"):
        log.unlink()
    again = project.run("-m", "live", recorded, "--ooda-changed=main", "-n", "2")
    again.assert_outcomes(passed=3)
    assert _starts(project) == 2
    assert sorted(str(record["scenario"]) for record in _records(project)) == ["bye", "hello"]


def test_a_revision_that_names_no_commit_is_a_usage_error(project: Project) -> None:
    make_project(project.path)
    result = project.run("-m", "live", "--ooda-changed=no-such-branch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ooda-changed: *no-such-branch*"])
