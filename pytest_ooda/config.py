"""Configuration: the file schema, the tiers and their merge, provenance, run settings.

Tiers, lowest first: built-in defaults and aliases (code), built-in procedures
(``procedures/builtin.yml``), the global config, the workspace config, ``OODA_*``
environment variables, explicit overrides (CLI flags / pytest options). Everything is
validated while loading so that a broken config fails before any AI command runs, with
an ``OodaError`` naming ``file:line:col``.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import gc
import math
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda import fragments
from pytest_ooda.errors import ConfigError, ConfigWarning, FragmentError, OodaError, TemplateError
from pytest_ooda.yamlload import (
    ANY_ITEM,
    ANY_KEY,
    Mark,
    YamlMapping,
    YamlSequence,
    key_mark,
    load_yaml_file,
    to_plain,
    value_mark,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

PHASES = ("observe", "orient", "decide", "act")
# Fragment parameters are typed as Go's yaml.v3 types them (``yes`` stays a string, ``1e3``
# is a float, dates are times) so templates render as in the Go implementation; the rest
# of a config keeps YAML 1.1 typing (``off`` in ``lint:``, ``yes`` for booleans).
GO_TYPED_PARAMETERS = ("procedures", ANY_KEY, frozenset(PHASES), ANY_ITEM, "parameters")
CONFIG_FILENAME = "ooda-config.yml"

BUILTIN_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "claude": "claude -p --dangerously-skip-permissions",
        "kiro-cli": "kiro-cli chat --no-interactive --trust-all-tools",
        "copilot": "copilot --yolo",
        "cursor-agent": "cursor-agent -p -f --output-format text",
    }
)

ITERATION_MODES = ("max-iterations", "unlimited")
LOG_LEVELS = ("debug", "info", "warn", "error")
LINT_SEVERITIES = ("error", "warning", "info", "off")
API_PROVIDERS = ("anthropic", "openai")

TOP_LEVEL_KEYS = ("loop", "ai_cmd_aliases", "procedures", "lint")
LOOP_KEYS = (
    "iteration_mode",
    "default_max_iterations",
    "iteration_timeout",
    "max_output_buffer",
    "failure_threshold",
    "log_level",
    "show_ai_output",
    "ai_cmd",
    "ai_cmd_alias",
    "ai_api",
)
PROCEDURE_KEYS = (
    "display",
    "summary",
    "description",
    *PHASES,
    "iteration_mode",
    "default_max_iterations",
    "iteration_timeout",
    "max_output_buffer",
    "ai_cmd",
    "ai_cmd_alias",
    "ai_api",
)
FRAGMENT_KEYS = ("content", "path", "parameters")
API_KEYS = (
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "max_tokens",
    "timeout",
    "price_input_per_mtok",
    "price_output_per_mtok",
)

LOOP_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "iteration_mode": "max-iterations",
        "default_max_iterations": 5,
        "iteration_timeout": None,
        "max_output_buffer": 10_485_760,
        "failure_threshold": 3,
        "log_level": "info",
        "show_ai_output": False,
        "ai_cmd": None,
        "ai_cmd_alias": None,
        "ai_api": None,
    }
)

ENV_VARS: Mapping[str, str] = MappingProxyType(
    {
        "OODA_LOOP_AI_CMD": "ai_cmd",
        "OODA_LOOP_AI_CMD_ALIAS": "ai_cmd_alias",
        "OODA_LOOP_ITERATION_MODE": "iteration_mode",
        "OODA_LOOP_DEFAULT_MAX_ITERATIONS": "default_max_iterations",
        "OODA_LOOP_ITERATION_TIMEOUT": "iteration_timeout",
        "OODA_LOOP_MAX_OUTPUT_BUFFER": "max_output_buffer",
        "OODA_LOOP_FAILURE_THRESHOLD": "failure_threshold",
        "OODA_LOOP_LOG_LEVEL": "log_level",
        "OODA_LOOP_SHOW_AI_OUTPUT": "show_ai_output",
    }
)

# YAML 1.1 reads unquoted yes/no/on/off/true/false and numbers as non-strings.
_QUOTE_KEY_HINT = 'quote the key, e.g. "on": or "1":'
_PROCEDURE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LINT_RULE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class Location:
    """A 1-based position in a config file (``file`` is ``None`` for non-file sources)."""

    file: Path | None
    line: int
    column: int

    def __str__(self) -> str:
        name = display_path(self.file) if self.file is not None else "<unknown>"
        return f"{name}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Provenance:
    """Where a resolved setting came from.

    ``tier`` is one of ``cli``, ``env``, ``workspace``, ``global``, ``builtin``, ``default``;
    ``file``/``line`` are set when the value was read from a file. For ``env``, ``file`` is
    ``None`` and :attr:`source` names the variable.
    """

    tier: str
    file: Path | None = None
    line: int | None = None
    source: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.file is not None:
            where = display_path(self.file) + (f":{self.line}" if self.line is not None else "")
            return f"{self.tier} ({where})"
        if self.source:
            return f"{self.tier} ({self.source})"
        return self.tier


@dataclass(frozen=True)
class ApiSettings:
    """An ``ai_api:`` mapping: talk to a model over HTTP instead of running a CLI."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int = 4096
    timeout: float = 600.0
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None


