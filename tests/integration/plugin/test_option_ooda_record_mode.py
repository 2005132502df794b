"""``--ooda-record-mode`` with a fake AI CLI standing in for the live command."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import yaml

if TYPE_CHECKING:
    from ooda_project import Project

SECRET = "s3cr3t-value-0123456789"
API_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
PLAN = (
    '[{"print": "Greeted Ann, key ' + API_KEY + '"},'
    ' {"print": "All greeted.\\n<promise>SUCCESS</promise>", "files": {"DONE.md": "done"}}]'
)
EMPTY_SCENARIO = "procedure: greet\nmax_iterations: 3\nexpect: {status: success}\niterations: []\n"


@pytest.fixture
def live(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("OODA_TEST_API_TOKEN", SECRET)
    project.ai_cmd = project.fake_ai(PLAN)  # type: ignore[attr-defined]
    return project


def run_live(project: Project, *args: str) -> pytest.RunResult:
    return project.run("-m", "live", "--ooda-ai-cmd", project.ai_cmd, *args)  # type: ignore[attr-defined]


def test_once_records_an_empty_scenario_redacted_and_atomically(live: Project) -> None:
    path = live.scenario("first", EMPTY_SCENARIO)
    result = run_live(live, "--ooda-record-mode=once")
    result.assert_outcomes(passed=1, deselected=7)
    text = path.read_text()
    assert SECRET not in text
    assert API_KEY not in text
    assert "<redacted>" in text
    data = yaml.safe_load(text)
    assert [it["exit_code"] for it in data["iterations"]] == [0, 0]
    assert "<promise>SUCCESS</promise>" in data["iterations"][1]["output"]
    assert len(data["iterations"][0]["prompt_sha256"]) == 64
    assert "Procedure: Greet" in data["iterations"][0]["prompt"]
    assert data["expect"] == {"status": "success"}
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]
    # The recording now replays to the same outcome.
    live.run("-k", "scenario").assert_outcomes(passed=1, deselected=7)


def test_once_leaves_an_existing_recording_alone(live: Project) -> None:
    path = live.scenario("first", EMPTY_SCENARIO)
    run_live(live, "--ooda-record-mode=once")
    recorded = path.read_text()
    (live.path / "fake-ai/plan.count").unlink()
    run_live(live, "--ooda-record-mode=once").assert_outcomes(passed=1, deselected=7)
    assert path.read_text() == recorded


def test_none_never_writes(live: Project) -> None:
    path = live.scenario("first", EMPTY_SCENARIO)
    run_live(live).assert_outcomes(passed=1, deselected=7)
    assert path.read_text() == EMPTY_SCENARIO


def test_all_rewrites_even_an_up_to_date_recording(live: Project) -> None:
    path = live.scenario("first", EMPTY_SCENARIO)
    run_live(live, "--ooda-record-mode=once")
    live.write("fake-ai/plan.json", '[{"print": "Quick: <promise>SUCCESS</promise>"}]')
    (live.path / "fake-ai/plan.count").unlink()
    run_live(live, "--ooda-record-mode=all").assert_outcomes(passed=1, deselected=7)
    data = yaml.safe_load(path.read_text())
    assert len(data["iterations"]) == 1
    assert "Quick" in data["iterations"][0]["output"]


def test_new_rerecords_only_drifted_scenarios(live: Project) -> None:
    path = live.scenario("first", EMPTY_SCENARIO)
    run_live(live, "--ooda-record-mode=once")
    live.write("fake-ai/plan.json", '[{"print": "Quick: <promise>SUCCESS</promise>"}]')
    (live.path / "fake-ai/plan.count").unlink()
    recorded = path.read_text()
    run_live(live, "--ooda-record-mode=new")
    assert path.read_text() == recorded  # prompts unchanged: not re-recorded

    live.write("prompts/observe.md", "Read the README twice.\n")
    run_live(live, "--ooda-record-mode=new").assert_outcomes(passed=1, deselected=7)
    data = yaml.safe_load(path.read_text())
    assert len(data["iterations"]) == 1
    assert "Read the README twice." in data["iterations"][0]["prompt"]


def test_a_failed_live_run_never_replaces_a_recording(live: Project) -> None:
    path = live.scenario("first", EMPTY_SCENARIO)
    run_live(live, "--ooda-record-mode=once")
    recorded = path.read_text()
    live.write("fake-ai/plan.json", '[{"print": "broken", "exit": 1}]')
    (live.path / "fake-ai/plan.count").unlink()
    result = run_live(live, "--ooda-record-mode=all")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenario greet/first (scenarios/greet/first.yml) live: status=aborted*",
            "  - expected status 'success', got 'aborted'",
            "*token in use: <redacted>",
            "*not recorded: the run failed its expectations; the existing recording is kept",
        ]
    )
    assert path.read_text() == recorded
    assert SECRET not in result.stdout.str()


def test_live_runs_in_a_git_initialised_copy_of_the_workspace(live: Project) -> None:
    live.write("scenarios/greet/ws/README.md", "hello\n")
    live.write(
        "fake-ai/plan.json",
        '[{"print": "<promise>SUCCESS</promise>", "files": {"NOTE.md": "note"}}]',
    )
    live.write(
        "fake-ai/agent.py",
        (live.path / "fake-ai/agent.py")
        .read_text()
        .replace(
            "sys.exit(",
            "import subprocess; print(subprocess.run(['git', 'status', '--porcelain'],"
            " capture_output=True, text=True).stdout.strip() or 'clean'); sys.exit(",
        ),
    )
    live.scenario(
        "ws",
        "procedure: greet\nworkspace: ws\n"
        "expect: {status: success, files: {README.md: exists, NOTE.md: exists}}\n"
        "iterations: []\n",
    )
    result = run_live(live, "--ooda-record-mode=once")
    result.assert_outcomes(passed=1, deselected=7)
    data = yaml.safe_load((live.path / "scenarios/greet/ws.yml").read_text())
    # git sees the agent's new file as untracked: the copy is a repository.
    assert "?? NOTE.md" in data["iterations"][0]["output"]
    assert not (live.path / "scenarios/greet/ws/NOTE.md").exists()


def test_bad_record_mode_is_a_usage_error(project: Project) -> None:
    result = project.run("--ooda-record-mode=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--ooda-record-mode: invalid choice: 'sometimes' (choose from *none*once*new*all*)"]
    )


def test_bad_record_mode_in_ini_is_a_usage_error(project: Project) -> None:
    project.write("pytest.ini", "[pytest]\nooda_record_mode = sometimes\n")
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*ini option ooda_record_mode: invalid choice: 'sometimes' "
            "(choose from 'none', 'once', 'new', 'all')*"
        ]
    )
