"""How a run's outcome is decided: real loop runs (a scripted backend) against the
scenario's expectations, the infrastructure's faults, and why a run ended as it did."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import load_config_file
from pytest_ooda.loop import run_procedure
from pytest_ooda.results import UNMET, classify_outcome, ended_because, expected_status
from pytest_ooda.scenario import load_scenario_text

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config
    from pytest_ooda.plugin import ScriptFactory

CONFIG = """\
procedures:
  greet:
    act:
      - content: "Greet. <promise>SUCCESS</promise> when done."
"""


@pytest.fixture
def config(tmp_path: Path) -> Config:
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    return load_config_file(tmp_path / "ooda-config.yml")


@pytest.mark.parametrize(
    ("scenario", "outputs", "outcome"),
    [
        ("procedure: greet\n", ["<promise>SUCCESS</promise>"], "success"),
        ("procedure: greet\n", ["still working"], "failure"),
        ("procedure: greet\nexpect: {status: max-iters}\n", ["still working"], "success"),
        (
            "procedure: greet\nexpect: {status: success, iterations: 2}\n",
            ["<promise>SUCCESS</promise>"],
            "failure",
        ),
        (
            "procedure: greet\nexpect: {files: {X.md: exists}}\n",
            ["<promise>SUCCESS</promise>"],
            "failure",
        ),
    ],
)
def test_what_counts_as_a_success(
    config: Config,
    ooda_script: ScriptFactory,
    tmp_path: Path,
    scenario: str,
    outputs: list[str],
    outcome: str,
) -> None:
    result = run_procedure(
        config, "greet", backend=ooda_script(outputs), max_iterations=1, workdir=tmp_path
    )
    parsed = load_scenario_text(scenario, path="s.yml")
    problems = parsed.check(result, tmp_path)
    assert classify_outcome(parsed, result, problems) == (outcome, None)


def test_the_infrastructure_s_faults_are_errors_whatever_the_expectations_say(
    config: Config, ooda_script: ScriptFactory, tmp_path: Path
) -> None:
    result = run_procedure(
        config,
        "greet",
        backend=ooda_script(["<promise>SUCCESS</promise>"]),
        max_iterations=1,
        workdir=tmp_path,
    )
    scenario = load_scenario_text("procedure: greet\n", path="s.yml")
    assert classify_outcome(scenario, result, (), infra_error="sandbox: no daemon") == (
        "error",
        "sandbox: no daemon",
    )
    # A judge that gave no answer on a run that met everything else measured nothing.
    assert classify_outcome(scenario, result, (), judge_error="judge: timed out") == (
        "error",
        "judge: timed out",
    )
    # One that missed another expectation failed whatever the judge said.
    assert classify_outcome(scenario, result, ("x",), judge_error="judge: timed out") == (
        "failure",
        None,
    )


@pytest.mark.parametrize(
    ("outcome", "status", "declared", "why"),
    [
        ("success", "success", None, None),
        ("success", "max-iters", "max-iters", "max-iters"),
        ("failure", "max-iters", None, "max-iters"),
        ("failure", "success", None, UNMET),
        ("failure", "aborted", "aborted", UNMET),
        ("error", "aborted", None, None),
    ],
)
def test_why_a_run_ended_as_it_did(
    outcome: str, status: str, declared: str | None, why: str | None
) -> None:
    assert ended_because(outcome, status, declared) == why  # type: ignore[arg-type]


def test_a_run_is_expected_to_succeed_unless_its_scenario_says_otherwise() -> None:
    assert expected_status(None) == "success"
    assert expected_status("max-iters") == "max-iters"
