"""A scenario's ``repeat:`` and its aggregate ``expect`` keys: parsed, located when
wrong, written back by a recording, ignored by a single run's checks."""

from __future__ import annotations

import pytest
import yaml

from pytest_ooda.errors import ScenarioError
from pytest_ooda.scenario import load_scenario_text
from pytest_ooda.scenario.model import AggregateExpect
from pytest_ooda.scenario.store import dump_scenario

TEXT = """\
procedure: build
repeat: 20
expect:
  status: success
  success_rate: {min: 0.8}
  max_mean_iterations: 3
  max_mean_cost: 0.25
iterations: []
"""


def test_parsed_and_written_back_as_written() -> None:
    scenario = load_scenario_text(TEXT, path="s.yml")
    assert scenario.repeat == 20
    assert scenario.expect is not None
    assert scenario.expect.status == "success"
    assert scenario.expect.aggregate == AggregateExpect(0.8, 3.0, 0.25)
    assert yaml.safe_load(dump_scenario(scenario)) == yaml.safe_load(TEXT)


def test_a_single_run_never_checks_them(ooda_script: object) -> None:
    from pytest_ooda.config import load_config
    from pytest_ooda.loop import run_procedure

    scenario = load_scenario_text(TEXT.replace("  status: success\n", ""), path="s.yml")
    result = run_procedure(
        load_config(None, global_config=False, env={}),
        "build",
        backend=ooda_script(["no", "no", "no", "no"]),  # type: ignore[operator]
        max_iterations=4,
    )
    # 4 iterations > max_mean_iterations, no success: not this run's business.
    assert scenario.check(result) == []


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("repeat: 0", "2:9", "repeat: expected an integer >= 1, got 0"),
        ("repeat: 10001", "2:9", "repeat: at most 10000 runs, got 10001"),
        ("repeat: '3'", "2:9", "repeat: expected an integer, got a string ('3')"),
        ("expect: {success_rate: 0.8}", "2:24", "expect.success_rate: expected a mapping like"),
        ("expect: {success_rate: {}}", "2:24", "expect.success_rate: give min"),
        ("expect: {success_rate: {min: 80}}", "2:30", "expected a rate from 0 to 1, got 80"),
        ("expect: {success_rate: {max: 1}}", "2:25", "unknown key 'max' in expect.success_rate"),
        ("expect: {max_mean_iterations: 0}", "2:31", "a run has at least 1 iteration, got 0"),
        ("expect: {max_mean_cost: -1}", "2:25", "expect.max_mean_cost: expected a number >= 0"),
        ("expect: {success_ratio: 1}", "2:10", "unknown key 'success_ratio' in expect"),
    ],
)
def test_mistakes_are_located(text: str, where: str, message: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        load_scenario_text(f"procedure: build\n{text}\n", path="s.yml")
    line, column = (int(part) for part in where.split(":"))
    assert (raised.value.line, raised.value.column) == (line, column)
    assert message in raised.value.message


def test_the_hint_for_a_percentage() -> None:
    with pytest.raises(ScenarioError) as raised:
        load_scenario_text("procedure: build\nexpect: {success_rate: {min: 80}}\n", path="s.yml")
    assert raised.value.hint == "for 80% write 0.8"
