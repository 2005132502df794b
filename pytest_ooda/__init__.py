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
    )
    from pytest_ooda.compose import (
        MappedText as MappedText,
    )
    from pytest_ooda.compose import (
        Segment as Segment,
    )
    from pytest_ooda.compose import (
        add_use_observer as add_use_observer,
    )
    from pytest_ooda.compose import (
        assemble_prompt as assemble_prompt,
    )
    from pytest_ooda.compose import (
        assemble_prompt_mapped as assemble_prompt_mapped,
    )
    from pytest_ooda.compose import (
        compose_phase as compose_phase,
    )
    from pytest_ooda.compose import (
        compose_phase_mapped as compose_phase_mapped,
    )
    from pytest_ooda.compose import (
        render_action as render_action,
    )
    from pytest_ooda.config import (
        PHASES as PHASES,
    )
    from pytest_ooda.config import (
        ApiSettings as ApiSettings,
    )
    from pytest_ooda.config import (
        Config as Config,
    )
    from pytest_ooda.config import (
        FragmentAction as FragmentAction,
    )
    from pytest_ooda.config import (
        Location as Location,
    )
    from pytest_ooda.config import (
        LoopSettings as LoopSettings,
    )
    from pytest_ooda.config import (
        Procedure as Procedure,
    )
    from pytest_ooda.config import (
        Provenance as Provenance,
    )
    from pytest_ooda.config import (
        RunSettings as RunSettings,
    )
    from pytest_ooda.config import (
        load_builtin_config as load_builtin_config,
    )
    from pytest_ooda.config import (
        load_config as load_config,
    )
    from pytest_ooda.config import (
        load_config_file as load_config_file,
    )
    from pytest_ooda.config import (
        resolve_run_settings as resolve_run_settings,
    )
    from pytest_ooda.errors import (
        BackendError as BackendError,
    )
    from pytest_ooda.errors import (
        ConfigError as ConfigError,
    )
    from pytest_ooda.errors import (
        FragmentError as FragmentError,
    )
    from pytest_ooda.errors import (
        OodaError as OodaError,
    )
    from pytest_ooda.errors import (
        OodaWarning as OodaWarning,
    )
    from pytest_ooda.errors import (
        ScenarioError as ScenarioError,
    )
    from pytest_ooda.errors import (
        TemplateError as TemplateError,
    )
    from pytest_ooda.loop import LoopResult as LoopResult
    from pytest_ooda.loop import run_procedure as run_procedure
    from pytest_ooda.plugin import (
        HttpAIStub as HttpAIStub,
    )
    from pytest_ooda.plugin import (
        Runner as Runner,
    )
    from pytest_ooda.plugin import (
        ScriptFactory as ScriptFactory,
    )
    from pytest_ooda.plugin import (
        WorkspaceFactory as WorkspaceFactory,
    )

    compose_prompt = assemble_prompt
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
