"""``--ooda-budget=USD`` / ``--ooda-budget-tokens=N`` (and their ini keys and
variables): one cap for a whole live session. No run starts once the next, at the mean
cost of those finished, would pass it; what it leaves unrun is skipped as ``not run:
budget spent``, and the gates and comparisons of its scenarios are *inconclusive:
budget spent*, never failed — with every run made kept in the results log. An agent
that prints Claude Code's stream-json, $0.10 and 1,000 tokens a run."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = """\
import json, sys
sys.stdin.read()
text = "done <promise>SUCCESS</promise>"
print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}))
print(json.dumps({"type": "result", "is_error": False, "result": text, "num_turns": 1,
                  "total_cost_usd": 0.10, "usage": {"input_tokens": 900, "output_tokens": 100}}))
"""

GATED = (
    "procedure: greet\nmax_iterations: 1\nrepeat: 10\n"
    "expect: {status: success, success_rate: {min: 0.9}}\niterations: []\n"
)


def _agent(project: Project) -> list[str]:
    script = project.write("agent/agent.py", AGENT)
    return [f"--ooda-ai-cmd={sys.executable} {script}", "--ooda-ai-output=claude-stream-json"]


def _records(project: Project) -> list[dict[str, object]]:
    return [
        json.loads(line)
        for path in (project.path / ".ooda/results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]


def test_a_spent_budget_leaves_runs_unrun_and_the_gate_inconclusive(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.scenario("s", GATED)
    result = project.run("-m", "live", *_agent(project), "--ooda-budget=0.35", "-rs")
    # $0.10 a run: after three, a fourth would pass $0.35.
    result.assert_outcomes(passed=3, skipped=7, deselected=7)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "gate inconclusive greet/s: inconclusive: budget spent: 3 of 10 run(s) made "
            "(budget spent: $0.3000 of $0.35 *)",
            "budget: $0.30*, 3,000 tokens over 3 run(s) of $0.35",
            "budget: 7 run(s) not run: budget spent (their scenarios' gates and comparisons "
            "are inconclusive, not failed)",
            "SKIPPED [[]1[]] *: not run: run 4/10 of greet/s: budget spent: $0.3000 of $0.35 "
            "after 3 run(s), and a run costs about $0.1000",
        ],
        consecutive=False,
    )
    assert "gate FAILED" not in result.stdout.str()
    records = _records(project)
    assert len(records) == 3
    assert all(record["budget"] == {"usd": 0.35, "tokens": None} for record in records)
    # The reports read the same from the log: inconclusive, and --check does not fail.
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project.path)
        assert ooda(["report", ".ooda/results", "--check"]) == 0
    assert "inconclusive greet/s: inconclusive: budget spent" in capsys.readouterr().out


def test_a_token_cap_from_the_ini_file_holds_under_xdist(project: Project) -> None:
    pytest.importorskip("xdist")
    project.scenario("s", GATED)
    project.write(
        "pytest.ini",
        """\
        [pytest]
        ooda_budget_tokens = 4500
        """,
    )
    result = project.run("-m", "live", *_agent(project), "-n", "2")
    made = result.parseoutcomes()["passed"]
    # Four runs fit; a run already under way on the other worker finishes and counts.
    assert 4 <= made <= 5, result.stdout.str()
    assert result.parseoutcomes()["skipped"] == 10 - made
    assert result.ret == pytest.ExitCode.OK
    assert len(_records(project)) == made
    result.stdout.fnmatch_lines(["*budget: *, * tokens over * run(s) of 4,500 tokens"])


def test_money_left_judges_the_gate_as_usual_and_a_wrong_value_is_a_usage_error(
    project: Project,
) -> None:
    project.scenario("s", GATED.replace("repeat: 10", "repeat: 2"))
    agent = _agent(project)
    result = project.run("-m", "live", *agent, "--ooda-budget=5")
    result.assert_outcomes(passed=2, deselected=7)
    result.stdout.fnmatch_lines(["gate passed greet/s: *", "budget: $0.20*, * of $5.00"])
    wrong = project.run("-m", "live", *agent, "--ooda-budget=lots")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    wrong.stderr.fnmatch_lines(["*--ooda-budget: expected an amount in US dollars > 0, got 'lots'"])
