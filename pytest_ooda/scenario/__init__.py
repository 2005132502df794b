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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda._types import RECORD_MODES as RECORD_MODES
    from pytest_ooda.scenario.drift import (
        Drift as Drift,
        check_drift as check_drift,
        detect_drift as detect_drift,
    )
    from pytest_ooda.scenario.locate import load_for as load_for, workspace_of as workspace_of
    from pytest_ooda.scenario.model import (
        MAX_REPEAT as MAX_REPEAT,
        Assessment as Assessment,
        Expect as Expect,
        FileCheck as FileCheck,
        Scenario as Scenario,
        ScenarioIteration as ScenarioIteration,
        assert_expectations as assert_expectations,
        sha256_text as sha256_text,
    )
    from pytest_ooda.scenario.reader import load_examples as load_examples
    from pytest_ooda.scenario.record import (
        Recorder as Recorder,
        needs_recording as needs_recording,
        scenario_from_result as scenario_from_result,
    )
    from pytest_ooda.scenario.replay import Replayed as Replayed, replay_scenario as replay_scenario
    from pytest_ooda.scenario.replay_check import (
        ReplayCheck as ReplayCheck,
        check_replay as check_replay,
    )
    from pytest_ooda.scenario.report import failure_text as failure_text
    from pytest_ooda.scenario.schema import (
        load_scenario as load_scenario,
        load_scenario_text as load_scenario_text,
    )
    from pytest_ooda.scenario.store import (
        check_writable as check_writable,
        save_scenario as save_scenario,
    )
    from pytest_ooda.scenario.verify import CommandOutcome as CommandOutcome
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
