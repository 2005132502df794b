"""Live runs: one scenario run against the real AI command, end to end, without pytest.

The contract is this module. :mod:`.settings` holds :class:`LiveSettings` (what a
session decides for all its live runs), :mod:`.run` the run itself
(:func:`run_live` → :class:`LiveRun`); whether a run is a ``success``, a ``failure``
or an infrastructure ``error`` is :mod:`pytest_ooda.evaluate.outcome`'s rule. The
pytest plugin and ``ooda run --record`` both call :func:`run_live` and only present
what it returns.
"""

from __future__ import annotations

from pytest_ooda.live.preflight import agent_refusal, root_refusal, sandbox_env
from pytest_ooda.live.prepare import NO_AI_COMMAND, resolve_ai
from pytest_ooda.live.report import agent_warnings
from pytest_ooda.live.run import LiveRun, run_live
from pytest_ooda.live.settings import LiveSettings

__all__ = [
    "NO_AI_COMMAND",
    "LiveRun",
    "LiveSettings",
    "agent_refusal",
    "agent_warnings",
    "resolve_ai",
    "root_refusal",
    "run_live",
    "sandbox_env",
]
