"""The library's one live-run path: outcomes, records and warnings as values."""

from __future__ import annotations

import json
import shlex
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.errors import AgentWarning, NoAICommandError, ScenarioError
from pytest_ooda.live import LiveRun, plan_run, run_live
from pytest_ooda.results import classify_outcome
from pytest_ooda.scenario import load_scenario
from pytest_ooda.settings import session_settings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pytest_ooda.settings import SessionSettings

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"

CONFIG = """\
procedures:
  greet:
    default_max_iterations: 2
    act:
      - content: "Write hello.txt, then print <promise>SUCCESS</promise>."
"""


def _project(tmp_path: Path, scenario: str) -> tuple[Path, Path]:
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    (tmp_path / "scenarios" / "greet").mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "README.md").write_text("hello\n")
    path = tmp_path / "scenarios" / "greet" / "happy.yml"
    path.write_text(scenario)
    return tmp_path / "ooda-config.yml", path


def _agent(step: dict[str, object]) -> str:
    return shlex.join([sys.executable, str(AGENT), json.dumps(step)])


def _live(
    config: Path, path: Path, settings: SessionSettings, *, run: int = 1, runs: int = 1
) -> LiveRun:
    """Plan the scenario at ``path`` under ``settings`` and run the plan."""
    plan = plan_run(settings, "greet", load_scenario(path), collected=config, run=run, runs=runs)
    return run_live(plan)


