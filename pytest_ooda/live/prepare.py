"""The first step of a live run: what it needs before it starts — the scenario, the
config, the AI command (``resolve_ai``), the redactor and the recorder — read once per
process while the files they come from are unchanged."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_ooda.errors import ConfigError, NoAICommandError, OodaWarning

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config
    from pytest_ooda.evaluate import AiIdentity, FragmentHash
    from pytest_ooda.live.settings import LiveSettings
    from pytest_ooda.redact import Redactor
    from pytest_ooda.scenario import Recorder, Scenario

__all__ = ["NO_AI_COMMAND", "Prepared", "prepare", "resolve_ai"]

NO_AI_COMMAND = (
    "no AI command configured for live runs; set one of:\n"
    "  - pytest --ooda-ai-cmd='my-cli -p' or --ooda-ai-cmd-alias=NAME "
    "(claude, kiro-cli, copilot, cursor-agent, or your ai_cmd_aliases)\n"
    "  - OODA_LOOP_AI_CMD or OODA_LOOP_AI_CMD_ALIAS in the environment\n"
    "  - loop.ai_cmd, loop.ai_cmd_alias or loop.ai_api in ooda-config.yml "
    "(the workspace file, --ooda-config, or the global $OODA_CONFIG_HOME/ooda-config.yml)\n"
    "  - ai_cmd, ai_cmd_alias or ai_api on the procedure itself"
)


@dataclass
class Prepared:
    """What a run needs before it starts."""

    scenario: Scenario
    config: Config
    ai_cmd: str | None
    ai_cmd_alias: str | None
    identity: AiIdentity
    fragments: tuple[FragmentHash, ...]
    redactor: Redactor
    recorder: Recorder
    warnings: list[OodaWarning] = field(default_factory=list)


def _workspace_config(settings: LiveSettings, collected: Path) -> Config | None:
    """The session's workspace config, when it is a different file from ``collected``."""
    from pytest_ooda.config import CONFIG_FILENAME, load_config

    candidate = settings.config_file or settings.root / CONFIG_FILENAME
    if not candidate.is_file() or candidate.resolve() == collected.resolve():
        return None
    return load_config(candidate, cwd=settings.root)


def resolve_ai(
    config: Config, procedure: str, settings: LiveSettings, collected: Path
) -> tuple[str | None, str | None]:
    """The ``(ai_cmd, ai_cmd_alias)`` overrides for a live run; ``NoAICommandError``
    when nothing is configured.

    The collected file's own settings (and the environment, global config, and options)
    come first; the project's ``ooda-config.yml`` loop settings fill in when the
    procedure lives in another file.
    """
    from pytest_ooda.config import resolve_run_settings

    ai_cmd, alias = settings.ai_cmd, settings.ai_cmd_alias
    try:
        run = resolve_run_settings(
            config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias, require_ai=False
        )
    except ConfigError as error:
        # The library names `ooda run`'s flags; say them as this caller spells them.
        if error.message.startswith("--ai-cmd"):
            raise error.relocated(message=settings.flag_prefix + error.message[2:]) from None
        raise
    if run.ai_cmd is not None or run.ai_api is not None:
        return ai_cmd, alias
    workspace = _workspace_config(settings, collected)
    if workspace is not None:
        if workspace.loop.ai_cmd is not None:
            return workspace.loop.ai_cmd, None
        if workspace.loop.ai_cmd_alias is not None:
            return None, workspace.loop.ai_cmd_alias
    raise NoAICommandError(NO_AI_COMMAND)


@dataclass(frozen=True)
class _Inputs:
    """What every run of one scenario under one session's settings shares: read once
    per process while the files it comes from are unchanged."""

    scenario: Scenario
    config: Config
    ai_cmd: str | None
    ai_cmd_alias: str | None
    identity: AiIdentity
    redactor: Redactor


#: ``_Inputs`` by what they were made from; a run of a fast agent costs little more than
#: loading them, so repeats reuse them.
_INPUTS: dict[tuple[object, ...], _Inputs] = {}
_INPUTS_KEPT = 64


