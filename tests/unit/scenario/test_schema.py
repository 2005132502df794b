"""Loading scenario files (scenario/schema.py): the document, the scenario's own
settings, and mistakes in them located."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.errors import ScenarioError
from pytest_ooda.scenario import Expect, FileCheck, load_scenario, load_scenario_text

from .helpers import SAMPLE, assert_located, write

if TYPE_CHECKING:
    from pathlib import Path


def test_load_full_scenario(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE)
    scenario = load_scenario(path)
    assert scenario.name == "happy"
    assert scenario.label == "build/happy"
    assert scenario.context == ("focus on the auth module",)
    assert (scenario.max_iterations, scenario.failure_threshold) == (3, 2)
    assert scenario.workspace_dir() == (path.parent / "fixtures" / "repo").resolve()
    assert scenario.expect == Expect(
        status="success",
        iterations=2,
        signals=("none", "SUCCESS"),
        files=(
            FileCheck("AGENTS.md", exists=True),
            FileCheck("tmp.txt", exists=False),
            FileCheck("notes.md", exists=None, contains=("alpha", "beta")),
        ),
    )
    first, second = scenario.iterations
    assert first.prompt_sha256 == "ab" * 32
    assert first.duration_s == 41.2
    assert second.output == "No ready work.\n<promise>SUCCESS</promise>\n"
    assert dict(second.files) == {"AGENTS.md": "# agents\n", "old.txt": None}
    assert second.delay == 0.01


def test_the_name_and_path_of_text_loaded_without_a_file() -> None:
    scenario = load_scenario_text("procedure: build\n")
    assert (scenario.name, scenario.path, scenario.label) == ("scenario", None, "build/scenario")
    named = load_scenario_text("procedure: build\n", path="dir/happy.yml", name="other")
    assert named.name == "other"
    with pytest.raises(ScenarioError) as info:
        load_scenario_text("procedure: Build\n")
    assert (info.value.file, info.value.line, info.value.column) == (None, 1, 12)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("description: x\n", "1:1", "missing required key 'procedure'"),
        ("procedure: Build!\n", "1:12", "is not a procedure name"),
        ("procedure: b\nmax_iterations: two\n", "2:17", "max_iterations: expected an integer"),
        ("procedure: b\nmax_iterations: 0\n", "2:17", "expected an integer >= 1, got 0"),
        ("procedure: b\nmax_iterations: true\n", "2:17", "expected an integer, got a boolean"),
        ("procedure: b\nexpext: {}\n", "2:1", "scenario: unknown key 'expext'"),
        ("procedure: b\nmax_cost: 0\n", "2:11", "max_cost: expected a number > 0"),
        ("procedure: b\nmax_tokens: 0.5\n", "2:13", "max_tokens: expected an integer"),
        ("procedure: b\nrepeat: 0\n", "2:9", "repeat: expected an integer >= 1, got 0"),
        ("procedure: b\nrepeat: 10001\n", "2:9", "repeat: at most 10000 runs, got 10001"),
        ("procedure: b\nrepeat: '3'\n", "2:9", "repeat: expected an integer, got a string ('3')"),
        ("procedure: [b\n", "2:1", "invalid YAML"),
        ("- procedure: b\n", "1:1", "scenario file: expected a mapping, got a list"),
    ],
)
def test_located_errors(tmp_path: Path, text: str, where: str, message: str) -> None:
    assert_located(tmp_path, text, where, message)


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="duplicate"):
        load_scenario_text("procedure: b\nprocedure: c\n", path="s.yml")


def test_replay_says_how_the_scenario_item_replays(tmp_path: Path) -> None:
    assert load_scenario_text("procedure: b\nreplay: agent\n").replay == "agent"
    assert load_scenario_text("procedure: b\nreplay: loop\n").replay == "loop"
    assert load_scenario_text("procedure: b\n").replay is None
    assert_located(
        tmp_path, "procedure: b\nreplay: agents\n", "2:9", "replay: expected one of loop, agent"
    )
