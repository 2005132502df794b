"""pytest-ooda: compose, run and test OODA prompt procedures for AI coding agents.

The public API: load the merged configuration, pick a procedure, compose its prompt::

    from pytest_ooda import load_config, assemble_prompt
    config = load_config()
    print(assemble_prompt(config.procedure("build")))
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

from pytest_ooda.compose import (
    FragmentUse,
    MappedText,
    Segment,
    add_use_observer,
    assemble_prompt,
    assemble_prompt_mapped,
    compose_phase,
    compose_phase_mapped,
    render_action,
)
from pytest_ooda.config import (
    PHASES,
    ApiSettings,
    Config,
    FragmentAction,
    Location,
    LoopSettings,
    Procedure,
    Provenance,
    RunSettings,
    load_builtin_config,
    load_config,
    load_config_file,
    resolve_run_settings,
)
from pytest_ooda.errors import (
    BackendError,
    ConfigError,
    FragmentError,
    OodaError,
    OodaWarning,
    ScenarioError,
    TemplateError,
)

# Names provided by modules that import heavier dependencies; resolved on first use so
# `import pytest_ooda` stays cheap and does not depend on them.
_LAZY = {
    "run_procedure": "pytest_ooda.loop",
    "LoopResult": "pytest_ooda.loop",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_ooda' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


compose_prompt = assemble_prompt

__all__ = [
    "PHASES",
    "ApiSettings",
    "BackendError",
    "Config",
    "ConfigError",
    "FragmentAction",
    "FragmentError",
    "FragmentUse",
    "Location",
    "LoopResult",
    "LoopSettings",
    "MappedText",
    "OodaError",
    "OodaWarning",
    "Procedure",
    "Provenance",
    "RunSettings",
    "ScenarioError",
    "Segment",
    "TemplateError",
    "__version__",
    "add_use_observer",
    "assemble_prompt",
    "assemble_prompt_mapped",
    "compose_phase",
    "compose_phase_mapped",
    "compose_prompt",
    "load_builtin_config",
    "load_config",
    "load_config_file",
    "render_action",
    "resolve_run_settings",
    "run_procedure",
]