@dataclass(frozen=True)
class FragmentAction:
    """One entry of a phase list: inline ``content`` or a ``path``, with template parameters.

    ``file`` is the resolved fragment file (``None`` for inline content); ``key_locations``
    and ``parameter_locations`` locate the ``content``/``path``/``parameters`` keys and
    each parameter name, for tools that point at them (lint).
    """

    content: str | None
    path: str | None
    # Excluded from the hash (a mapping is not hashable) but not from equality, so
    # actions can be dict keys and sets members, e.g. in fragment coverage.
    parameters: Mapping[str, Any] = field(hash=False)
    base_dir: Path
    location: Location
    file: Path | None = field(default=None, compare=False)
    key_locations: Mapping[str, Location] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    parameter_locations: Mapping[str, Location] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )

    def source_label(self) -> str:
        """``builtin:fragments/…``, the relative path as written, or ``inline``."""
        return self.path if self.path is not None else "inline"

    @property
    def is_template(self) -> bool:
        """Whether the text is rendered as a Go template (non-empty parameters)."""
        return bool(self.parameters)


@dataclass(frozen=True)
class Procedure:
    """A procedure after the field-by-field merge of every tier.

    ``location`` is the procedure's key in the highest-tier file that declared it;
    ``field_locations`` locates each field's key in the file it was taken from.
    """

    name: str
    display: str
    summary: str
    description: str
    observe: tuple[FragmentAction, ...]
    orient: tuple[FragmentAction, ...]
    decide: tuple[FragmentAction, ...]
    act: tuple[FragmentAction, ...]
    iteration_mode: str | None
    default_max_iterations: int | None
    iteration_timeout: int | None
    max_output_buffer: int | None
    ai_cmd: str | None
    ai_cmd_alias: str | None
    ai_api: ApiSettings | None
    location: Location
    field_locations: Mapping[str, Location] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )

    def phases(self) -> dict[str, tuple[FragmentAction, ...]]:
        """The four phase lists in ``PHASES`` order."""
        return {
            "observe": self.observe,
            "orient": self.orient,
            "decide": self.decide,
            "act": self.act,
        }

    @property
    def title(self) -> str:
        """``display``, or the name when ``display`` is empty."""
        return self.display or self.name


@dataclass(frozen=True)
class LoopSettings:
    """The merged ``loop:`` section."""

    iteration_mode: str
    default_max_iterations: int
    iteration_timeout: int | None
    max_output_buffer: int
    failure_threshold: int
    log_level: str
    show_ai_output: bool
    ai_cmd: str | None
    ai_cmd_alias: str | None
    ai_api: ApiSettings | None


@dataclass(frozen=True)
class Config:
    """The merged configuration of every tier."""

    loop: LoopSettings
    aliases: Mapping[str, str]
    procedures: Mapping[str, Procedure]
    provenance: Mapping[str, Provenance]
    files: tuple[Path, ...]
    warnings: tuple[ConfigWarning, ...]
    lint: Mapping[str, str]

    def procedure(self, name: str) -> Procedure:
        """The procedure called ``name``; ``ConfigError`` with "did you mean" otherwise."""
        try:
            return self.procedures[name]
        except KeyError:
            raise ConfigError(
                f"unknown procedure {name!r}",
                hint=_suggest(name, self.procedures, "available procedures"),
            ) from None


@dataclass(frozen=True)
class RunSettings:
    """Everything the loop runner needs for one run, each with its provenance."""

    max_iterations: int | None
    iteration_timeout: int | None
    max_output_buffer: int
    failure_threshold: int
    show_ai_output: bool
    ai_cmd: tuple[str, ...] | None
    ai_api: ApiSettings | None
    provenance: Mapping[str, Provenance]


# --------------------------------------------------------------------------- helpers


def display_path(path: Path | str | None) -> str:
    """A path as shown in messages: relative to the working directory when under it."""
    if path is None:
        return "<unknown>"
    p = Path(path)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except (ValueError, OSError):
            return str(p)
    return str(p)


def _suggest(word: str, known: Iterable[str], label: str) -> str:
    names = sorted(known)
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    listing = f"{label}: {', '.join(names) if names else '(none)'}"
    if close:
        return f"did you mean {close[0]!r}?\n  {listing}"
    return listing


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if type(value).__name__ == "GoTime":
        return f"a timestamp ({value})"
    return type(value).__name__


