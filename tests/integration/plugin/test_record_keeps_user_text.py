"""Recording writes back only what it recorded: the user's comments, flow style and key
order in the rest of the scenario file survive, and re-recording replaces the recorded
part again without touching the rest."""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

from pytest_ooda.scenario.store import splice_scenario_text

if TYPE_CHECKING:
    from ooda_project import Project

PLAN = '[{"print": "All greeted.\\n<promise>SUCCESS</promise>", "files": {"DONE.md": "done"}}]'
HEAD = """\
# Greets everyone; recorded with the fake agent.
procedure: greet          # the procedure under test
max_iterations: 3
expect: {status: success, files: {DONE.md: exists}}   # flow style, kept

# The transcript goes below.
"""
SCENARIO = HEAD + "iterations: []   # filled in by recording\n"


def test_recording_keeps_comments_and_flow_style(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    path = project.scenario("kept", SCENARIO)
    result = project.run("-m", "live", f"--ooda-ai-cmd={ai_cmd}", "--ooda-record-mode=once")
    result.assert_outcomes(passed=1, deselected=7)
    text = path.read_text()
    assert text.startswith(HEAD + "iterations:\n- output: ")
    data = yaml.safe_load(text)
    assert "<promise>SUCCESS</promise>" in data["iterations"][0]["output"]
    assert data["recorded"]["status"] == "success"
    # Re-recording (mode all) replaces the recorded keys and keeps the head again.
    (project.path / "fake-ai/plan.count").unlink()
    project.run("-m", "live", f"--ooda-ai-cmd={ai_cmd}", "--ooda-record-mode=all")
    again = path.read_text()
    assert again.startswith(HEAD + "iterations:\n")
    assert again.count("\niterations:") == 1
    project.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)


def test_a_comment_after_the_recorded_key_stays_with_the_next_one() -> None:
    original = (
        "procedure: p\niterations: []\n\n# about the expectation\nexpect: {status: success}\n"
    )
    data = {"procedure": "p", "iterations": [{"output": "x", "exit_code": 0}],
            "expect": {"status": "success"}}  # fmt: skip
    assert splice_scenario_text(original, data) == (
        "procedure: p\niterations:\n- output: x\n  exit_code: 0\n\n# about the expectation\n"
        "expect: {status: success}\n"
    )


def test_a_flow_style_document_falls_back_to_a_full_rewrite() -> None:
    assert splice_scenario_text("{procedure: p, iterations: []}\n", {"procedure": "p"}) is None