def test_a_run_that_meets_its_expectations_is_a_success(tmp_path: Path) -> None:
    config, path = _project(
        tmp_path,
        "procedure: greet\nworkspace: ../../repo\nexpect: {status: success}\niterations: []\n",
    )
    settings = session_settings(tmp_path, ai_cmd=_agent({"print": "<promise>SUCCESS</promise>"}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warnings come back as values, never issued
        run = _live(config, path, settings, run=2, runs=3)
    assert (run.outcome, run.problems, run.report) == ("success", (), "")
    assert run.record.outcome == "success"
    assert (run.record.head.run, run.record.head.runs, run.record.head.scenario_file) == (
        2,
        3,
        "scenarios/greet/happy.yml",
    )
    # Only the first of a scenario's repeats may be recorded.
    assert run.recording is None
    assert "iterations: []" in path.read_text()


def test_a_missed_expectation_is_a_failure_with_its_report(tmp_path: Path) -> None:
    config, path = _project(
        tmp_path,
        "procedure: greet\nexpect: {status: success, files: {hello.txt: exists}}\niterations: []\n",
    )
    settings = session_settings(
        tmp_path, ai_cmd=_agent({"print": "<promise>SUCCESS</promise>"}), record_mode="none"
    )
    run = _live(config, path, settings)
    assert run.outcome == "failure"
    assert run.problems == ("file hello.txt: expected to exist, but it is missing",)
    assert "scenario greet/happy" in run.report
    assert run.record.outcome == "failure"


def test_an_agent_that_cannot_start_is_an_error_not_a_failure(tmp_path: Path) -> None:
    config, path = _project(tmp_path, "procedure: greet\niterations: []\n")
    settings = session_settings(tmp_path, ai_cmd=str(tmp_path / "no-such-agent"))
    run = _live(config, path, settings)
    assert run.outcome == "error"
    assert run.error_reason is not None
    assert "no-such-agent" in run.error_reason
    assert (run.record.outcome, run.record.valid) == ("error", False)
    assert run.error_reason.startswith("cannot-start: ")
    assert classify_outcome(load_scenario(path), run.result, ()) == (
        "error",
        run.result.infra_error,
    )


def test_denied_tools_come_back_as_warnings(tmp_path: Path) -> None:
    config, path = _project(tmp_path, "procedure: greet\niterations: []\n")
    report = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "<promise>SUCCESS</promise>",
        "permission_denials": [{"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}],
    }
    settings = session_settings(
        tmp_path,
        ai_cmd=_agent({"print": json.dumps(report)}),
        ai_output="claude-json",
        record_mode="none",
    )
    run = _live(config, path, settings)
    assert run.outcome == "success"
    [warning] = run.warnings
    assert isinstance(warning, AgentWarning)
    assert warning.file == str(path)
    assert "Bash" in warning.message


def test_no_ai_command_and_a_workspace_outside_the_project_are_errors(tmp_path: Path) -> None:
    config, path = _project(tmp_path, "procedure: greet\nworkspace: ../../..\niterations: []\n")
    with pytest.raises(NoAICommandError, match="--ooda-ai-cmd="):
        _live(config, path, session_settings(tmp_path))
    settings = session_settings(tmp_path, ai_cmd=_agent({"print": "x"}))
    with pytest.raises(ScenarioError, match="is outside the project") as caught:
        _live(config, path, settings)
    assert (caught.value.file, caught.value.line) == (str(path), 2)


def test_a_sandbox_that_does_not_start_makes_the_run_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib

    from pytest_ooda import sandbox
    from pytest_ooda.errors import SandboxError

    @contextlib.contextmanager
    def refusing(spec: object, workspace: Path) -> Iterator[None]:
        raise SandboxError("docker: the daemon does not answer")
        yield None

    # The live run reaches the sandbox through the package contract.
    monkeypatch.setattr(sandbox, "sandboxed", refusing)
    config, path = _project(
        tmp_path, "procedure: greet\nexpect: {status: success}\niterations: []\n"
    )
    marker = tmp_path / "agent-ran"
    settings = session_settings(tmp_path, ai_cmd=_agent({"touch": str(marker)}))
    run = _live(config, path, settings)
    assert run.outcome == "error"
    assert run.error_reason == "sandbox: docker: the daemon does not answer"
    assert (run.record.outcome, run.record.valid, run.result.iterations) == ("error", False, 0)
    assert not marker.exists()


def _material_project(tmp_path: Path, setup: str) -> tuple[Path, Path]:
    from pytest_ooda.agents import MATERIAL_SECTIONS

    (section,) = MATERIAL_SECTIONS
    skill = tmp_path / "plug" / ".claude" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Greets. Use when asked.\n---\nGreet.\n")
    return _project(
        tmp_path,
        f"procedure: greet\nworkspace: ../../repo\nprompt: /greet Bob\n"
        f"{section}: ../../plug/.claude\nsetup:\n  - {setup}\n"
        "expect:\n  files:\n    seen.txt:\n"
        "      contains: [.claude/skills/greet/SKILL.md, '?? CHANGED']\n"
        "iterations: []\n",
    )


def test_a_run_installs_its_material_and_runs_its_setup_before_the_agent(
    tmp_path: Path,
) -> None:
    config, path = _material_project(tmp_path, "echo change > CHANGED.txt")
    agent = (
        "sh -c 'cat >/dev/null; find .claude -type f > seen.txt; git status --short >> seen.txt'"
    )
    run = _live(config, path, session_settings(tmp_path, ai_cmd=agent))
    assert (run.outcome, run.problems) == ("success", ())
    # One turn: the prompt passed through, asking for no promise.
    assert run.result.prompts == ["/greet Bob"]
    assert run.result.iterations == 1
    # expect.files saw the material installed and the setup's change uncommitted; the
    # material's files are fragments of the prompt's identity.
    fragments = {fragment.source for fragment in run.record.head.fragments}
    assert ".claude/skills/greet/SKILL.md" in fragments
    # The setup is recorded with the run: what ran, its exit code.
    assert [(c.run, c.exit_code, c.passed) for c in run.record.setup] == [
        ("echo change > CHANGED.txt", 0, True)
    ]


def test_a_failing_setup_is_an_infrastructure_error_and_no_agent_runs(tmp_path: Path) -> None:
    config, path = _material_project(tmp_path, "exit 3")
    marker = tmp_path / "agent-ran"
    run = _live(config, path, session_settings(tmp_path, ai_cmd=f"touch {marker}"))
    assert run.outcome == "error"
    assert run.error_reason is not None
    assert run.error_reason.startswith("setup: command 'exit 3'")
    assert not marker.exists()
    assert [(c.run, c.exit_code, c.passed) for c in run.record.setup] == [("exit 3", 3, False)]
    assert run.result.iterations == 0


def test_a_trigger_case_runs_its_prompt_and_records_what_it_asserted(tmp_path: Path) -> None:
    from pytest_ooda.results import decode_record

    config, path = _project(
        tmp_path,
        "procedure: greet\n"
        "triggers: {skill: greet, should: [please greet Bob], should_not: [what time is it]}\n"
        "iterations: []\n",
    )
    settings = session_settings(tmp_path, ai_cmd=_agent({"print": "hello"}))
    scenario = load_scenario(path)
    plan = plan_run(settings, "greet", scenario, collected=config, trigger="should-1")
    run = run_live(plan)
    # A plain CLI fires nothing: the should-fire case fails its one assertion.
    assert run.result.prompts == ["please greet Bob"]
    assert run.outcome == "failure"
    assert [(a.name, a.passed) for a in run.record.assertions] == [("skill greet fired", False)]
    assert run.record.head.trigger == {
        "target": "skill greet",
        "case": "should-1",
        "should_fire": True,
        "prompt": "please greet Bob",
    }
    negative = run_live(
        plan_run(settings, "greet", scenario, collected=config, trigger="should-not-1")
    )
    assert negative.outcome == "success"
    assert [(a.name, a.passed) for a in negative.record.assertions] == [
        ("skill greet not_fired", True)
    ]
    again = decode_record(json.loads(run.record.to_line()))
    assert again.assertions == run.record.assertions
    assert again.head.trigger == run.record.head.trigger
    with pytest.raises(ScenarioError, match="no trigger case 'should-9'"):
        plan_run(settings, "greet", scenario, collected=config, trigger="should-9")


def test_a_trigger_case_is_never_recorded_into_its_sets_file(tmp_path: Path) -> None:
    """The set's file holds many prompts, not one run: asked to record everything (the
    agent's output and its API traffic), a case's run records neither; the scenario
    itself still would."""
    text = "procedure: greet\ntriggers: {skill: greet, should: [hi]}\niterations: []\n"
    config, path = _project(tmp_path, text)
    settings = session_settings(
        tmp_path, ai_cmd=_agent({"print": "hello"}), record_mode="all", record_api="all"
    )
    scenario = load_scenario(path)
    whole = plan_run(settings, "greet", scenario, collected=config)
    assert (whole.record_mode, whole.api is not None) == ("all", True)
    case = plan_run(settings, "greet", scenario, collected=config, trigger="should-1")
    assert (case.record_mode, case.api) == ("none", None)
    run_live(case)
    assert path.read_text() == text
