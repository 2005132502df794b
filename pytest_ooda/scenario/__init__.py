"""Scenario files: load/validate/save, record modes, redaction on write, expectations, drift.

A scenario is a recorded or hand-written transcript of a loop run (see the plugin spec,
§ Scenarios): per iteration the output, exit code, prompt hash and — in recordings — the
workspace changes the agent made. The contract is this module: :mod:`.model` (the data
and the ``expect`` checks), :mod:`.schema` (loading, every mistake a located
``ScenarioError``), :mod:`.store` (writing back atomically, secrets redacted),
:mod:`.record` (record modes, a run into a recording), :mod:`.drift` (recorded vs current
prompts) and :mod:`.replay` (a scenario served through the real loop runner — the one
path ``ooda run --replay`` and the pytest plugin share).
"""

from __future__ import annotations

from pytest_ooda._types import RECORD_MODES
from pytest_ooda.facts import CommandOutcome
from pytest_ooda.scenario.drift import (
    Drift,
    changed_sources,
    check_drift,
    detect_drift,
)
from pytest_ooda.scenario.drive import TriggerCase, Triggers
from pytest_ooda.scenario.fired import Assertion
from pytest_ooda.scenario.locate import (
    declared_values,
    declared_workspace,
    load_for,
    loose_scenario_error,
    loose_scenario_files,
    workspace_of,
)
from pytest_ooda.scenario.model import (
    MAX_REPEAT,
    Assessment,
    Expect,
    FileCheck,
    Scenario,
    ScenarioIteration,
    assert_expectations,
    sha256_text,
)
from pytest_ooda.scenario.record import (
    Recorder,
    needs_recording,
    scenario_from_result,
)
from pytest_ooda.scenario.replay import Replayed, agent_cassette, replay_scenario
from pytest_ooda.scenario.replay_check import (
    ReplayCheck,
    check_replay,
)
from pytest_ooda.scenario.report import failure_text
from pytest_ooda.scenario.runs import (
    MaterialDir,
    for_trigger,
    material_files,
    materialize,
    run_material,
    scenario_config,
    workspace_material,
)
from pytest_ooda.scenario.schema import (
    load_scenario,
    load_scenario_text,
)
from pytest_ooda.scenario.store import (
    check_writable,
    redact_scenario,
    save_scenario,
)

__all__ = [
    "MAX_REPEAT",
    "RECORD_MODES",
    "Assertion",
    "Assessment",
    "CommandOutcome",
    "Drift",
    "Expect",
    "FileCheck",
    "MaterialDir",
    "Recorder",
    "ReplayCheck",
    "Replayed",
    "Scenario",
    "ScenarioIteration",
    "TriggerCase",
    "Triggers",
    "agent_cassette",
    "assert_expectations",
    "changed_sources",
    "check_drift",
    "check_replay",
    "check_writable",
    "declared_values",
    "declared_workspace",
    "detect_drift",
    "failure_text",
    "for_trigger",
    "load_for",
    "load_scenario",
    "load_scenario_text",
    "loose_scenario_error",
    "loose_scenario_files",
    "material_files",
    "materialize",
    "needs_recording",
    "redact_scenario",
    "replay_scenario",
    "run_material",
    "save_scenario",
    "scenario_config",
    "scenario_from_result",
    "sha256_text",
    "workspace_material",
    "workspace_of",
]
