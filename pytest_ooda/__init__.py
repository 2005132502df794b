"""pytest-ooda: compose, run and test OODA prompt procedures for AI coding agents.

The root package holds the version and the error and warning trees (``except
pytest_ooda.OodaError``, ``-W error::pytest_ooda.OodaWarning``), and nothing else: the
pytest plugin and the ``ooda`` command are modules of this package, and every pytest
session of everyone who installs it imports this file first, so it imports no layer of
the library. Each layer is its own package, its public names in its ``__init__``::

    from pytest_ooda.config import load_config           # Config, Procedure, resolve_run_settings
    from pytest_ooda.compose import assemble_prompt      # compose_phase, MappedText
    from pytest_ooda.loop import LoopResult, run_procedure

    config = load_config()
    print(assemble_prompt(config.procedure("build")))

The fixtures' types (``Runner``, ``ScriptFactory``, ``WorkspaceFactory``,
``HttpAIStub``) are :mod:`pytest_ooda.plugin`'s, so that the library and the ``ooda``
command never import pytest.
"""

from __future__ import annotations

__version__ = "0.1.0"

from pytest_ooda.errors import (
    BackendError,
    ConfigError,
    FragmentError,
    OodaError,
    OodaWarning,
    ScenarioError,
    TemplateError,
)

__all__ = [
    "BackendError",
    "ConfigError",
    "FragmentError",
    "OodaError",
    "OodaWarning",
    "ScenarioError",
    "TemplateError",
]
