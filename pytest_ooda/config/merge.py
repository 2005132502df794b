"""The field-by-field merge of every tier into one :class:`Config`, with provenance
and a location for every setting."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import did_you_mean, display_path
from pytest_ooda.config.model import (
    BrokenProcedure,
    Config,
    Location,
    LoopSettings,
    Procedure,
    Provenance,
    RedactSettings,
)
from pytest_ooda.config.parse import Layer, RawProcedure, Setting
from pytest_ooda.config.schema import BUILTIN_ALIASES, LOOP_DEFAULTS, LOOP_KEYS
from pytest_ooda.errors import ConfigError, ConfigWarning, OodaWarning

if TYPE_CHECKING:
    from collections.abc import Mapping


def _alias_error(
    alias: str, setting: Setting, aliases: Mapping[str, str], where: str
) -> ConfigError:
    loc = setting.location
    hint = did_you_mean(alias, aliases, label="known aliases")
    message = f"{where}: unknown AI command alias {alias!r}"
    if loc is not None:
        return ConfigError(
            message, file=display_path(loc.file), line=loc.line, column=loc.column, hint=hint
        )
    source = setting.provenance.source or setting.provenance.tier
    if setting.provenance.tier == "env":
        message = f"environment variable {source}: unknown AI command alias {alias!r}"
    else:
        message = f"option {source}: unknown AI command alias {alias!r}"
    return ConfigError(message, hint=hint)


def _alias_warning(error: ConfigError) -> ConfigWarning:
    return ConfigWarning(
        f"{error.message} (a run of it will fail until the alias is defined)",
        file=error.file,
        line=error.line,
        column=error.column,
        hint=error.hint,
    )


def _update_loop(loop: dict[str, Setting], higher: Mapping[str, Setting]) -> None:
    """``loop.update(higher)``, except that a sandbox given as a kind name alone
    (``OODA_SANDBOX=docker``) keeps the options a lower tier gave that kind."""
    for key, setting in higher.items():
        below = loop.get(key)
        if key == "sandbox" and below is not None and below.value is not None:
            setting = Setting(
                setting.value.under(below.value), setting.location, setting.provenance
            )
        loop[key] = setting


def _over_loop(fields: dict[str, Setting], loop: dict[str, Setting], key: str) -> Setting:
    """A procedure-level setting that falls back to ``loop:``: a command-line choice of
    the loop key (``--prompt-format``) beats the procedure's own, which beats the loop's."""
    chosen = loop[key]
    if chosen.provenance.tier == "cli":
        return chosen
    return fields.get(key, chosen)


@dataclass
class _Tiers:
    """Every layer's settings folded together, a higher tier's over a lower one's."""

    loop: dict[str, Setting]
    aliases: dict[str, Setting]
    lint: dict[str, Setting] = field(default_factory=dict)
    procedures: dict[str, RawProcedure] = field(default_factory=dict)
    broken: dict[str, BrokenProcedure] = field(default_factory=dict)
    warnings: list[OodaWarning] = field(default_factory=list)


def _fold(
    layers: list[Layer], env_loop: dict[str, Setting], cli_loop: dict[str, Setting]
) -> _Tiers:
    default = Provenance("default")
    tiers = _Tiers(
        loop={key: Setting(value, None, default) for key, value in LOOP_DEFAULTS.items()},
        aliases={name: Setting(cmd, None, default) for name, cmd in BUILTIN_ALIASES.items()},
    )
    procs, broken = tiers.procedures, tiers.broken
    for layer in layers:
        _update_loop(tiers.loop, layer.loop)
        tiers.aliases.update(layer.aliases)
        tiers.lint.update(layer.lint)
        tiers.warnings.extend(layer.warnings)
        for name, failed in layer.broken.items():
            # A definition that failed in any tier leaves the merge unknowable.
            procs.pop(name, None)
            broken.setdefault(name, failed)
        for name, raw in layer.procedures.items():
            if name in broken:
                continue
            merged = procs.get(name)
            if merged is None:
                procs[name] = RawProcedure(name, raw.location, dict(raw.fields))
            else:
                merged.location = raw.location
                merged.fields.update(raw.fields)
    _update_loop(tiers.loop, env_loop)
    _update_loop(tiers.loop, cli_loop)
    return tiers


