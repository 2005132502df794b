"""pytest-xdist: ``-n 2`` gives the same outcomes as a single process."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

PASSING = """\
procedure: greet
expect: {status: success, iterations: 1}
iterations:
  - output: "<promise>SUCCESS</promise>"
"""
FAILING = PASSING.replace("iterations: 1}", "iterations: 2}")
WAVE = """\
procedures:
  wave:
    act:
      - content: "Wave. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"
"""


def outcome_lines(result: pytest.RunResult) -> list[str]:
    pattern = re.compile(r"^(PASSED|FAILED|SKIPPED|ERROR) (\S+)")
    found = []
    for line in result.stdout.lines:
        match = pattern.match(line)
        if match:
            found.append(f"{match.group(1)} {match.group(2)}")
    return sorted(found)


def test_same_outcomes_with_two_workers(project: Project) -> None:
    project.write("procedures/more.yml", WAVE)
    project.scenario("ok", PASSING)
    project.scenario("bad", FAILING)
    project.run("--snapshot-update", "-k", "prompt")
    project.write("prompts/observe.md", "Changed.\n")

    single = project.run("-rA", "-p", "no:randomly")
    double = project.run("-rA", "-n", "2")
    # xdist workers deselect the live items themselves; the controller never counts them.
    single_counts = {k: v for k, v in single.parseoutcomes().items() if k != "deselected"}
    assert single_counts == double.parseoutcomes()
    assert outcome_lines(single) == outcome_lines(double)
    assert "FAILED ooda-config.yml::greet::scenario[bad]" in outcome_lines(double)
    assert "FAILED ooda-config.yml::greet::prompt[observe]" in outcome_lines(double)
    double.stdout.fnmatch_lines(["*2 snapshots failed. 8 snapshots passed.*"])


def test_unused_snapshots_are_reported_and_removed_with_two_workers(project: Project) -> None:
    project.write("procedures/more.yml", WAVE)
    project.run("--snapshot-update", "-n", "2")
    assert (project.path / "procedures/__snapshots__/more/wave/act.md").is_file()
    (project.path / "procedures/more.yml").unlink()
    project.write("procedures/other.yml", WAVE.replace("wave", "nod"))
    project.run("--snapshot-update", "-k", "nod")  # nod's snapshots exist; wave's do not run

    result = project.run("-n", "2")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*snapshots unused.*"])
    updated = project.run("-n", "2", "--snapshot-update")
    updated.stdout.fnmatch_lines(["*5 unused snapshots deleted.*"])
    assert not (project.path / "procedures/__snapshots__/more/wave").exists()
    assert project.run("-n", "2").ret == 0
