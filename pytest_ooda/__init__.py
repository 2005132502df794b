"""pytest-ooda: compose, run and test OODA prompt procedures for AI coding agents.

The public API: load the merged configuration, pick a procedure, compose its prompt::

    from pytest_ooda import load_config, assemble_prompt
    config = load_config()
    print(assemble_prompt(config.procedure("build")))

Every name is resolved on first use, so ``import pytest_ooda`` (and the pytest plugin,
which imports this package first) costs almost nothing until the library is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
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
    from pytest_ooda.plugin.fixtures import HttpAIStub, Runner, ScriptFactory, WorkspaceFactory

    compose_prompt = assemble_prompt

#: Public name -> the module that defines it.
_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
            "FragmentUse",
            "MappedText",
            "Segment",
            "add_use_observer",
            "assemble_prompt",
            "assemble_prompt_mapped",
            "compose_phase",
            "compose_phase_mapped",
            "render_action",
        ),
        "pytest_ooda.compose",
    ),
    **dict.fromkeys(
        (
            "PHASES",
            "ApiSettings",
            "Config",
            "FragmentAction",
            "Location",
            "LoopSettings",
            "Procedure",
            "Provenance",
            "RunSettings",
            "load_builtin_config",
            "load_config",
            "load_config_file",
            "resolve_run_settings",
        ),
        "pytest_ooda.config",
    ),
    **dict.fromkeys(
        (
            "BackendError",
            "ConfigError",
            "FragmentError",
            "OodaError",
            "OodaWarning",
            "ScenarioError",
            "TemplateError",
        ),
        "pytest_ooda.errors",
    ),
    "LoopResult": "pytest_ooda.loop",
    "run_procedure": "pytest_ooda.loop",
    **dict.fromkeys(
        ("HttpAIStub", "Runner", "ScriptFactory", "WorkspaceFactory"),
        "pytest_ooda.plugin.fixtures",
    ),
}
#: Other spellings of a public name.
_ALIASES = {"compose_prompt": "assemble_prompt"}


def __getattr__(name: str) -> Any:
    target = _ALIASES.get(name, name)
    module = _LAZY.get(target)
    if module is None:
        raise AttributeError(f"module 'pytest_ooda' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), target)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_ALIASES})


__all__ = [
    "PHASES",
    "ApiSettings",
    "BackendError",
    "Config",
    "ConfigError",
    "FragmentAction",
    "FragmentError",
    "FragmentUse",
    "HttpAIStub",
    "Location",
    "LoopResult",
    "LoopSettings",
    "MappedText",
    "OodaError",
    "OodaWarning",
    "Procedure",
    "Provenance",
    "RunSettings",
    "Runner",
    "ScenarioError",
    "ScriptFactory",
    "Segment",
    "TemplateError",
    "WorkspaceFactory",
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
