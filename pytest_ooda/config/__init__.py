"""Configuration: the file schema, the tiers and their merge, provenance, run settings.

Tiers, lowest first: built-in defaults and aliases (code), built-in procedures
(``procedures/builtin.yml``), the global config, the workspace config, ``OODA_*``
environment variables, explicit overrides (CLI flags / pytest options). Everything is
validated while loading so that a broken config fails before any AI command runs, with
an ``OodaError`` naming ``file:line:col``.

This module is the package's contract; the work lives in :mod:`.model` (the data
types), :mod:`.schema` (keys, defaults, checks), :mod:`.parse` (one file into a layer),
:mod:`.tiers` (global file, environment, overrides), :mod:`.merge` (layers into a
``Config``), :mod:`.load` (the entry points) and :mod:`.run_settings`.
"""

from __future__ import annotations

from pytest_ooda._types import PHASES
from pytest_ooda._util import display_path
from pytest_ooda.config.load import (
    check_config_file,
    load_builtin_config,
    load_config,
    load_config_file,
    workspace_config_file,
)
from pytest_ooda.config.model import (
    ApiSettings,
    BrokenProcedure,
    Config,
    FragmentAction,
    Location,
    LoopSettings,
    MaterialFile,
    Procedure,
    Provenance,
    RedactSettings,
    RetrySettings,
    RunSettings,
)
from pytest_ooda.config.run_settings import (
    ScenarioTier,
    builtin_alias_output,
    infer_ai_output,
    no_ai_error,
    resolve_run_settings,
    resolve_sandbox,
)
from pytest_ooda.config.schema import (
    API_KEYS,
    API_PROVIDERS,
    BUILTIN_ALIASES,
    CONFIG_FILENAME,
    ENV_VARS,
    GO_TYPED_PARAMETERS,
    LOOP_DEFAULTS,
    LOOP_KEYS,
    PROCEDURE_KEYS,
    ROODA_CONFIG_FILENAME,
    TOP_LEVEL_KEYS,
    _Invalid,
    check_api_value,
    check_retry,
    located_template_error,
)
from pytest_ooda.config.tiers import (
    command_line_overrides,
    global_config_path,
)

__all__ = [
    "API_KEYS",
    "API_PROVIDERS",
    "BUILTIN_ALIASES",
    "CONFIG_FILENAME",
    "ENV_VARS",
    "GO_TYPED_PARAMETERS",
    "LOOP_DEFAULTS",
    "LOOP_KEYS",
    "PHASES",
    "PROCEDURE_KEYS",
    "ROODA_CONFIG_FILENAME",
    "TOP_LEVEL_KEYS",
    "ApiSettings",
    "BrokenProcedure",
    "Config",
    "FragmentAction",
    "Location",
    "LoopSettings",
    "MaterialFile",
    "Procedure",
    "Provenance",
    "RedactSettings",
    "RetrySettings",
    "RunSettings",
    "ScenarioTier",
    "_Invalid",
    "builtin_alias_output",
    "check_api_value",
    "check_config_file",
    "check_retry",
    "command_line_overrides",
    "display_path",
    "global_config_path",
    "infer_ai_output",
    "load_builtin_config",
    "load_config",
    "load_config_file",
    "located_template_error",
    "no_ai_error",
    "resolve_run_settings",
    "resolve_sandbox",
    "workspace_config_file",
]
