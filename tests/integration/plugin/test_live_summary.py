"""The session's table of live runs (``ooda live runs``): how the runs ended, as run
outcomes with why where the loop's status adds to them — in one process and under
pytest-xdist, where the controller prints the workers' runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ooda_project import Project

# One iteration a run: a greeting written, a greeting forgotten, no promise at all.
SCENARIO = """\
procedure: greet
max_iterations: 1
repeat: 3
expect:
  files: {GREETING.md: exists}
iterations: []
"""
PLAN = """[
  {"print": "<promise>SUCCESS</promise>", "files": {"GREETING.md": "hello"}},
  {"print": "<promise>SUCCESS</promise>"},
  {"print": "still thinking"}
]"""
HEADER = (
    "scenario  *runs  ok  errors  rate  95% CI  pass^3  pass@3  iterations mean/med/max"
    "  time/run  tokens/run  cost/run  outcomes"
)


# The fake agent takes its plan's steps in the order it is started: under xdist the
# three runs share a scope, so one worker makes them in order.
XDIST = ("-p", "xdist", "-n", "2", "--dist", "loadscope")


@pytest.mark.parametrize("xdist", [(), XDIST], ids=["one-process", "xdist"])
def test_the_table_says_how_runs_ended(project: Project, xdist: tuple[str, ...]) -> None:
    project.scenario("greets", SCENARIO)
    result = project.run("-m", "live", "--ooda-ai-cmd", project.fake_ai(PLAN), *xdist)
    result.assert_outcomes(passed=1, failed=2, **({} if xdist else {"deselected": 7}))
    result.stdout.fnmatch_lines(
        [
            "*- ooda live runs -*",
            HEADER,
            "greet/greets  *3   1       0   33%  6%–79%  *1.00/1/1  *"
            "  success 1, failure 2 (expectations 1, max-iters 1)",
        ]
    )
    # Each run's line leads with its outcome too, the loop's status after it.
    result.stdout.fnmatch_lines(["ooda: greet/greets ?/3: failure status=max-iters *"])
