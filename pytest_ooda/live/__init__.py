"""Live runs: one scenario run against the real AI command, end to end, without pytest.

The contract is this module. :mod:`.plan` holds the :class:`RunPlan` of one run and
:func:`plan_run`, the one place a run is decided from the session's settings
(:class:`pytest_ooda.settings.SessionSettings`), the config, the scenario and the
variant; :mod:`.run` the run itself (:func:`run_live` → :class:`LiveRun`, and
:func:`write_recording`); :mod:`.api` a run's model calls through the API proxy,
recorded into the scenario's cassette or answered from it (:class:`ApiPlan`);
:mod:`.canary` replays a cassette through the pinned agent and a new version of it
(``ooda canary``). Whether a run is a ``success``, a ``failure`` or an infrastructure
``error`` is :func:`pytest_ooda.results.classify_outcome`. The pytest plugin and ``ooda
run`` both plan with :func:`plan_run`, run with :func:`run_live` and only present what
it returns.
"""

from __future__ import annotations

from pytest_ooda.live.api import ApiOutcome, write_cassette_of
from pytest_ooda.live.canary import AgentReplay, CanaryResult, canary_scenario, new_command
from pytest_ooda.live.plan import NO_AI_COMMAND, ApiPlan, RunPlan, plan_run
from pytest_ooda.live.preflight import agent_refusal, root_refusal, sandbox_env
from pytest_ooda.live.report import agent_warnings
from pytest_ooda.live.run import (
    Held,
    LiveRun,
    Recording,
    run_live,
    run_preflight,
    unmade_run,
    write_recording,
)

__all__ = [
    "NO_AI_COMMAND",
    "AgentReplay",
    "ApiOutcome",
    "ApiPlan",
    "CanaryResult",
    "Held",
    "LiveRun",
    "Recording",
    "RunPlan",
    "agent_refusal",
    "agent_warnings",
    "canary_scenario",
    "new_command",
    "plan_run",
    "root_refusal",
    "run_live",
    "run_preflight",
    "sandbox_env",
    "unmade_run",
    "write_cassette_of",
    "write_recording",
]
