"""The field-by-field merge of every tier into one :class:`Config`, with provenance
and a location for every setting."""

from __future__ import annotations

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
from pytest_ooda.errors import ConfigError, ConfigWarning

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


def merge_layers(
    layers: list[Layer], env_loop: dict[str, Setting], cli_loop: dict[str, Setting]
) -> Config:
    provenance: dict[str, Provenance] = {}
    loop: dict[str, Setting] = {
        key: Setting(value, None, Provenance("default")) for key, value in LOOP_DEFAULTS.items()
    }
    aliases: dict[str, Setting] = {
        name: Setting(command, None, Provenance("default"))
        for name, command in BUILTIN_ALIASES.items()
    }
    lint: dict[str, Setting] = {}
    procs: dict[str, RawProcedure] = {}
    broken: dict[str, BrokenProcedure] = {}
    warnings: list[ConfigWarning] = []
    for layer in layers:
        _update_loop(loop, layer.loop)
        aliases.update(layer.aliases)
        lint.update(layer.lint)
        warnings.extend(layer.warnings)
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
    _update_loop(loop, env_loop)
    _update_loop(loop, cli_loop)

    alias_map = MappingProxyType({name: s.value for name, s in aliases.items()})
    alias_setting = loop["ai_cmd_alias"]
    if alias_setting.value is not None and alias_setting.value not in alias_map:
        raise _alias_error(alias_setting.value, alias_setting, alias_map, "loop.ai_cmd_alias")

    locations: dict[str, Location] = {}

    def record(key: str, setting: Setting) -> None:
        provenance[key] = setting.provenance
        if setting.location is not None:
            locations[key] = setting.location

    for key, setting in loop.items():
        record(f"loop.{key}", setting)
    for name, setting in aliases.items():
        record(f"aliases.{name}", setting)
    for rule, setting in lint.items():
        record(f"lint.{rule}", setting)

    procedures: dict[str, Procedure] = {}
    for name, raw in procs.items():
        fields = raw.fields
        alias = fields.get("ai_cmd_alias")
        if alias is not None and alias.value not in alias_map:
            error = _alias_error(alias.value, alias, alias_map, f"procedure {name}: ai_cmd_alias")
            broken[name] = BrokenProcedure(name, error, raw.location)
            continue
        for key, setting in fields.items():
            record(f"procedures.{name}.{key}", setting)

        def get(key: str, default: Any = None, _fields: dict[str, Setting] = fields) -> Any:
            setting = _fields.get(key)
            return setting.value if setting is not None else default

        layout = _over_loop(fields, loop, "prompt_format")
        procedures[name] = Procedure(
            name=name,
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

    settings = LoopSettings(**{key: loop[key].value for key in LOOP_KEYS})
    return Config(
        loop=settings,
        aliases=alias_map,
        procedures=MappingProxyType(procedures),
        provenance=MappingProxyType(provenance),
        files=tuple(layer.path for layer in layers),
        warnings=tuple(warnings),
        lint=MappingProxyType({rule: s.value for rule, s in lint.items()}),
        redact=RedactSettings(
            patterns=tuple(p for layer in layers for p in layer.redact.patterns),
            env=tuple(name for layer in layers for name in layer.redact.env),
        ),
        locations=MappingProxyType(locations),
        broken=MappingProxyType(broken),
    )
