"""Prompt drift (scenario/drift.py): the diff and the fragment it blames."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.compose import add_use_observer
from pytest_ooda.loop import run_procedure
from pytest_ooda.scenario import (
    Recorder,
    Scenario,
    check_drift,
    load_scenario,
)

from .helpers import _scripted_result

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.compose import FragmentUse
    from pytest_ooda.config import Config


def test_drift_diff_names_changed_fragment(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "rec.yml"
    recorded = _scripted_result(config, ["ok", "<promise>SUCCESS</promise>"], max_iterations=2)
    Recorder(Scenario(procedure="build", path=path, max_iterations=2), "once").commit(recorded)
    scenario = load_scenario(path)

    (tmp_path / "act.md").write_text("Do the work.\nRecklessly.")
    replayed = run_procedure(config, "build", backend=scenario.replay_backend(), max_iterations=2)
    drifts = check_drift(scenario, replayed, config)
    assert [d.iteration for d in drifts] == [1, 2]
    first = drifts[0]
    assert first.changed_sources == ("act.md",)
    assert first.diff is not None
    assert "-Carefully.\n+Recklessly.\n" in first.diff
    assert "recorded prompt (rec.yml, iteration 1)" in first.diff
    assert drifts[1].diff is None
    text = first.describe()
    assert "changed fragments: act.md" in text
    assert "prompt of iteration 1 drifted" in text


def test_no_drift_when_prompts_match(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "rec.yml"
    recorded = _scripted_result(config, ["<promise>SUCCESS</promise>"], max_iterations=2)
    Recorder(Scenario(procedure="build", path=path, max_iterations=2), "all").commit(recorded)
    scenario = load_scenario(path)
    replayed = run_procedure(config, "build", backend=scenario.replay_backend(), max_iterations=2)
    assert check_drift(scenario, replayed, config) == []


def test_matching_prompts_are_not_composed_again(config: Config, tmp_path: Path) -> None:
    # The fragments are mapped only to blame a first prompt that drifted; a replay whose
    # prompts match the recording pays for no second composition.
    path = tmp_path / "rec.yml"
    recorded = _scripted_result(config, ["ok", "<promise>SUCCESS</promise>"], max_iterations=2)
    Recorder(Scenario(procedure="build", path=path, max_iterations=2), "once").commit(recorded)
    scenario = load_scenario(path)
    assert scenario.iterations[0].prompt is not None
    replayed = run_procedure(config, "build", backend=scenario.replay_backend(), max_iterations=2)
    rendered: list[FragmentUse] = []
    remove = add_use_observer(rendered.append)
    try:
        assert check_drift(scenario, replayed, config) == []
    finally:
        remove()
    assert rendered == []


def test_deleted_lines_blame_neighbouring_fragment(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "rec.yml"
    recorded = _scripted_result(config, ["<promise>SUCCESS</promise>"], max_iterations=1)
    Recorder(Scenario(procedure="build", path=path), "all").commit(recorded)
    (tmp_path / "observe.md").write_text("")
    (tmp_path / "observe.md").write_text("Look around.\nAnd more.")
    scenario = load_scenario(path)
    replayed = run_procedure(config, "build", backend=scenario.replay_backend(), max_iterations=1)
    (drift,) = check_drift(scenario, replayed, config)
    assert drift.changed_sources == ("observe.md",)
