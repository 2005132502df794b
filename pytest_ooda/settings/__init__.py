"""Where a setting lives: the one table of the settings a pytest session or an
``ooda run`` decides for its runs, and the frozen value both front ends decide them
into and hand to :func:`pytest_ooda.live.plan_run`.

Each row of :data:`SETTINGS` (a :class:`Setting`, in :mod:`.table`) holds a setting's
name, its check (:mod:`.checks`), its pytest flag, its ``ooda run`` flag, its ini key,
the environment variable a front end reads for it, the config key it sets and its help.
The plugin's ``pytest_addoption`` and its ini/environment reader, and ``ooda run``'s
argparse arguments, are generated from the table; each front end finds each setting's
value as given (:class:`Given`) and :func:`decide` checks them all alike, so a mistake
reads the same from both, a near miss offered.

A setting acts in one of three places: a ``config`` row is the command line's tier of
that ``loop:`` key wherever the config is read (prompts, snapshots, plans); a ``run``
row overrides the run setting ``resolve_run_settings`` takes by that keyword (the loop,
the agent, the sandbox), through ``plan_run``; any other row is read where it acts,
``settings[ROW]``. A new setting is one row plus that place.

Cheap to import: registering the plugin's options costs a pytest session this package
and the vocabularies; a check that needs the library (a sandbox kind, a variant, a lint
rule) imports it when it has a value to check.
"""

from __future__ import annotations

from pytest_ooda.settings.session import (
    DEFAULT_RESULTS_DIR,
    Given,
    SessionSettings,
    Setting,
    choice,
)
from pytest_ooda.settings.table import (
    AI_CMD,
    AI_CMD_ALIAS,
    AI_OUTPUT,
    BUDGET,
    BUDGET_TOKENS,
    BUILTIN,
    CHANGED,
    CONFIG,
    CONTEXT,
    DRIFT,
    EXECUTOR,
    FRAGMENT_COVERAGE,
    LINT_SEVERITY,
    MATERIAL_DIRS,
    MAX_CONCURRENT,
    MAX_COST,
    MAX_ITERATIONS,
    MAX_TOKENS,
    PROCEDURE_FILES,
    PROMPT_FORMAT,
    RECORD_API,
    RECORD_FAILURES,
    RECORD_MODE,
    REGRADE,
    REPEAT,
    REPLAY,
    REPLAY_COMMANDS,
    RESULTS,
    RESUME,
    RETRIES,
    SANDBOX,
    SCENARIO_DIR,
    SETTINGS,
    SHARD,
    SHIP,
    STOP_EARLY,
    UNLIMITED,
    VARIANT,
    decide,
    session_settings,
)

__all__ = [
    "AI_CMD",
    "AI_CMD_ALIAS",
    "AI_OUTPUT",
    "BUDGET",
    "BUDGET_TOKENS",
    "BUILTIN",
    "CHANGED",
    "CONFIG",
    "CONTEXT",
    "DEFAULT_RESULTS_DIR",
    "DRIFT",
    "EXECUTOR",
    "FRAGMENT_COVERAGE",
    "LINT_SEVERITY",
    "MATERIAL_DIRS",
    "MAX_CONCURRENT",
    "MAX_COST",
    "MAX_ITERATIONS",
    "MAX_TOKENS",
    "PROCEDURE_FILES",
    "PROMPT_FORMAT",
    "RECORD_API",
    "RECORD_FAILURES",
    "RECORD_MODE",
    "REGRADE",
    "REPEAT",
    "REPLAY",
    "REPLAY_COMMANDS",
    "RESULTS",
    "RESUME",
    "RETRIES",
    "SANDBOX",
    "SCENARIO_DIR",
    "SETTINGS",
    "SHARD",
    "SHIP",
    "STOP_EARLY",
    "UNLIMITED",
    "VARIANT",
    "Given",
    "SessionSettings",
    "Setting",
    "choice",
    "decide",
    "session_settings",
]
