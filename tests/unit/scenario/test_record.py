"""Recording a live run as a scenario (scenario/record.py): record modes, what a recording keeps."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.backends.replay import ReplayStep
from pytest_ooda.errors import ScenarioError
from pytest_ooda.loop import LoopResult, run_procedure
from pytest_ooda.scenario import (
    Expect,
    Recorder,
    Scenario,
    ScenarioIteration,
    detect_drift,
    load_scenario,
    load_scenario_text,
    needs_recording,
    save_scenario,
    scenario_from_result,
)
from pytest_ooda.scenario.replay import replay_scenario

from .helpers import AGENT_SCENARIO, SAMPLE, _agent_config, _replay_result, _scripted_result, write

if TYPE_CHECKING:
    from pytest_ooda.config import Config


@pytest.mark.parametrize(
    ("mode", "has_iterations", "drifted", "expected"),
    [
        ("none", False, False, False),
        ("none", True, True, False),
        ("once", False, False, True),
        ("once", True, False, False),
        ("once", True, True, False),
        ("new", False, False, True),
        ("new", True, False, False),
        ("new", True, True, True),
        ("all", True, False, True),
        ("all", False, False, True),
    ],
)
def test_record_modes(mode: str, has_iterations: bool, drifted: bool, expected: bool) -> None:
    its = (ScenarioIteration(output="x"),) if has_iterations else ()
    scenario = Scenario(procedure="build", iterations=its)
    assert needs_recording(mode, scenario, drifted=drifted) is expected
    assert Recorder(scenario, mode).wanted(drifted=drifted) is expected


def test_unknown_record_mode() -> None:
    with pytest.raises(ScenarioError, match="expected one of: none, once, new, all"):
        needs_recording("sometimes", Scenario(procedure="build"))


def test_recorder_writes_new_recording(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "scenarios" / "build" / "new.yml"
    scenario = Scenario(procedure="build", name="new", path=path, max_iterations=3)
    result = _scripted_result(config, ["working", "<promise>SUCCESS</promise>"], max_iterations=3)
    assert Recorder(scenario, "once").commit(result) == path
    loaded = load_scenario(path)
    assert loaded.expect == Expect(status="success", iterations=2)
    assert [it.output for it in loaded.iterations] == ["working", "<promise>SUCCESS</promise>"]
    assert [it.prompt_sha256 for it in loaded.iterations] == [
        r.prompt_sha256 for r in result.records
    ]
    assert loaded.iterations[0].prompt == result.prompts[0]
    assert loaded.iterations[1].prompt is None
    # The recording replays to the same outcome.
    replayed = run_procedure(config, "build", backend=loaded.replay_backend(), max_iterations=3)
    replayed.assert_status("success", iterations=2)
    assert detect_drift(loaded, replayed.prompts) == []


def test_failed_live_run_never_replaces_a_recording(config: Config, tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE)
    before = path.read_text()
    scenario = load_scenario(path)
    result = _scripted_result(config, ["a", "b", "c"], max_iterations=3)
    recorder = Recorder(scenario, "all")
    failures = scenario.check(result)
    assert failures
    assert recorder.commit(result, failures) is None
    assert recorder.skipped_reason is not None
    assert path.read_text() == before


def test_interrupted_run_is_not_recorded(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "x.yml"
    scenario = Scenario(procedure="build", path=path)
    result = _scripted_result(config, ["a"], max_iterations=1)
    interrupted = LoopResult(**{**result.__dict__, "status": "interrupted"})
    assert Recorder(scenario, "all").commit(interrupted) is None
    assert not path.exists()


def test_scenario_from_result_keeps_hand_written_expect(config: Config) -> None:
    scenario = Scenario(procedure="build", expect=Expect(status="success"))
    result = _scripted_result(config, ["<promise>SUCCESS</promise>"])
    assert scenario_from_result(scenario, result).expect == Expect(status="success")
    assert scenario_from_result(scenario, result, keep_expect=False).expect == Expect(
        status="success", iterations=1
    )


def test_a_recording_carries_what_the_agent_reported_relative_and_redacted(
    tmp_path: Path,
) -> None:
    secret = "sk-ant-api03-AbCdEf0123456789xyzXYZ_-q"
    calls = (
        ToolCall("Write", f"{tmp_path}/src/app.py", ok=True),
        ToolCall("Bash", f"curl -H 'x-api-key: {secret}' http://x", ok=False, error="exit 7"),
    )
    result = _replay_result(
        tmp_path,
        ReplayStep(
            output="x", usage=Usage(10, 2, 0.001), tool_calls=calls, tools_reported=True,
            turns=4, model="m", error="claude-stream-json: line 9 is not JSON (x)",
        ),
        ReplayStep(output="y", usage=Usage(10, 2, 0.001)),
    )  # fmt: skip
    recorded = scenario_from_result(load_scenario_text("procedure: build\n"), result)
    first, second = recorded.iterations
    assert first.tool_calls is not None
    assert first.tool_calls[0].summary == "src/app.py"
    assert first.error == "claude-stream-json: line 9 is not JSON (x)"
    assert second.tool_calls is None  # not reported: not "none were made"
    assert recorded.recorded is not None
    assert (recorded.recorded.status, recorded.recorded.tokens) == ("max-iters", 24)
    assert recorded.recorded.reason is None
    path = save_scenario(recorded, tmp_path / "rec.yml")
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    assert "summary: 'curl -H ''x-api-key: <redacted>'' http://x'" in text
    back = load_scenario(path)
    assert back.iterations[0].usage == Usage(10, 2, 0.001)
    assert back.iterations[0].turns == 4
    assert back.iterations[1].tool_calls is None


def test_an_existing_scenario_file_keeps_its_tool_checks(tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    path.write_text(AGENT_SCENARIO, encoding="utf-8")
    scenario = load_scenario(path)
    (tmp_path / "w").mkdir()
    replayed = replay_scenario(
        _agent_config(tmp_path), scenario, workdir=tmp_path / "w", drift=False
    )
    assert replayed.problems == ()
    assert Path(tmp_path / "w" / "hello.py").read_text(encoding="utf-8") == "print('hi')\n"
