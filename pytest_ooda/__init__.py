"""pytest-ooda: compose, run and test OODA prompt procedures for AI coding agents.

The public API: load the merged configuration, pick a procedure, compose its prompt::

    from pytest_ooda import load_config, assemble_prompt
    config = load_config()
    print(assemble_prompt(config.procedure("build")))

Every name is declared once below and resolved on first use (see :mod:`._exports`), so
``import pytest_ooda`` (and the pytest plugin, which imports this package first) costs
almost nothing until the library is used.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.compose import (
        FragmentUse as FragmentUse,
        MappedText as MappedText,
        Segment as Segment,
        add_use_observer as add_use_observer,
        assemble_prompt as assemble_prompt,
        assemble_prompt_mapped as assemble_prompt_mapped,
        compose_phase as compose_phase,
        compose_phase_mapped as compose_phase_mapped,
        render_action as render_action,
    )
    from pytest_ooda.config import (
        PHASES as PHASES,
        ApiSettings as ApiSettings,
        Config as Config,
        FragmentAction as FragmentAction,
        Location as Location,
        LoopSettings as LoopSettings,
        Procedure as Procedure,
        Provenance as Provenance,
        RunSettings as RunSettings,
        load_builtin_config as load_builtin_config,
        load_config as load_config,
        load_config_file as load_config_file,
        resolve_run_settings as resolve_run_settings,
    )
    from pytest_ooda.errors import (
        BackendError as BackendError,
        ConfigError as ConfigError,
        FragmentError as FragmentError,
        OodaError as OodaError,
        OodaWarning as OodaWarning,
        ScenarioError as ScenarioError,
        TemplateError as TemplateError,
    )
    from pytest_ooda.loop import LoopResult as LoopResult, run_procedure as run_procedure
    from pytest_ooda.plugin import (
        HttpAIStub as HttpAIStub,
        Runner as Runner,
        ScriptFactory as ScriptFactory,
        WorkspaceFactory as WorkspaceFactory,
    )

    compose_prompt = assemble_prompt
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
