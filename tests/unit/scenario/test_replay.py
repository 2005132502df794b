"""Replaying a recorded scenario (scenario/replay.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends import Usage
from pytest_ooda.backends.replay import ReplayBackend, ReplayStep
from pytest_ooda.errors import ScenarioError
from pytest_ooda.loop import run_procedure
from pytest_ooda.scenario import (
    load_scenario,
    load_scenario_text,
    save_scenario,
    scenario_from_result,
)
from pytest_ooda.scenario.replay import replay_scenario

from .helpers import SAMPLE, _agent_config, write

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config


def test_replay_running_out_names_the_file(config: Config, tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SAMPLE.replace("<promise>SUCCESS</promise>", "")))
    with pytest.raises(ScenarioError) as info:
        run_procedure(
            config,
            "build",
            backend=scenario.replay_backend(),
            max_iterations=3,
            workdir=tmp_path,
        )
    assert str(info.value).startswith(
        f"{scenario.path}: scenario 'build/happy' has 2 iterations, loop asked for a 3rd"
    )


def test_a_budget_stop_is_recorded_and_replays_the_same(tmp_path: Path) -> None:
    spend = Usage(1000, 100, 0.05)
    live = run_procedure(
        _agent_config(tmp_path),
        "build",
        backend=ReplayBackend([ReplayStep(output="w", usage=spend)] * 5),
        workdir=tmp_path,
        max_cost=0.08,
        handle_signals=False,
    )
    assert (live.status, live.iterations) == ("aborted", 2)
    base = load_scenario_text("procedure: build\nmax_cost: 0.08\n", path=tmp_path / "b.yml")
    recorded = scenario_from_result(base, live)
    assert recorded.recorded is not None
    assert recorded.recorded.reason == "budget reached: the run cost $0.1000, max_cost is $0.08"
    path = save_scenario(recorded)
    assert "reason: 'budget reached: the run cost $0.1000, max_cost is $0.08'" in (
        path.read_text(encoding="utf-8")
    )
    replayed = replay_scenario(_agent_config(tmp_path), load_scenario(path), workdir=tmp_path)
    assert (replayed.result.status, replayed.result.iterations) == ("aborted", 2)
    assert replayed.problems == ()
    # A tighter budget given for the replay wins; a looser one does not loosen it.
    tighter = replay_scenario(
        _agent_config(tmp_path), load_scenario(path), workdir=tmp_path, max_cost=0.01
    )
    assert tighter.result.iterations == 1
    looser = replay_scenario(
        _agent_config(tmp_path), load_scenario(path), workdir=tmp_path, max_cost=9
    )
    assert looser.result.iterations == 2


def test_a_recorded_error_fails_its_iteration_on_replay(tmp_path: Path) -> None:
    scenario = load_scenario_text(
        "procedure: build\nfailure_threshold: 1\niterations:\n"
        "  - output: 'partial <promise>SUCCESS</promise>'\n"
        "    error: 'claude-stream-json: the stream ended without a result event'\n"
    )
    replayed = replay_scenario(_agent_config(tmp_path), scenario, workdir=tmp_path, drift=False)
    assert replayed.result.status == "aborted"
    assert replayed.result.records[0].reason == (
        "claude-stream-json: the stream ended without a result event"
    )
