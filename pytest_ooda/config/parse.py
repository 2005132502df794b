"""Reading one config file: its located YAML validated into a layer of settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda import fragments
from pytest_ooda._types import PHASES
from pytest_ooda._util import did_you_mean, display_path, type_name
from pytest_ooda.config.model import (
    ApiSettings,
    BrokenProcedure,
    FragmentAction,
    Location,
    Provenance,
    RedactSettings,
)
from pytest_ooda.config.schema import (
    _LINT_RULE,
    _LOOP_CHECKS,
    _PROCEDURE_CHECKS,
    _PROCEDURE_NAME,
    API_KEYS,
    API_PROVIDERS,
    EMPTY_MEANS_UNSET,
    FRAGMENT_KEYS,
    GO_TYPED_PARAMETERS,
    LINT_SEVERITIES,
    LOOP_KEYS,
    PROCEDURE_KEYS,
    REDACT_KEYS,
    ROODA_CONFIG_FILENAME,
    TOP_LEVEL_KEYS,
    ZERO_MEANS_UNSET_IN_ROODA,
    _check_choice,
    _check_command,
    _check_env_name,
    _check_positive_int,
    _check_positive_number,
    _check_price,
    _check_url,
    _Invalid,
    located_template_error,
)
from pytest_ooda.errors import (
    ConfigError,
    ConfigWarning,
    FragmentError,
    OodaError,
    OodaWarning,
    TemplateError,
)
from pytest_ooda.reader import Reader
from pytest_ooda.yamlnodes import (
    Mark,
    YamlMapping,
    YamlSequence,
    key_mark,
    to_plain,
    value_mark,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from pytest_ooda.replay_rules import ReplayRule
    from pytest_ooda.sandbox import SandboxSpec


@dataclass
class Setting:
    value: Any
    location: Location | None
    provenance: Provenance


@dataclass
class RawProcedure:
    name: str
    location: Location
    fields: dict[str, Setting]


@dataclass
class Layer:
    """One config file, validated but not yet merged."""

    path: Path
    tier: str
    loop: dict[str, Setting] = field(default_factory=dict)
    aliases: dict[str, Setting] = field(default_factory=dict)
    procedures: dict[str, RawProcedure] = field(default_factory=dict)
    lint: dict[str, Setting] = field(default_factory=dict)
    redact: RedactSettings = field(default_factory=RedactSettings)
    replay_normalise: tuple[ReplayRule, ...] = ()
    #: Each agent material section (``claude:``): the directories it names, resolved.
    material: dict[str, tuple[Path, ...]] = field(default_factory=dict)
    warnings: list[OodaWarning] = field(default_factory=list)
    #: Procedures whose definitions failed: each fails alone (the "blast radius").
    broken: dict[str, BrokenProcedure] = field(default_factory=dict)


class FileParser:
    """Validates one config file's located YAML into a :class:`Layer`.

    A file named ``rooda-config.yml`` is read leniently: rooda ignores keys it does not
    know, so there an unknown key is a located warning instead of an error.
    """

    def __init__(self, path: Path, tier: str) -> None:
        self.path = path
        self.tier = tier
        self.base_dir = path.parent
        self.display = display_path(path)
        self.lenient = path.name == ROODA_CONFIG_FILENAME
        self.read = Reader(self.display, ConfigError, ConfigWarning, lenient=self.lenient)

    def loc(self, mark: Mark) -> Location:
        return Location(self.path, mark.line, mark.column)

    def setting(self, value: Any, mapping: YamlMapping, key: Any) -> Setting:
        """``mapping[key]`` as read: the value, located at its key."""
        mark = key_mark(mapping, key)
        return Setting(value, self.loc(mark), Provenance(self.tier, self.path, mark.line))

    def parse(self, document: Any) -> Layer:
        layer = Layer(self.path, self.tier, warnings=self.read.warnings)
        if document is None:
            raise self.read.fail(
                "config file is empty",
                Mark(1, 1),
                "expected a mapping with any of: " + ", ".join(TOP_LEVEL_KEYS),
            )
        if not isinstance(document, YamlMapping):
            raise self.read.fail(
                f"the top level of a config file must be a mapping, got {type_name(document)}",
                getattr(document, "mark", Mark(1, 1)),
                "expected keys: " + ", ".join(TOP_LEVEL_KEYS),
            )
        from pytest_ooda.agents import MATERIAL_SECTIONS

        known = (*TOP_LEVEL_KEYS, *MATERIAL_SECTIONS)
        for key in document:
            if key in known:
                continue
            mark = key_mark(document, key)
            hint = did_you_mean(str(key), known, label="known top-level keys")
            self.read.warn(f"unknown top-level key {key!r} (ignored); {hint.splitlines()[0]}", mark)
        if document.get("loop") is not None:
            layer.loop = self.parse_loop(document["loop"], value_mark(document, "loop"))
        if document.get("ai_cmd_aliases") is not None:
            layer.aliases = self.parse_aliases(
                document["ai_cmd_aliases"], value_mark(document, "ai_cmd_aliases")
            )
        if document.get("lint") is not None:
            layer.lint = self.parse_lint(document["lint"], value_mark(document, "lint"))
        if document.get("redact") is not None:
            layer.redact = self.parse_redact(document["redact"], value_mark(document, "redact"))
        if document.get("replay_normalise") is not None:
            from pytest_ooda.replay_rules import read_rules

            layer.replay_normalise = read_rules(
                self.read,
                document["replay_normalise"],
                value_mark(document, "replay_normalise"),
                "replay_normalise",
            )
        for section in MATERIAL_SECTIONS:
            if document.get(section) is not None:
                layer.material[section] = self.parse_material(
                    section, document[section], value_mark(document, section)
                )
        if document.get("procedures") is not None:
            procs = self.read.mapping(
                document["procedures"], value_mark(document, "procedures"), "procedures"
            )
            for name, body in procs.items():
                try:
                    layer.procedures[name] = self.parse_procedure(name, body, procs)
                except OodaError as exc:
                    # One broken procedure must not take the others down with it.
                    label = name if isinstance(name, str) else str(name)
                    layer.broken[label] = BrokenProcedure(
                        label, exc, self.loc(key_mark(procs, name))
                    )
        return layer

    def parse_loop(self, value: Any, mark: Mark) -> dict[str, Setting]:
        loop = self.read.mapping(value, mark, "loop")
        ignored = self.read.keys(loop, LOOP_KEYS, "loop")
        out: dict[str, Setting] = {}
        for key, item in loop.items():
            if item is None or key in ignored or (key in EMPTY_MEANS_UNSET and item == ""):
                continue
            vmark = value_mark(loop, key)
            if self.lenient and key in ZERO_MEANS_UNSET_IN_ROODA and _is_zero(item):
                self.read.warn(
                    f"loop.{key}: 0 means not set (as in rooda): the default applies", vmark
                )
                continue
            parsed: Any
            if key == "ai_api":
                parsed = self.parse_api(item, vmark, "loop.ai_api")
            elif key == "sandbox":
                parsed = self.parse_sandbox(item, vmark, "loop.sandbox")
            else:
                parsed = self.check(_LOOP_CHECKS[key], item, vmark, f"loop.{key}")
            out[key] = self.setting(parsed, loop, key)
        return out

    def check(self, check: Callable[[Any], Any], value: Any, mark: Mark, where: str) -> Any:
        try:
            return check(value)
        except _Invalid as exc:
            raise self.read.fail(
                f"{where}: {exc.stated(type_name(value))}", mark, exc.hint
            ) from None

    def parse_material(self, section: str, value: Any, mark: Mark) -> tuple[Path, ...]:
        """An agent material section: a directory or a list of them (relative to this
        file), each one the agent's material (docs/claude-code.md)."""
        paths = []
        for index, (item, at) in enumerate(
            self.read.items(value, mark, section) if isinstance(value, list) else [(value, mark)]
        ):
            text = self.read.text(item, at, f"{section}[{index}]")
            path = (self.base_dir / text.strip()).resolve()
            if not text.strip() or not path.is_dir():
                raise self.read.fail(
                    f"{section}[{index}]: {text!r} is not a directory ({path})",
                    at,
                    f"name a plugin's directory or a .{section} directory, relative to this file",
                )
            paths.append(path)
        return tuple(paths)

    def parse_redact(self, value: Any, mark: Mark) -> RedactSettings:
        section = self.read.mapping(value, mark, "redact")
        self.read.keys(section, REDACT_KEYS, "redact")
        lists: dict[str, tuple[str, ...]] = {}
        for key in REDACT_KEYS:
            if section.get(key) is None:
                continue
            items, at = self.read.get(section, key)
            read = self.read.pattern if key == "patterns" else self.read.text
            found: list[str] = []
            for index, (item, item_mark) in enumerate(self.read.items(items, at, f"redact.{key}")):
                text = read(item, item_mark, f"redact.{key}[{index}]")
                if not text:
                    raise self.read.fail(
                        f"redact.{key}[{index}]: expected a non-empty string", item_mark
                    )
                found.append(text)
            lists[key] = tuple(found)
        return RedactSettings(**lists)

    def parse_sandbox(self, value: Any, mark: Mark, where: str) -> SandboxSpec:
        """A ``sandbox:`` value; a mistake is located at the option it is about."""
        from pytest_ooda.sandbox import OptionError, parse_spec

        try:
            return parse_spec(to_plain(value), base_dir=self.base_dir)
        except OptionError as exc:
            at = mark
            if exc.key is not None and isinstance(value, YamlMapping) and exc.key in value:
                at = value_mark(value, exc.key)
                where = f"{where}.{exc.key}"
            example = (
                "e.g. sandbox: bwrap, or sandbox: {kind: docker, image: python:3.12-slim}; "
                "see `ooda help sandbox`"
            )
            hint = f"{exc.hint}\n  {example}" if exc.hint else example
            raise self.read.fail(f"{where}: {exc.message}", at, hint) from None

    def parse_aliases(self, value: Any, mark: Mark) -> dict[str, Setting]:
        aliases = self.read.mapping(value, mark, "ai_cmd_aliases")
        out: dict[str, Setting] = {}
        for name, command in aliases.items():
            kmark = key_mark(aliases, name)
            if not isinstance(name, str) or not name.strip():
                raise self.read.fail(
                    f"ai_cmd_aliases: alias names must be non-empty strings, got {type_name(name)}",
                    kmark,
                )
            self.check(_check_command, command, value_mark(aliases, name), f"ai_cmd_aliases.{name}")
            out[name] = self.setting(command, aliases, name)
        return out

    def parse_lint(self, value: Any, mark: Mark) -> dict[str, Setting]:
        section = self.read.mapping(value, mark, "lint")
        out: dict[str, Setting] = {}
        for rule, severity in section.items():
            kmark = key_mark(section, rule)
            if not isinstance(rule, str) or not _LINT_RULE.match(rule):
                raise self.read.fail(
                    f"lint: a rule id must be a name like OODA201, got {type_name(rule)}", kmark
                )
            if isinstance(severity, bool) and severity is False:
                # YAML 1.1 reads a bare `off` as false; accept what the user meant.
                severity = "off"
            self.check(
                _check_choice(LINT_SEVERITIES), severity, value_mark(section, rule), f"lint.{rule}"
            )
            out[rule] = self.setting(severity, section, rule)
        return out

    def parse_api(self, value: Any, mark: Mark, where: str) -> ApiSettings:
        api = self.read.mapping(value, mark, where)
        self.read.keys(api, API_KEYS, where)
        for required in ("provider", "model"):
            if api.get(required) is None:
                raise self.read.fail(
                    f"{where}: missing required key {required!r}",
                    api.mark,
                    "an ai_api mapping needs at least provider (anthropic | openai) and model",
                )

        def get(key: str, check: Callable[[Any], Any]) -> Any:
            if api.get(key) is None:
                return None
            return self.check(check, api[key], value_mark(api, key), f"{where}.{key}")

        kwargs: dict[str, Any] = {
            "provider": get("provider", _check_choice(API_PROVIDERS)),
            "model": get("model", _check_command),
        }
        base_url = get("base_url", _check_url)
        if base_url is not None:
            kwargs["base_url"] = base_url.rstrip("/")
        api_key_env = get("api_key_env", _check_env_name)
        if api_key_env is not None:
            kwargs["api_key_env"] = api_key_env
        max_tokens = get("max_tokens", _check_positive_int)
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        timeout = get("timeout", _check_positive_number)
        if timeout is not None:
            kwargs["timeout"] = float(timeout)
        for price in ("price_input_per_mtok", "price_output_per_mtok"):
            amount = get(price, _check_price)
            if amount is not None:
                kwargs[price] = float(amount)
        return ApiSettings(**kwargs)

    def parse_procedure(self, name: Any, body: Any, procs: YamlMapping) -> RawProcedure:
        kmark = key_mark(procs, name)
        if not isinstance(name, str) or not _PROCEDURE_NAME.match(name):
            raise self.read.fail(
                f"invalid procedure name {name!r}",
                kmark,
                "procedure names are lower-case letters, digits and '-', "
                "starting with a letter or digit",
            )
        where = f"procedure {name}"
        raw = RawProcedure(name, self.loc(kmark), {})
        if body is None:
            return raw
        proc = self.read.mapping(body, value_mark(procs, name), where)
        # Every mistake of the procedure in one pass: each key read on its own, unknown
        # keys all named; the procedure's error carries the others (OodaError.also).
        collecting, self.read.collect = self.read.collect, not self.read.lenient
        try:
            ignored = self.read.keys(proc, PROCEDURE_KEYS, where)
        finally:
            self.read.collect = collecting
        errors, self.read.errors = list(self.read.errors), []
        for key, item in proc.items():
            if item is None or key in ignored or (key in EMPTY_MEANS_UNSET and item == ""):
                continue
            try:
                raw.fields[key] = self.setting(self.parse_field(name, key, item, proc), proc, key)
            except OodaError as error:
                errors.extend(each for each in error.every if isinstance(each, OodaError))
        if errors:
            raise OodaError.gathered(errors)
        return raw

    def parse_field(self, name: str, key: str, item: Any, proc: YamlMapping) -> Any:
        """One key of a procedure, checked."""
        where = f"procedure {name}"
        fmark = value_mark(proc, key)
        if key in PHASES:
            return self.parse_phase(name, key, item, fmark)
        if key == "ai_api":
            return self.parse_api(item, fmark, f"{where}: ai_api")
        if key == "sandbox":
            return self.parse_sandbox(item, fmark, f"{where}: sandbox")
        return self.check(_PROCEDURE_CHECKS[key], item, fmark, f"{where}: {key}")

    def parse_phase(
        self, name: str, phase: str, value: Any, mark: Mark
    ) -> tuple[FragmentAction, ...]:
        if isinstance(value, str):
            # rooda's v0.1.0 form, still supported there: the phase is one fragment path.
            return (self.parse_string_phase(name, phase, value, mark),)
        if not isinstance(value, YamlSequence):
            raise self.read.fail(
                f"procedure {name}: {phase}: expected a list of fragment actions, "
                f"got {type_name(value)}",
                mark,
                "write each fragment as `- path: <file>` or `- content: <text>`",
            )
        return tuple(
            self.parse_action(name, phase, index, item, value.item_marks[index])
            for index, item in enumerate(value)
        )

    def parse_string_phase(self, name: str, phase: str, path: str, mark: Mark) -> FragmentAction:
        where = f"procedure {name}: {phase}"
        if not path:
            raise self.read.fail(
                f"{where}: fragment must specify either content or path",
                mark,
                "an empty string does not count",
            )
        try:
            file = fragments.resolve_fragment_path(path, self.base_dir)
        except FragmentError as exc:
            raise self.read.fail(f"{where}: {exc.message}", mark, exc.hint, FragmentError) from None
        location = self.loc(mark)
        return FragmentAction(
            content=None,
            path=path,
            parameters=MappingProxyType({}),
            base_dir=self.base_dir,
            location=location,
            file=file,
            key_locations=MappingProxyType({"path": location}),
            string_form=True,
        )

    def parse_action(
        self, name: str, phase: str, index: int, value: Any, mark: Mark
    ) -> FragmentAction:
        where = f"procedure {name}: {phase}[{index}]"
        if not isinstance(value, YamlMapping):
            hint = "write `- path: <file>` or `- content: <text>`"
            if isinstance(value, str):
                hint = f"write `- path: {value}` or `- content: ...`"
            raise self.read.fail(
                f"{where}: expected a fragment action mapping, got {type_name(value)}", mark, hint
            )
        self.read.keys(value, FRAGMENT_KEYS, where)
        content = value.get("content")
        path = value.get("path")
        for key, item in (("content", content), ("path", path)):
            if item is not None:
                self.read.text(item, value_mark(value, key), f"{where}: {key}")
        if content and path:
            raise self.read.fail(
                f"{where}: fragment cannot specify both content and path", value.mark
            )
        if not content and not path:
            raise self.read.fail(
                f"{where}: fragment must specify either content or path",
                value.mark,
                "an empty string does not count",
            )
        params_value = value.get("parameters")
        parameters: Mapping[str, Any] = MappingProxyType({})
        parameter_locations: dict[str, Location] = {}
        if params_value is not None:
            params = self.read.mapping(
                params_value, value_mark(value, "parameters"), f"{where}: parameters"
            )
            named: dict[str, Any] = {}
            for pname, pvalue in params.items():
                pmark = key_mark(params, pname)
                if pname is None:
                    # yaml.v3 drops a null key when decoding into rooda's parameter map.
                    self.read.warn(f"{where}: a parameter with a null name is ignored", pmark)
                    continue
                if not isinstance(pname, str):
                    # A merged-in key (`<<`): named by its text, as yaml.v3 names it.
                    pname = params.key_texts.get(pname, str(pname))
                named[pname] = to_plain(pvalue)
                parameter_locations[pname] = self.loc(pmark)
            parameters = MappingProxyType(named)
        file: Path | None = None
        if path:
            try:
                file = fragments.resolve_fragment_path(path, self.base_dir)
            except FragmentError as exc:
                raise self.read.fail(
                    f"{where}: {exc.message}", key_mark(value, "path"), exc.hint, FragmentError
                ) from None
        action = FragmentAction(
            content=content if content else None,
            path=path if path else None,
            parameters=parameters,
            base_dir=self.base_dir,
            location=self.loc(value.mark),
            file=file,
            key_locations=MappingProxyType({key: self.loc(key_mark(value, key)) for key in value}),
            parameter_locations=MappingProxyType(parameter_locations),
        )
        if parameters:
            self.check_template(action, where, value)
        return action

    def check_template(self, action: FragmentAction, where: str, node: YamlMapping) -> None:
        from pytest_ooda import gotemplate

        try:
            text = fragments.load_fragment_text(action)
        except OodaError as exc:
            raise self.read.fail(
                f"{where}: {exc.message}", key_mark(node, "path"), exc.hint, FragmentError
            ) from None
        try:
            gotemplate.check(text, name="fragment")
        except TemplateError as exc:
            key = "path" if action.path is not None else "content"
            mark = key_mark(node, key)
            raise located_template_error(exc, action, where, self.display, mark) from None


def _is_zero(value: Any) -> bool:
    return type(value) is int and value == 0


def parse_file(path: Path, tier: str) -> Layer:
    from pytest_ooda.yamlload import load_yaml_file

    document = load_yaml_file(
        path, display=display_path(path), go_typed=GO_TYPED_PARAMETERS, strict_text=True
    )
    return FileParser(path, tier).parse(document)


#: The built-in layer of this process, by the file's place, time and size: a session
#: loads the config for many items, and the file does not change under it.
_builtin_cache: dict[tuple[Path, int, int], Layer] = {}


def builtin_layer() -> Layer | None:
    """The built-in procedures, parsed (their fragments' templates checked) once per
    process while the file is unchanged; ``None`` when the file is missing."""
    path = fragments.builtin_procedures_file()
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (path, stat.st_mtime_ns, stat.st_size)
    layer = _builtin_cache.get(key)
    if layer is None:
        layer = parse_file(path, "builtin")
        _builtin_cache.clear()
        _builtin_cache[key] = layer
    return layer