def _stat_key(path: Path | None) -> tuple[object, ...]:
    if path is None:
        return ()
    try:
        info = path.stat()
    except OSError:
        return (str(path),)
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ino)


def _inputs_key(
    collected: Path, procedure: str, path: Path, settings: LiveSettings
) -> tuple[object, ...]:
    """Everything the inputs depend on: the files (by stat), the environment's config
    variables and the global config file, and the session's settings."""
    from pytest_ooda.config import global_config_path

    environment = tuple(
        sorted(
            (name, value)
            for name, value in os.environ.items()
            if name.startswith(("OODA_", "ROODA_")) or name in ("XDG_CONFIG_HOME", "HOME")
        )
    )
    workspace = settings.config_file or settings.root / "ooda-config.yml"
    return (
        _stat_key(collected),
        procedure,
        _stat_key(path),
        _stat_key(workspace),
        _stat_key(global_config_path(os.environ)),
        environment,
        settings,
    )


def _load_inputs(collected: Path, procedure: str, path: Path, settings: LiveSettings) -> _Inputs:
    from pytest_ooda.config import command_line_overrides, load_config, resolve_run_settings
    from pytest_ooda.evaluate import ai_identity
    from pytest_ooda.live.variant import variant_config
    from pytest_ooda.redact import Redactor
    from pytest_ooda.scenario import load_for

    key = _inputs_key(collected, procedure, path, settings)
    found = _INPUTS.get(key)
    if found is not None:
        return found
    scenario = load_for(procedure, path)
    overrides = command_line_overrides(prompt_format=settings.prompt_format)
    config = variant_config(
        load_config(collected, cwd=settings.root, overrides=overrides), procedure, settings
    )
    ai_cmd, alias = resolve_ai(config, procedure, settings, collected)
    identity = ai_identity(
        resolve_run_settings(config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias)
    )
    redactor = Redactor(
        os.environ, extra_patterns=config.redact.patterns, extra_env_names=config.redact.env
    )
    inputs = _Inputs(scenario, config, ai_cmd, alias, identity, redactor)
    if len(_INPUTS) >= _INPUTS_KEPT:
        _INPUTS.clear()
    _INPUTS[key] = inputs
    return inputs


def prepare(
    collected: Path,
    procedure: str,
    path: Path,
    settings: LiveSettings,
    *,
    scenario: Scenario | None,
    config: Config | None,
    record_to: Path | None,
) -> Prepared:
    from pytest_ooda.config import command_line_overrides, load_config, resolve_run_settings
    from pytest_ooda.evaluate import ai_identity, fragment_hashes
    from pytest_ooda.live.variant import variant_config
    from pytest_ooda.redact import Redactor
    from pytest_ooda.scenario import Recorder, load_for

    if scenario is None and config is None:
        inputs = _load_inputs(collected, procedure, path, settings)
    else:
        if scenario is None:
            scenario = load_for(procedure, path)
        if config is None:
            overrides = command_line_overrides(prompt_format=settings.prompt_format)
            config = load_config(collected, cwd=settings.root, overrides=overrides)
        config = variant_config(config, procedure, settings)
        ai_cmd, alias = resolve_ai(config, procedure, settings, collected)
        inputs = _Inputs(
            scenario,
            config,
            ai_cmd,
            alias,
            ai_identity(resolve_run_settings(config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias)),
            Redactor(
                os.environ,
                extra_patterns=config.redact.patterns,
                extra_env_names=config.redact.env,
            ),
        )
    recorder = Recorder(
        inputs.scenario,
        settings.record_mode,
        path=record_to,
        env=os.environ,
        redact=inputs.config.redact,
    )
    return Prepared(
        scenario=inputs.scenario,
        config=inputs.config,
        ai_cmd=inputs.ai_cmd,
        ai_cmd_alias=inputs.ai_cmd_alias,
        identity=inputs.identity,
        # Per run: a fragment file edited between runs shows in the record.
        fragments=fragment_hashes(inputs.config.procedure(procedure)),
        redactor=inputs.redactor,
        recorder=recorder,
    )
