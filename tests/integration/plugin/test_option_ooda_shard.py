"""``--ooda-shard K/N``: a stable, balanced split of the live items by id; shards'
results merge in ``ooda report``."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from ooda_project import Project

PASSING = "procedure: greet\nrepeat: 5\niterations:\n  - output: <promise>SUCCESS</promise>\n"
LIVE_ID = re.compile(r"::live\[[^\]]+\]")


def selected(project: Project, *args: str) -> list[str]:
    result = project.run("-m", "live", "--collect-only", "-q", *args)
    return [line for line in result.stdout.lines if LIVE_ID.search(line)]


def test_shards_split_the_live_items_without_overlap_or_loss(project: Project) -> None:
    for name in ("a", "b", "c"):
        project.scenario(name, PASSING)
    everything = selected(project)
    assert len(everything) == 15
    shares = [selected(project, "--ooda-shard", f"{k}/4") for k in range(1, 5)]
    assert sorted(item for share in shares for item in share) == sorted(everything)
    assert sum(len(share) for share in shares) == 15
    assert max(map(len, shares)) - min(map(len, shares)) <= 1
    # Runs of one scenario are spread over the shards.
    assert all(any("live[a#" in item for item in share) for share in shares[:3])
    # The same options give the same share on every machine.
    assert selected(project, "--ooda-shard", "2/4") == shares[1]


def test_other_items_are_not_split(project: Project) -> None:
    project.scenario("a", PASSING)
    whole = project.run("--collect-only", "-q", "-m", "not live")
    share = project.run("--collect-only", "-q", "-m", "not live", "--ooda-shard", "2/3")
    assert whole.stdout.lines[:7] == share.stdout.lines[:7]
    share.stdout.fnmatch_lines(["*7/12 tests collected (5 deselected)*"])


@pytest.mark.parametrize("value", ["3", "0/2", "3/2", "a/b", "1/0"])
def test_bad_shard_is_a_usage_error(project: Project, value: str) -> None:
    result = project.run(f"--ooda-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--ooda-shard: *{value}*"])


def test_gates_are_judged_over_the_merged_shards(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = project.write(
        "fail-ai/agent.py", "import sys\nsys.stdin.read()\nprint('cannot do it')\n"
    )
    project.scenario(
        "a",
        "procedure: greet\nmax_iterations: 1\nrepeat: 4\n"
        "expect: {success_rate: {min: 0.5}}\niterations: []\n",
    )
    command = f"{sys.executable} {agent}"
    for k in (1, 2):
        result = project.run(
            "-m",
            "live",
            "--ooda-ai-cmd",
            command,
            "--ooda-shard",
            f"{k}/2",
            "--ooda-results",
            f"results/shard-{k}",
        )
        # Each shard holds half the runs: no verdict on the scenario there.
        result.assert_outcomes(passed=2, deselected=9)
        assert result.ret == pytest.ExitCode.OK
        result.stdout.fnmatch_lines(
            [f"note: aggregate expectations are not judged on shard {k}/2, *ooda report --check*"]
        )
    capsys.readouterr()
    assert ooda(["report", "--check", str(project.path / "results")]) == 1
    out = capsys.readouterr().out
    assert "greet/a      4   0       0    0%" in out
    assert "FAILED greet/a: success rate 0% (0/4, 95% CI 0%–49%)" in out