def _procedure(raw: RawProcedure, loop: dict[str, Setting]) -> Procedure:
    fields = raw.fields

    def get(key: str, default: Any = None) -> Any:
        setting = fields.get(key)
        return setting.value if setting is not None else default

    layout = _over_loop(fields, loop, "prompt_format")
    return Procedure(
        name=raw.name,
        display=get("display", ""),
        summary=get("summary", ""),
        description=get("description", ""),
        observe=get("observe", ()),
        orient=get("orient", ()),
        decide=get("decide", ()),
        act=get("act", ()),
        iteration_mode=get("iteration_mode"),
        default_max_iterations=get("default_max_iterations"),
        iteration_timeout=get("iteration_timeout"),
        max_output_buffer=get("max_output_buffer"),
        ai_cmd=get("ai_cmd"),
        ai_cmd_alias=get("ai_cmd_alias"),
        ai_api=get("ai_api"),
        ai_output=get("ai_output"),
        max_cost=get("max_cost"),
        max_tokens=get("max_tokens"),
        retry=get("retry"),
        location=raw.location,
        field_locations=MappingProxyType(
            {key: s.location for key, s in fields.items() if s.location is not None}
        ),
        prompt_format=layout.value,
        prompt_format_source=layout.provenance,
        sandbox=get("sandbox"),
    )


def merge_layers(
    layers: list[Layer], env_loop: dict[str, Setting], cli_loop: dict[str, Setting]
) -> Config:
    """The layers (lowest tier first), the environment's and the command line's ``loop:``
    settings merged into one :class:`Config`, each setting with its provenance and place."""
    tiers = _fold(layers, env_loop, cli_loop)
    loop = tiers.loop
    alias_map = MappingProxyType({name: s.value for name, s in tiers.aliases.items()})
    alias_setting = loop["ai_cmd_alias"]
    if alias_setting.value is not None and alias_setting.value not in alias_map:
        error = _alias_error(alias_setting.value, alias_setting, alias_map, "loop.ai_cmd_alias")
        if alias_setting.provenance.tier in ("cli", "env"):
            raise error
        # Only a run needs the alias: `ooda show`, `ooda lint` and the prompt snapshots
        # go on (the alias may be defined in a config they do not read); a run that
        # resolves it fails with this error, located.
        tiers.warnings.append(_alias_warning(error))

    provenance: dict[str, Provenance] = {}
    locations: dict[str, Location] = {}

    def record(prefix: str, settings: Mapping[str, Setting]) -> None:
        for key, setting in settings.items():
            provenance[f"{prefix}.{key}"] = setting.provenance
            if setting.location is not None:
                locations[f"{prefix}.{key}"] = setting.location

    record("loop", loop)
    record("aliases", tiers.aliases)
    record("lint", tiers.lint)
    procedures: dict[str, Procedure] = {}
    for name, raw in tiers.procedures.items():
        alias = raw.fields.get("ai_cmd_alias")
        if alias is not None and alias.value not in alias_map:
            error = _alias_error(alias.value, alias, alias_map, f"procedure {name}: ai_cmd_alias")
            tiers.warnings.append(_alias_warning(error))
        record(f"procedures.{name}", raw.fields)
        procedures[name] = _procedure(raw, loop)

    return Config(
        loop=LoopSettings(**{key: loop[key].value for key in LOOP_KEYS}),
        aliases=alias_map,
        procedures=MappingProxyType(procedures),
        provenance=MappingProxyType(provenance),
        files=tuple(layer.path for layer in layers),
        warnings=tuple(tiers.warnings),
        lint=MappingProxyType({rule: s.value for rule, s in tiers.lint.items()}),
        redact=RedactSettings(
            patterns=tuple(p for layer in layers for p in layer.redact.patterns),
            env=tuple(name for layer in layers for name in layer.redact.env),
        ),
        locations=MappingProxyType(locations),
        broken=MappingProxyType(tiers.broken),
        replay_normalise=tuple(rule for layer in layers for rule in layer.replay_normalise),
        material=MappingProxyType(
            {key: paths for layer in layers for key, paths in layer.material.items()}
        ),
    )
