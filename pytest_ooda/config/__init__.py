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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda._types import PHASES as PHASES
    from pytest_ooda._util import display_path as display_path
    from pytest_ooda.config.load import (
        check_config_file as check_config_file,
        load_builtin_config as load_builtin_config,
        load_config as load_config,
        load_config_file as load_config_file,
        workspace_config_file as workspace_config_file,
    )
    from pytest_ooda.config.model import (
        ApiSettings as ApiSettings,
        BrokenProcedure as BrokenProcedure,
        Config as Config,
        FragmentAction as FragmentAction,
        Location as Location,
        LoopSettings as LoopSettings,
        Procedure as Procedure,
        Provenance as Provenance,
        RedactSettings as RedactSettings,
        RetrySettings as RetrySettings,
        RunSettings as RunSettings,
    )
    from pytest_ooda.config.run_settings import (
        infer_ai_output as infer_ai_output,
        resolve_run_settings as resolve_run_settings,
        resolve_sandbox as resolve_sandbox,
    )
    from pytest_ooda.config.schema import (
        API_KEYS as API_KEYS,
        API_PROVIDERS as API_PROVIDERS,
        BUILTIN_ALIAS_OUTPUTS as BUILTIN_ALIAS_OUTPUTS,
        BUILTIN_ALIASES as BUILTIN_ALIASES,
        CONFIG_FILENAME as CONFIG_FILENAME,
        ENV_VARS as ENV_VARS,
        GO_TYPED_PARAMETERS as GO_TYPED_PARAMETERS,
        LOOP_DEFAULTS as LOOP_DEFAULTS,
        LOOP_KEYS as LOOP_KEYS,
        PROCEDURE_KEYS as PROCEDURE_KEYS,
        ROODA_CONFIG_FILENAME as ROODA_CONFIG_FILENAME,
        TOP_LEVEL_KEYS as TOP_LEVEL_KEYS,
        _Invalid as _Invalid,
        check_api_value as check_api_value,
        check_retry as check_retry,
        located_template_error as located_template_error,
    )
    from pytest_ooda.config.tiers import (
        command_line_overrides as command_line_overrides,
        global_config_path as global_config_path,
    )
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())
