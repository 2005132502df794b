"""``expect.judge`` in pytest sessions: live runs graded through the HTTP judge on a real
local server, the verdicts recorded, the grading cache shared across sessions (counted
in requests), replays graded offline with the judge unreachable, ``--ooda-regrade``
reporting flipped verdicts, and a judge error counted as the run's ``error``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

# Imported by this process up front: pytester's in-process sessions drop the modules
# they import, and requests imported afresh by a later session clashes with the
# http.cookiejar classes the first one left behind.
import requests  # noqa: F401
import yaml
from judge_server import JudgeServer, verdict

if TYPE_CHECKING:
    from pathlib import Path

    from ooda_project import Project

PLAN = (
    '[{"print": "Hello Ada and Bob.\\n<promise>SUCCESS</promise>",'
    ' "files": {"GREETED.md": "Ada\\nBob\\n"}}]'
)


def scenario(
    server: JudgeServer, *, votes: int = 1, extra: str = "", inputs: str = "[output]"
) -> str:
    return (
        "procedure: greet\nmax_iterations: 1\nworkspace: room\nexpect:\n  status: success\n"
        + server.judge_block(votes=votes, extra=extra, inputs=inputs)
        + "iterations: []\n"
    )


def records(directory: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for file in sorted(directory.glob("*.jsonl"))
        for line in file.read_text().splitlines()
    ]


@pytest.fixture
def judged(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("OODA_TEST_JUDGE_KEY", "judge-key-0123456789")
    project.ai_cmd = project.fake_ai(PLAN)  # type: ignore[attr-defined]
    project.write("scenarios/greet/room/README.md", "Ada and Bob are here.\n")
    return project


def live(project: Project, *args: str) -> pytest.RunResult:
    if not any(arg.startswith("--ooda-results") for arg in args):
        args = ("--ooda-results=results", *args)
    return project.run("-m", "live", "--ooda-ai-cmd", project.ai_cmd, *args)  # type: ignore[attr-defined]


def test_graded_recorded_cached_replayed_offline_and_regraded(judged: Project) -> None:
    with JudgeServer() as server:
        path = judged.scenario("hello", scenario(server, votes=3, inputs="[output, diff]"))
        server.answer(verdict("pass", "names both"), verdict("fail", "terse"), verdict("pass"))
        result = live(judged, "--ooda-record-mode", "once")
        result.assert_outcomes(passed=1, deselected=7)
        assert len(server.requests) == 3
        # The judge saw the rubric and the run's last output.
        prompt = server.requests[0]["messages"][0]["content"]
        assert "The greeting names everyone present." in prompt
        assert "Hello Ada and Bob." in prompt
        # The diff against the scenario's workspace: the file the agent wrote, no .git.
        assert "--- /dev/null\n+++ b/GREETED.md\n@@ -0,0 +1,2 @@\n+Ada\n+Bob\n" in prompt
        assert ".git" not in prompt

        [record] = records(judged.path / "results")
        grade = record["judge"]
        assert record["outcome"] == "success"
        assert (grade["passed"], grade["pass_votes"], grade["rule"]) == (
            True,
            2,
            "a majority (2) of 3",
        )
        assert grade["agreement"] == pytest.approx(2 / 3)
        assert [vote["reason"] for vote in grade["votes"]] == ["names both", "terse", "looks right"]
        assert grade["cost"] == pytest.approx(3 * 0.00012)
        # The agent's usage stays the agent's: the judge's tokens are apart.
        assert (grade["input_tokens"], grade["output_tokens"]) == (300, 30)

        saved = yaml.safe_load(path.read_text())
        assert [vote["verdict"] for vote in saved["judged"]["votes"]] == ["pass", "fail", "pass"]
        assert len(saved["judged"]["key"]) == 64

        # A second session over the same run content asks nothing: the cache answers.
        first = judged.path / "results" / "first"
        first.mkdir()
        for log in (judged.path / "results").glob("*.jsonl"):
            log.rename(first / log.name)
        again = live(judged)
        again.assert_outcomes(passed=1, deselected=7)
        assert len(server.requests) == 3
        [cached] = records(judged.path / "results")
        assert cached["judge"]["cost"] is None
        assert all(vote["cached"] for vote in cached["judge"]["votes"])

    # The server is gone: a replay grades with the recorded verdicts, offline.
    replay = judged.run("-k", "scenario")
    replay.assert_outcomes(passed=1)
    # The replay showed the judge the same inputs the verdicts were recorded for.
    assert "JudgeWarning" not in replay.stdout.str()

    # A rubric that now fails the run, asked again: the verdict flips, the replay fails.
    with JudgeServer(default=verdict("fail", "Bob was not named")) as server:
        text = path.read_text()
        port = text.split("base_url: http://127.0.0.1:")[1].split("\n")[0]
        path.write_text(text.replace(f"127.0.0.1:{port}", server.url.removeprefix("http://")))
        regraded = judged.run("-k", "scenario", "--ooda-regrade", "--ooda-results=results")
        regraded.assert_outcomes(failed=1)
        assert len(server.requests) == 3
        regraded.stdout.fnmatch_lines(
            [
                "*judge: 0 of 3 vote(s) passed, needed a majority (2) of 3 (vote 1: Bob was "
                "not named*",
                "*JudgeWarning: scenario greet/hello: regraded: pass -> fail (recorded 2 of 3 "
                "pass votes, now 0 of 3)*",
            ]
        )


def test_a_failing_verdict_fails_the_run_and_its_reason_is_redacted(
    judged: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "tok-0123456789abcdef"
    monkeypatch.setenv("OODA_TEST_API_TOKEN", secret)
    reason = f"nobody was greeted by name; it printed {secret}"
    with JudgeServer(default=verdict("fail", reason)) as server:
        judged.scenario("hello", scenario(server))
        result = live(judged)
        # The judge saw the run redacted like everything else (the agent printed the
        # token): what the judge is shown leaves the machine.
        prompt = server.requests[0]["messages"][0]["content"]
        assert secret not in prompt
        assert "<redacted>" in prompt
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        ["*judge: 0 of 1 vote(s) passed, needed a majority (1) of 1 (vote 1: nobody was*"]
    )
    assert secret not in result.stdout.str()
    [record] = records(judged.path / "results")
    assert record["outcome"] == "failure"
    assert record["judge"]["passed"] is False
    assert secret not in json.dumps(record)
    assert record["judge"]["votes"][0]["reason"].startswith("nobody was greeted by name")


def test_a_judge_that_never_answers_well_makes_the_run_an_error(judged: Project) -> None:
    with JudgeServer(default="I think it passes.") as server:
        judged.scenario("hello", scenario(server, extra="    retries: 1\n"))
        result = live(judged, "--ooda-record-mode", "once")
        assert len(server.requests) == 2
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        ["*judge error: the answer is not JSON*(an error of the judge, not of the run)*"]
    )
    [record] = records(judged.path / "results")
    assert record["outcome"] == "error"
    assert record["outcome"] != "success"
    assert "judge error: the answer is not JSON" in record["error_reason"]
    assert record["judge"]["votes"][0]["attempts"] == 2
    # An errored run is not recorded: a replay would have no verdicts.
    assert "judged" not in yaml.safe_load((judged.path / "scenarios/greet/hello.yml").read_text())


def test_a_529_is_retried(judged: Project) -> None:
    with JudgeServer() as server:
        judged.scenario("hello", scenario(server))
        server.fail(529).answer(verdict("pass"))
        result = live(judged)
        assert len(server.requests) == 2
    result.assert_outcomes(passed=1, deselected=7)
    [record] = records(judged.path / "results")
    assert record["judge"]["votes"][0]["attempts"] == 2


def test_a_replay_without_recorded_verdicts_says_how_to_get_them(judged: Project) -> None:
    with JudgeServer() as server:
        judged.scenario(
            "hello",
            scenario(server).replace(
                "iterations: []\n",
                'iterations:\n  - output: "Hello.\\n<promise>SUCCESS</promise>"\n',
            ),
        )
    result = judged.run("-k", "scenario")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the scenario keeps no verdicts (judged:)*--ooda-regrade*"])


def test_the_default_results_folder_stays_out_of_git(judged: Project) -> None:
    """The judge's cache is written before the results log: whichever creates the
    default .ooda/ first gives it its .gitignore."""
    with JudgeServer(default=verdict("pass")) as server:
        judged.scenario("hello", scenario(server))
        result = judged.run("-m", "live", "--ooda-ai-cmd", judged.ai_cmd)  # type: ignore[attr-defined]
    result.assert_outcomes(passed=1, deselected=7)
    assert any((judged.path / ".ooda/results/judge-cache").rglob("*.json"))
    assert (judged.path / ".ooda/.gitignore").read_text().endswith("*\n")


def test_a_damaged_cache_entry_is_graded_again_and_the_run_recorded(judged: Project) -> None:
    """Each cache entry overwritten by one nested 1,000 levels deep: the next session
    reads every entry as a miss, asks the judge again, passes and logs the run."""
    with JudgeServer(default=verdict("pass")) as server:
        judged.scenario("hello", scenario(server, votes=2))
        live(judged).assert_outcomes(passed=1, deselected=7)
        assert len(server.requests) == 2
        entries = sorted((judged.path / "results" / "judge-cache").rglob("*.json"))
        assert len(entries) == 2
        for entry in entries:
            entry.write_text("[" * 1000 + "]" * 1000)
        for log in (judged.path / "results").glob("*.jsonl"):
            log.unlink()
        again = live(judged)
        again.assert_outcomes(passed=1, deselected=7)
        assert len(server.requests) == 4
    assert "INTERNALERROR" not in again.stdout.str()
    [record] = records(judged.path / "results")
    assert record["outcome"] == "success"
    assert record["judge"]["passed"] is True
    assert not any(vote.get("cached") for vote in record["judge"]["votes"])
    # The votes asked again replaced the damaged entries.
    assert all(json.loads(entry.read_text())["verdict"] == "pass" for entry in entries)


@pytest.mark.parametrize(("extra", "asked"), [("", 3), ("    judge_cache: content\n", 1)])
def test_identical_runs_are_each_graded_unless_the_cache_is_shared_by_content(
    judged: Project, extra: str, asked: int
) -> None:
    """Three repeats with the same output: by default each run asks its own vote (the
    judge's noise is sampled per run); ``judge_cache: content`` shares one on purpose."""
    with JudgeServer() as server:
        judged.scenario("hello", scenario(server, extra=extra))
        server.answer(verdict("pass"), verdict("fail", "terse"), verdict("pass"))
        live(judged, "--ooda-repeat=3")
        assert len(server.requests) == asked
        graded = [record["judge"] for record in records(judged.path / "results")]
        assert len(graded) == 3
        assert sum(1 for grade in graded if grade["votes"][0].get("cached")) == 3 - asked


JUDGE_PY = (
    "import json, os, sys\nsys.stdin.read()\n"
    "print(json.dumps({'verdict': 'pass', 'reason': 'judged in ' + os.getcwd()}))\n"
)


@pytest.mark.parametrize(
    ("where", "command"),
    [
        ("scenarios/greet/judge.py", "{scenario_dir}/judge.py"),
        ("tools/judge.py", "{config_dir}/tools/judge.py"),
    ],
)
def test_a_judge_command_finds_the_repositorys_script_by_placeholder(
    judged: Project, where: str, command: str
) -> None:
    """No absolute path in the scenario: ``{scenario_dir}`` and ``{config_dir}`` stand for
    the scenario's and the config's folders, wherever the checkout is; the command still
    runs in an empty folder of its own."""
    import sys

    judged.write(where, JUDGE_PY)
    block = (
        "  judge:\n    rubric: The greeting names everyone present.\n"
        f"    judge: {{ai_cmd: '{sys.executable} {command}'}}\n"
    )
    judged.scenario(
        "hello",
        "procedure: greet\nmax_iterations: 1\nworkspace: room\nexpect:\n  status: success\n"
        + block
        + "iterations: []\n",
    )
    live(judged).assert_outcomes(passed=1, deselected=7)
    [record] = records(judged.path / "results")
    reason = record["judge"]["votes"][0]["reason"]
    assert reason.startswith("judged in ")
    assert str(judged.path) not in reason  # not the project: an empty folder
