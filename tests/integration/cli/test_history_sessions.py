"""``ooda history`` on sessions really run: the git fixture's project run live three
times by a scripted agent (a real subprocess) that always fails one scenario, fails
another every third call and never fails the last — and the history tells the
broken one from the flaky one from the stable one; then ``ooda report --pr`` judges a
fourth session against that history: a failure of the flaky one is within its noise,
while the stable one failing is news."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from git_project import make_project, write
from ooda_project import OUTER_VARIABLES

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

#: count/numbers never succeeds; greet/hello fails every third run;
#: farewell/bye always succeeds (its fragment says "leaving"); FAREWELL_BROKEN in the
#: prompt (a later edit) breaks farewell/bye.
AGENT = """\
import sys
from pathlib import Path
prompt = sys.stdin.read()
if "numbers" in prompt or "FAREWELL_BROKEN" in prompt:
    print("could not <promise>FAILURE</promise>")
    sys.exit(0)
if "arrived" in prompt:
    # A run is counted at its first iteration; each iteration of every third run fails.
    tally = Path(__file__).with_name("greet-runs.txt")
    runs = len(tally.read_text().splitlines()) if tally.exists() else 0
    if "Iteration: 1 of" in prompt:
        runs += 1
        tally.write_text("run\\n" * runs)
    if runs % 3 == 0:
        print("tired <promise>FAILURE</promise>")
        sys.exit(0)
print("done <promise>SUCCESS</promise>")
"""


def _live(project: Path, agent: Path, results: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-m",
            "live",
            f"--ooda-ai-cmd={sys.executable} {agent}",
            "--ooda-repeat=6",
            f"--ooda-results={results}",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    # 1: a run failed — that is what is measured.
    assert done.returncode in (0, 1), done.stdout + done.stderr


def test_history_of_real_sessions_tells_broken_from_flaky_and_judges_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in (*OUTER_VARIABLES, "PYTEST_ADDOPTS", "COV_CORE_SOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    make_project(project)
    agent = tmp_path / "agent" / "agent.py"
    write(tmp_path, "agent/agent.py", AGENT)
    for _ in range(3):
        _live(project, agent, "history")
    monkeypatch.chdir(project)
    assert ooda(["history", "history"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("history of 3 scenario(s) over 3 session(s)\n")
    assert "count/numbers: stable-fail: 0% (0/18, 95% CI" in out
    assert "farewell/bye: stable-pass: 100% (18/18, 95% CI" in out
    flaky = next(line for line in out.splitlines() if line.startswith("greet/hello: "))
    assert flaky.startswith("greet/hello: flaky: ")
    assert "change point" not in out

    # A change: farewell's fragment now breaks it; greet/hello's runs are as flaky as ever.
    write(project, "prompts/farewell.md", "Find who is leaving. FAREWELL_BROKEN\n")
    _live(project, agent, "new")
    base = sorted((project / "history").glob("*.jsonl"))[-1]
    earlier = [str(path) for path in sorted((project / "history").glob("*.jsonl"))[:-1]]
    argv = ["report", "--pr", str(base), "new"]
    for path in earlier:
        argv += ["--history", path]
    assert ooda(argv) == 1  # farewell/bye regressed
    comment = capsys.readouterr().out
    notes = {line.split("\n", 1)[0]: line for line in comment.split("### ")[1:]}
    bye = next(text for head, text in notes.items() if head == "farewell/bye")
    assert "this broke: 0/6 (0%) here, and it never failed before" in bye
    hello = next(text for head, text in notes.items() if head == "greet/hello")
    assert "within its noise" in hello
    # count/numbers never passed: failing here is no news either.
    assert "as before: 0/6 (0%) here (p 1), it never passed" in notes["count/numbers"]
