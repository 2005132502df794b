"""pytest-ooda: compose, run and test OODA prompt procedures for AI coding agents.

The public API: load the merged configuration, pick a procedure, compose its prompt::

    from pytest_ooda import load_config, assemble_prompt
    config = load_config()
    print(assemble_prompt(config.procedure("build")))

The names below are the library's; the fixtures' types (``Runner``, ``ScriptFactory``,
``WorkspaceFactory``, ``HttpAIStub``) are :mod:`pytest_ooda.plugin`'s, so that the
library and the ``ooda`` command never import pytest.
"""

from __future__ import annotations

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
from pytest_ooda.loop import LoopResult, run_procedure

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