class _Invalid(Exception):
    """A value failed a validator; ``expected`` says what was wanted."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


def _check_choice(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str) or value not in choices:
            raise _Invalid("one of " + ", ".join(choices))
        return value

    return check


def _check_positive_int(value: Any) -> Any:
    # bool is a subclass of int in Python; YAML `true` is not a count.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Invalid("an integer >= 1")
    return value


def _check_bool(value: Any) -> Any:
    if not isinstance(value, bool):
        raise _Invalid("a boolean (true or false)")
    return value


def _check_command(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("a non-empty command string")
    try:
        shlex.split(value)
    except ValueError as exc:
        # Caught at load time rather than when a run starts, like every other mistake.
        raise _Invalid(f"a command line with balanced quotes ({exc})") from None
    return value


def _check_alias_name(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("an alias name (a non-empty string)")
    return value


def _check_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise _Invalid("a string (quote it)")
    return value


_LOOP_CHECKS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        "iteration_mode": _check_choice(ITERATION_MODES),
        "default_max_iterations": _check_positive_int,
        "iteration_timeout": _check_positive_int,
        "max_output_buffer": _check_positive_int,
        "failure_threshold": _check_positive_int,
        "log_level": _check_choice(LOG_LEVELS),
        "show_ai_output": _check_bool,
        "ai_cmd": _check_command,
        "ai_cmd_alias": _check_alias_name,
    }
)

_PROCEDURE_CHECKS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        "display": _check_text,
        "summary": _check_text,
        "description": _check_text,
        "iteration_mode": _check_choice(ITERATION_MODES),
        "default_max_iterations": _check_positive_int,
        "iteration_timeout": _check_positive_int,
        "max_output_buffer": _check_positive_int,
        "ai_cmd": _check_command,
        "ai_cmd_alias": _check_alias_name,
    }
)


def _parse_env_value(key: str, text: str) -> Any:
    check = _LOOP_CHECKS[key]
    if check is _check_positive_int:
        if not re.fullmatch(r"\s*\+?[0-9]+\s*", text):
            raise _Invalid("an integer >= 1")
        return check(int(text))
    if check is _check_bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise _Invalid("a boolean (true/false, 1/0, yes/no)")
    return check(text.strip() if key != "ai_cmd" else text)


# --------------------------------------------------------------------------- file layers


@dataclass
class _Setting:
    value: Any
    location: Location | None
    provenance: Provenance


@dataclass
class _RawProcedure:
    name: str
    location: Location
    fields: dict[str, _Setting]


@dataclass
class _Layer:
    """One config file, validated but not yet merged."""

    path: Path
    tier: str
    loop: dict[str, _Setting] = field(default_factory=dict)
    aliases: dict[str, _Setting] = field(default_factory=dict)
    procedures: dict[str, _RawProcedure] = field(default_factory=dict)
    lint: dict[str, _Setting] = field(default_factory=dict)
    warnings: list[ConfigWarning] = field(default_factory=list)


class _FileParser:
    """Validates one config file's located YAML into a :class:`_Layer`."""

    def __init__(self, path: Path, tier: str) -> None:
        self.path = path
        self.tier = tier
        self.base_dir = path.parent
        self.display = display_path(path)

    def loc(self, mark: Mark) -> Location:
        return Location(self.path, mark.line, mark.column)

    def error(
        self,
        message: str,
        mark: Mark,
        hint: str | None = None,
        cls: type[ConfigError] = ConfigError,
    ) -> ConfigError:
        return cls(message, file=self.display, line=mark.line, column=mark.column, hint=hint)

    def setting(self, value: Any, mark: Mark) -> _Setting:
        return _Setting(value, self.loc(mark), Provenance(self.tier, self.path, mark.line))

    def check_keys(self, mapping: YamlMapping, known: tuple[str, ...], where: str) -> None:
        for key in mapping:
            if not isinstance(key, str):
                raise self.error(
                    f"{where}: keys must be strings, got {_type_name(key)}",
                    key_mark(mapping, key),
                    _QUOTE_KEY_HINT,
                )
            if key not in known:
                raise self.error(
                    f"{where}: unknown key {key!r}",
                    key_mark(mapping, key),
                    _suggest(key, known, "expected one of"),
                )

    def expect_mapping(self, value: Any, mark: Mark, where: str) -> YamlMapping:
        if not isinstance(value, YamlMapping):
            raise self.error(f"{where}: expected a mapping, got {_type_name(value)}", mark)
        return value

    def parse(self, document: Any) -> _Layer:
        layer = _Layer(self.path, self.tier)
        if document is None:
            raise self.error(
                "config file is empty",
                Mark(1, 1),
                "expected a mapping with any of: " + ", ".join(TOP_LEVEL_KEYS),
            )
        if not isinstance(document, YamlMapping):
            raise self.error(
                f"the top level of a config file must be a mapping, got {_type_name(document)}",
                getattr(document, "mark", Mark(1, 1)),
                "expected keys: " + ", ".join(TOP_LEVEL_KEYS),
            )
        for key in document:
            if key in TOP_LEVEL_KEYS:
                continue
            mark = key_mark(document, key)
            hint = _suggest(str(key), TOP_LEVEL_KEYS, "known top-level keys")
            layer.warnings.append(
                ConfigWarning(
                    f"unknown top-level key {key!r} (ignored); {hint.splitlines()[0]}",
                    file=self.path,
                    line=mark.line,
                    column=mark.column,
                )
            )
        if document.get("loop") is not None:
            layer.loop = self.parse_loop(document["loop"], value_mark(document, "loop"))
        if document.get("ai_cmd_aliases") is not None:
            layer.aliases = self.parse_aliases(
                document["ai_cmd_aliases"], value_mark(document, "ai_cmd_aliases")
            )
        if document.get("lint") is not None:
            layer.lint = self.parse_lint(document["lint"], value_mark(document, "lint"))
        if document.get("procedures") is not None:
            procs = self.expect_mapping(
                document["procedures"], value_mark(document, "procedures"), "procedures"
            )
            for name, body in procs.items():
                layer.procedures[name] = self.parse_procedure(name, body, procs)
        return layer

    def parse_loop(self, value: Any, mark: Mark) -> dict[str, _Setting]:
        loop = self.expect_mapping(value, mark, "loop")
        self.check_keys(loop, LOOP_KEYS, "loop")
        out: dict[str, _Setting] = {}
        for key, item in loop.items():
            if item is None:
                continue
            vmark = value_mark(loop, key)
            if key == "ai_api":
                parsed = self.parse_api(item, vmark, "loop.ai_api")
            else:
                parsed = self.check(_LOOP_CHECKS[key], item, vmark, f"loop.{key}")
            out[key] = self.setting(parsed, key_mark(loop, key))
        return out

    def check(self, check: Callable[[Any], Any], value: Any, mark: Mark, where: str) -> Any:
        try:
            return check(value)
        except _Invalid as exc:
            raise self.error(
                f"{where}: expected {exc.expected}, got {_type_name(value)}", mark
            ) from None

    def parse_aliases(self, value: Any, mark: Mark) -> dict[str, _Setting]:
        aliases = self.expect_mapping(value, mark, "ai_cmd_aliases")
        out: dict[str, _Setting] = {}
        for name, command in aliases.items():
            kmark = key_mark(aliases, name)
            if not isinstance(name, str) or not name.strip():
                raise self.error(
                    "ai_cmd_aliases: alias names must be non-empty strings, "
                    f"got {_type_name(name)}",
                    kmark,
                )
            self.check(_check_command, command, value_mark(aliases, name), f"ai_cmd_aliases.{name}")
            out[name] = self.setting(command, kmark)
        return out

    def parse_lint(self, value: Any, mark: Mark) -> dict[str, _Setting]:
        section = self.expect_mapping(value, mark, "lint")
        out: dict[str, _Setting] = {}
        for rule, severity in section.items():
            kmark = key_mark(section, rule)
            if not isinstance(rule, str) or not _LINT_RULE.match(rule):
                raise self.error(
                    f"lint: a rule id must be a name like OODA201, got {_type_name(rule)}", kmark
                )
            if isinstance(severity, bool) and severity is False:
                # YAML 1.1 reads a bare `off` as false; accept what the user meant.
                severity = "off"
            self.check(
                _check_choice(LINT_SEVERITIES), severity, value_mark(section, rule), f"lint.{rule}"
            )
            out[rule] = self.setting(severity, kmark)
        return out

    def parse_api(self, value: Any, mark: Mark, where: str) -> ApiSettings:
        api = self.expect_mapping(value, mark, where)
        self.check_keys(api, API_KEYS, where)
        for required in ("provider", "model"):
            if api.get(required) is None:
                raise self.error(
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

    def parse_procedure(self, name: Any, body: Any, procs: YamlMapping) -> _RawProcedure:
        kmark = key_mark(procs, name)
        if not isinstance(name, str) or not _PROCEDURE_NAME.match(name):
            raise self.error(
                f"invalid procedure name {name!r}",
                kmark,
                "procedure names are lower-case letters, digits and '-', "
                "starting with a letter or digit",
            )
        where = f"procedure {name}"
        raw = _RawProcedure(name, self.loc(kmark), {})
        if body is None:
            return raw
        proc = self.expect_mapping(body, value_mark(procs, name), where)
        self.check_keys(proc, PROCEDURE_KEYS, where)
        for key, item in proc.items():
            if item is None:
                continue
            fmark = value_mark(proc, key)
            if key in PHASES:
                parsed: Any = self.parse_phase(name, key, item, fmark)
            elif key == "ai_api":
                parsed = self.parse_api(item, fmark, f"{where}: ai_api")
            else:
                parsed = self.check(_PROCEDURE_CHECKS[key], item, fmark, f"{where}: {key}")
            raw.fields[key] = self.setting(parsed, key_mark(proc, key))
        return raw

    def parse_phase(
        self, name: str, phase: str, value: Any, mark: Mark
    ) -> tuple[FragmentAction, ...]:
        if not isinstance(value, YamlSequence):
            raise self.error(
                f"procedure {name}: {phase}: expected a list of fragment actions, "
                f"got {_type_name(value)}",
                mark,
                "write each fragment as `- path: <file>` or `- content: <text>`",
            )
        return tuple(
            self.parse_action(name, phase, index, item, value.item_marks[index])
            for index, item in enumerate(value)
        )

    def parse_action(
        self, name: str, phase: str, index: int, value: Any, mark: Mark
    ) -> FragmentAction:
        where = f"procedure {name}: {phase}[{index}]"
        if not isinstance(value, YamlMapping):
            hint = "write `- path: <file>` or `- content: <text>`"
            if isinstance(value, str):
                hint = f"write `- path: {value}` or `- content: ...`"
            raise self.error(
                f"{where}: expected a fragment action mapping, got {_type_name(value)}", mark, hint
            )
        self.check_keys(value, FRAGMENT_KEYS, where)
        content = value.get("content")
        path = value.get("path")
        for key, item in (("content", content), ("path", path)):
            if item is not None and not isinstance(item, str):
                raise self.error(
                    f"{where}: {key}: expected a string, got {_type_name(item)}",
                    value_mark(value, key),
                )
        if content and path:
            raise self.error(f"{where}: fragment cannot specify both content and path", value.mark)
        if not content and not path:
            raise self.error(
                f"{where}: fragment must specify either content or path",
                value.mark,
                "an empty string does not count",
            )
        params_value = value.get("parameters")
        parameters: Mapping[str, Any] = MappingProxyType({})
        parameter_locations: dict[str, Location] = {}
        if params_value is not None:
            params = self.expect_mapping(
                params_value, value_mark(value, "parameters"), f"{where}: parameters"
            )
            for pname in params:
                if not isinstance(pname, str):
                    raise self.error(
                        f"{where}: parameter names must be strings, got {_type_name(pname)}",
                        key_mark(params, pname),
                        'quote the key, e.g. "1": or "true":',
                    )
                parameter_locations[pname] = self.loc(key_mark(params, pname))
            parameters = MappingProxyType(to_plain(params))
        file: Path | None = None
        if path:
            try:
                file = fragments.resolve_fragment_path(path, self.base_dir)
            except FragmentError as exc:
                raise self.error(
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
            raise self.error(
                f"{where}: {exc.message}", key_mark(node, "path"), exc.hint, FragmentError
            ) from None
        try:
            gotemplate.check(text, name="fragment")
        except TemplateError as exc:
            key = "path" if action.path is not None else "content"
            mark = key_mark(node, key)
            raise located_template_error(exc, action, where, self.display, mark) from None


def located_template_error(
    exc: TemplateError, action: FragmentAction, where: str, display: str | None, mark: Mark
) -> TemplateError:
    """Re-raise a template error at the config location of the fragment that owns it."""
    label = "parse" if exc.kind == "parse" else "execution"
    message = exc.message
    prefix = f"template {label} error: "
    if not message.startswith(prefix):
        message = prefix + message
    hint: str | None
    if exc.template_line is not None:
        if action.file is not None:
            hint = f"in {display_path(action.file)}:{exc.template_line}"
        else:
            hint = f"in line {exc.template_line} of the inline content"
    else:
        hint = exc.hint
    return TemplateError(
        f"{where}: {message}",
        kind=exc.kind,
        template_line=exc.template_line,
        file=display,
        line=mark.line,
        column=mark.column,
        hint=hint,
    )


def _check_url(value: Any) -> Any:
    if not isinstance(value, str) or not re.match(r"https?://[^\s/]+", value):
        raise _Invalid("an http:// or https:// URL")
    return value


def _check_env_name(value: Any) -> Any:
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        raise _Invalid("an environment variable name (e.g. ANTHROPIC_API_KEY)")
    return value


def _check_positive_number(value: Any) -> Any:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise _Invalid("a number of seconds > 0")
    return value


def _check_price(value: Any) -> Any:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise _Invalid("a price per million tokens >= 0")
    return value


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while loading.

    Loading allocates many small objects and no reference cycles; without the pause the
    collector repeatedly walks the growing heap and load time grows faster than the file
    (1.5x per procedure at 1,000 procedures).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse_file(path: Path, tier: str) -> _Layer:
    document = load_yaml_file(
        path, display=display_path(path), go_typed=GO_TYPED_PARAMETERS, strict_text=True
    )
    return _FileParser(path, tier).parse(document)


_builtin_cache: dict[tuple[Path, int, int], _Layer] = {}


def _builtin_layer() -> _Layer | None:
    path = fragments.builtin_procedures_file()
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (path, stat.st_mtime_ns, stat.st_size)
    layer = _builtin_cache.get(key)
    if layer is None:
        layer = _parse_file(path, "builtin")
        _builtin_cache.clear()
        _builtin_cache[key] = layer
    return layer


# --------------------------------------------------------------------------- merge


def global_config_path(env: Mapping[str, str]) -> Path | None:
    """``$OODA_CONFIG_HOME/ooda-config.yml``, else the XDG location, else ``~/.config``.

    ``None`` when there is no home directory to look in. A relative ``XDG_CONFIG_HOME``
    is ignored, as the XDG base directory specification asks.
    """
    if env.get("OODA_CONFIG_HOME"):
        home_dir = Path(env["OODA_CONFIG_HOME"])
        if _file_kind(home_dir, "environment variable OODA_CONFIG_HOME") not in ("dir", "missing"):
            raise ConfigError(
                "environment variable OODA_CONFIG_HOME: expected a directory, "
                f"got {str(home_dir)!r} (not a directory)"
            )
        return home_dir / CONFIG_FILENAME
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "ooda" / CONFIG_FILENAME
    if env.get("HOME"):
        home = Path(env["HOME"])
    else:
        try:
            home = Path.home()
        except (RuntimeError, KeyError, OSError):
            # No $HOME and no password-database entry (some containers): no global config.
            return None
    return home / ".config" / "ooda" / CONFIG_FILENAME


def _file_kind(path: Path, what: str) -> str:
    """``"missing"``, ``"file"``, ``"dir"`` or ``"other"``; unreadable paths are errors.

    ``Path.is_file()`` lets ``PermissionError`` through (an unreadable XDG directory),
    and would silently skip a config that is a directory.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
            raise ConfigError(f"{what}: {path} is a symbolic link loop") from None
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            raise ConfigError(f"{what}: path too long: {path}") from None
        if isinstance(exc, ValueError):
            raise ConfigError(f"{what}: invalid path {str(path)!r}") from None
        raise ConfigError(f"{what}: cannot access {path}: {exc.strerror or exc}") from None
    if S_ISREG(mode):
        return "file"
    if S_ISDIR(mode):
        return "dir"
    return "other"


def _config_file(path: Path, what: str) -> Path | None:
    """``path`` when it is a regular file, ``None`` when missing; anything else is an error."""
    kind = _file_kind(path, what)
    if kind == "file":
        return path
    if kind == "missing":
        return None
    noun = "a directory" if kind == "dir" else "not a regular file"
    raise ConfigError(f"{what} {display_path(path)} is {noun}", hint="give the path of a YAML file")


def _env_layer(env: Mapping[str, str]) -> dict[str, _Setting]:
    out: dict[str, _Setting] = {}
    for var, key in ENV_VARS.items():
        text = env.get(var)
        if text is None or not text.strip():
            continue
        try:
            value = _parse_env_value(key, text)
        except _Invalid as exc:
            raise ConfigError(
                f"environment variable {var}: expected {exc.expected}, got {text!r}"
            ) from None
        out[key] = _Setting(value, None, Provenance("env", source=var))
    return out


def _override_layer(overrides: Mapping[str, Any]) -> dict[str, _Setting]:
    out: dict[str, _Setting] = {}
    for key, value in overrides.items():
        if key not in LOOP_KEYS:
            raise ConfigError(
                f"unknown setting override {key!r}", hint=_suggest(key, LOOP_KEYS, "known settings")
            )
        if value is None:
            continue
        if key == "ai_api":
            if not isinstance(value, ApiSettings):
                raise ConfigError("override ai_api: expected an ApiSettings instance")
            checked: Any = value
        else:
            try:
                checked = _LOOP_CHECKS[key](value)
            except _Invalid as exc:
                raise ConfigError(
                    f"option {key}: expected {exc.expected}, got {_type_name(value)}"
                ) from None
        out[key] = _Setting(checked, None, Provenance("cli", source=key))
    return out


def _alias_error(
    alias: str, setting: _Setting, aliases: Mapping[str, str], where: str
) -> ConfigError:
    loc = setting.location
    hint = _suggest(alias, aliases, "known aliases")
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


def _merge(
    layers: list[_Layer], env_loop: dict[str, _Setting], cli_loop: dict[str, _Setting]
) -> Config:
    provenance: dict[str, Provenance] = {}
    loop: dict[str, _Setting] = {
        key: _Setting(value, None, Provenance("default")) for key, value in LOOP_DEFAULTS.items()
    }
    aliases: dict[str, _Setting] = {
        name: _Setting(command, None, Provenance("default"))
        for name, command in BUILTIN_ALIASES.items()
    }
    lint: dict[str, _Setting] = {}
    procs: dict[str, _RawProcedure] = {}
    warnings: list[ConfigWarning] = []
    for layer in layers:
        loop.update(layer.loop)
        aliases.update(layer.aliases)
        lint.update(layer.lint)
        warnings.extend(layer.warnings)
        for name, raw in layer.procedures.items():
            merged = procs.get(name)
            if merged is None:
                procs[name] = _RawProcedure(name, raw.location, dict(raw.fields))
            else:
                merged.location = raw.location
                merged.fields.update(raw.fields)
    loop.update(env_loop)
    loop.update(cli_loop)

    alias_map = MappingProxyType({name: s.value for name, s in aliases.items()})
    alias_setting = loop["ai_cmd_alias"]
    if alias_setting.value is not None and alias_setting.value not in alias_map:
        raise _alias_error(alias_setting.value, alias_setting, alias_map, "loop.ai_cmd_alias")

    for key, setting in loop.items():
        provenance[f"loop.{key}"] = setting.provenance
    for name, setting in aliases.items():
        provenance[f"aliases.{name}"] = setting.provenance
    for rule, setting in lint.items():
        provenance[f"lint.{rule}"] = setting.provenance

    procedures: dict[str, Procedure] = {}
    for name, raw in procs.items():
        fields = raw.fields
        alias = fields.get("ai_cmd_alias")
        if alias is not None and alias.value not in alias_map:
            raise _alias_error(alias.value, alias, alias_map, f"procedure {name}: ai_cmd_alias")
        for key, setting in fields.items():
            provenance[f"procedures.{name}.{key}"] = setting.provenance

        def get(key: str, default: Any = None, _fields: dict[str, _Setting] = fields) -> Any:
            setting = _fields.get(key)
            return setting.value if setting is not None else default

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
            location=raw.location,
            field_locations=MappingProxyType(
                {key: s.location for key, s in fields.items() if s.location is not None}
            ),
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
    )


# --------------------------------------------------------------------------- public API


def load_config(
    config_file: str | Path | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    builtin: bool = True,
    global_config: bool = True,
) -> Config:
    """Load and merge every tier.

    ``config_file`` replaces the workspace ``./ooda-config.yml`` (and must exist);
    ``cwd`` is where the workspace file is looked for (default: the working directory);
    ``env`` replaces ``os.environ``; ``overrides`` is the CLI tier for ``loop`` keys.
    """
    with _collector_paused():
        return _load_config(config_file, cwd, env, overrides, builtin, global_config)


def _load_config(
    config_file: str | Path | None,
    cwd: Path | None,
    env: Mapping[str, str] | None,
    overrides: Mapping[str, Any] | None,
    builtin: bool,
    global_config: bool,
) -> Config:
    environ = os.environ if env is None else env
    base = Path.cwd() if cwd is None else Path(cwd)
    layers: list[_Layer] = []
    if builtin:
        builtin_layer = _builtin_layer()
        if builtin_layer is not None:
            layers.append(builtin_layer)
    if global_config:
        global_path = global_config_path(environ)
        if global_path is not None and _config_file(global_path, "global config"):
            layers.append(_parse_file(global_path.absolute(), "global"))
    if config_file is not None:
        explicit = check_config_file(config_file, cwd=base)
        layers.append(_parse_file(explicit.absolute(), "workspace"))
    else:
        workspace = base / CONFIG_FILENAME
        if _config_file(workspace, "workspace config"):
            layers.append(_parse_file(workspace.absolute(), "workspace"))
    return _merge(layers, _env_layer(environ), _override_layer(overrides or {}))


def check_config_file(config_file: str | Path, *, cwd: Path | None = None) -> Path:
    """The path of an explicitly named config file (``--config``), which must be a file.

    ``ConfigError`` when it is missing, a directory, or cannot be examined.
    """
    explicit = Path(config_file)
    if not explicit.is_absolute():
        explicit = (Path.cwd() if cwd is None else cwd) / explicit
    if _config_file(explicit, "config file") is None:
        raise ConfigError(
            f"config file not found: {config_file}"
            + (f" (resolved to {explicit})" if str(explicit) != str(config_file) else "")
        )
    return explicit


def load_config_file(path: str | Path) -> Config:
    """One file only: no built-in procedures, global config or environment (for lint/plugin).

    Built-in defaults and aliases still apply, so alias references resolve.
    """
    file = Path(path).absolute()
    if _config_file(file, "config file") is None:
        raise ConfigError(f"config file not found: {path}")
    with _collector_paused():
        return _merge([_parse_file(file, "workspace")], {}, {})


def load_builtin_config() -> Config:
    """Only the built-in procedures and defaults (no global, workspace or environment)."""
    layer = _builtin_layer()
    return _merge([layer] if layer is not None else [], {}, {})


def _split_command(command: str, provenance: Provenance, what: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ConfigError(
            f"cannot split {what} {command!r} into arguments: {exc}",
            file=display_path(provenance.file) if provenance.file else None,
            line=provenance.line,
        ) from None
    if not argv:
        raise ConfigError(f"{what} is empty")
    return argv


def _no_ai_error(config: Config, procedure: str) -> ConfigError:
    ways = (
        "--ai-cmd 'my-cli --flag' or --ai-cmd-alias NAME (ooda run / pytest --ooda-ai-cmd)",
        "OODA_LOOP_AI_CMD or OODA_LOOP_AI_CMD_ALIAS in the environment",
        f"ai_cmd, ai_cmd_alias or ai_api in procedures.{procedure} of ooda-config.yml",
        "ai_cmd, ai_cmd_alias or ai_api under loop: in ooda-config.yml "
        "(workspace or global config)",
    )
    hint = "set one of:\n" + "\n".join(f"    - {way}" for way in ways)
    hint += "\n  known aliases: " + ", ".join(sorted(config.aliases))
    return ConfigError(f"no AI command configured for procedure {procedure!r}", hint=hint)


def resolve_run_settings(
    config: Config,
    procedure: str,
    *,
    max_iterations: int | None = None,
    unlimited: bool = False,
    ai_cmd: str | None = None,
    ai_cmd_alias: str | None = None,
    require_ai: bool = True,
) -> RunSettings:
    """Resolve the iteration limit, timeouts and AI backend for one run of ``procedure``.

    Iterations: ``max_iterations`` > ``unlimited`` > procedure > ``loop`` > default.
    AI: ``ai_cmd`` > ``ai_cmd_alias`` > procedure ``ai_cmd`` > ``ai_cmd_alias`` >
    ``ai_api`` > loop ``ai_cmd`` > ``ai_cmd_alias`` > ``ai_api``.
    """
    proc = config.procedure(procedure)
    prov = config.provenance
    cli = Provenance("cli")
    default = Provenance("default")

    def from_proc(key: str) -> Provenance:
        return prov.get(f"procedures.{procedure}.{key}", default)

    def from_loop(key: str) -> Provenance:
        return prov.get(f"loop.{key}", default)

    out: dict[str, Provenance] = {}
    limit: int | None
    if max_iterations is not None:
        if (
            isinstance(max_iterations, bool)
            or not isinstance(max_iterations, int)
            or max_iterations < 1
        ):
            raise ConfigError(f"--max-iterations: expected an integer >= 1, got {max_iterations!r}")
        limit, out["max_iterations"] = max_iterations, Provenance("cli", source="--max-iterations")
    elif unlimited:
        limit, out["max_iterations"] = None, Provenance("cli", source="--unlimited")
    else:
        if proc.iteration_mode is not None:
            mode, mode_prov = proc.iteration_mode, from_proc("iteration_mode")
        elif proc.default_max_iterations is not None:
            mode, mode_prov = "max-iterations", from_proc("default_max_iterations")
        else:
            mode, mode_prov = config.loop.iteration_mode, from_loop("iteration_mode")
        if mode == "unlimited":
            limit, out["max_iterations"] = None, mode_prov
        elif proc.default_max_iterations is not None:
            limit = proc.default_max_iterations
            out["max_iterations"] = from_proc("default_max_iterations")
        else:
            limit = config.loop.default_max_iterations
            out["max_iterations"] = from_loop("default_max_iterations")

    timeout: int | None
    if proc.iteration_timeout is not None:
        timeout, out["iteration_timeout"] = proc.iteration_timeout, from_proc("iteration_timeout")
    else:
        timeout, out["iteration_timeout"] = (
            config.loop.iteration_timeout,
            from_loop("iteration_timeout"),
        )
    if proc.max_output_buffer is not None:
        buffer, out["max_output_buffer"] = proc.max_output_buffer, from_proc("max_output_buffer")
    else:
        buffer, out["max_output_buffer"] = (
            config.loop.max_output_buffer,
            from_loop("max_output_buffer"),
        )
    out["failure_threshold"] = from_loop("failure_threshold")
    out["show_ai_output"] = from_loop("show_ai_output")

    def alias_command(alias: str, source: Provenance, where: str) -> tuple[str, ...]:
        if alias not in config.aliases:
            raise ConfigError(
                f"{where}: unknown AI command alias {alias!r}",
                hint=_suggest(alias, config.aliases, "known aliases"),
            )
        alias_prov = prov.get(f"aliases.{alias}", default)
        return _split_command(
            config.aliases[alias], alias_prov if alias_prov.file else source, f"alias {alias}"
        )

    argv: tuple[str, ...] | None = None
    api: ApiSettings | None = None
    if ai_cmd is not None:
        argv, out["ai_cmd"] = (
            _split_command(ai_cmd, cli, "--ai-cmd"),
            Provenance("cli", source="--ai-cmd"),
        )
    elif ai_cmd_alias is not None:
        source = Provenance("cli", source="--ai-cmd-alias")
        argv, out["ai_cmd"] = alias_command(ai_cmd_alias, source, "--ai-cmd-alias"), source
    elif proc.ai_cmd is not None:
        argv = _split_command(proc.ai_cmd, from_proc("ai_cmd"), "ai_cmd")
        out["ai_cmd"] = from_proc("ai_cmd")
    elif proc.ai_cmd_alias is not None:
        source = from_proc("ai_cmd_alias")
        argv = alias_command(proc.ai_cmd_alias, source, f"procedure {procedure}: ai_cmd_alias")
        out["ai_cmd"] = source
    elif proc.ai_api is not None:
        api, out["ai_api"] = proc.ai_api, from_proc("ai_api")
    elif config.loop.ai_cmd is not None:
        argv = _split_command(config.loop.ai_cmd, from_loop("ai_cmd"), "loop.ai_cmd")
        out["ai_cmd"] = from_loop("ai_cmd")
    elif config.loop.ai_cmd_alias is not None:
        source = from_loop("ai_cmd_alias")
        argv = alias_command(config.loop.ai_cmd_alias, source, "loop.ai_cmd_alias")
        out["ai_cmd"] = source
    elif config.loop.ai_api is not None:
        api, out["ai_api"] = config.loop.ai_api, from_loop("ai_api")
    elif require_ai:
        raise _no_ai_error(config, procedure)

    return RunSettings(
        max_iterations=limit,
        iteration_timeout=timeout,
        max_output_buffer=buffer,
        failure_threshold=config.loop.failure_threshold,
        show_ai_output=config.loop.show_ai_output,
        ai_cmd=argv,
        ai_api=api,
        provenance=MappingProxyType(out),
    )
