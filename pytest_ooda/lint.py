"""Lint rules for procedures and fragments: stable IDs, severities, located findings.

Rules are grouped like the validation checklist they borrow from: ``OODA0xx`` the config
must load and render, ``OODA1xx`` procedure structure, ``OODA2xx`` template parameters,
``OODA3xx`` the success/failure signals, ``OODA4xx`` unused things. Each finding names the
``file:line:col`` of the offending YAML node (or fragment file), and every rule's default
severity can be changed per project (a ``lint:`` section in the config file) and per run
(ini / command-line overrides), including ``off``.

Linting never goes through ``compose``: rendering here must not count as "composed" for
fragment coverage.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import ConfigError, LintWarning, OodaError

if TYPE_CHECKING:
    from pytest_ooda.config import Config, FragmentAction, Procedure

__all__ = [
    "RULES",
    "SEVERITIES",
    "Finding",
    "LintReport",
    "LintSettings",
    "LintWarning",
    "Rule",
    "format_json",
    "format_text",
    "lint_config",
    "lint_path",
    "lint_procedure",
    "parse_rule_list",
    "parse_severity_overrides",
    "resolve_settings",
]

SEVERITIES = ("error", "warning", "info")
_SEVERITY_CHOICES = (*SEVERITIES, "off")
SUCCESS_SIGNAL = "<promise>SUCCESS</promise>"
FAILURE_SIGNAL = "<promise>FAILURE</promise>"
_TEMPLATE_OPEN = "{{"


@dataclass(frozen=True)
class Rule:
    """One lint rule: its stable ``id``, a short ``name``, default severity and rationale."""

    id: str
    name: str
    severity: str
    summary: str
    why: str
    configurable: bool = True


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "OODA001",
            "config-error",
            "error",
            "the config file does not load",
            "Nothing else can be checked until the file loads; the loop would refuse it too.",
            configurable=False,
        ),
        Rule(
            "OODA002",
            "render-error",
            "error",
            "a fragment fails to render (template execution error)",
            "The loop would stop with this error on its first iteration.",
        ),
        Rule(
            "OODA003",
            "config-warning",
            "warning",
            "the config loads with a warning (an unknown top-level key)",
            "Unknown top-level keys are ignored, so a misspelt section silently does nothing.",
        ),
        Rule(
            "OODA101",
            "empty-phase",
            "warning",
            "a phase has no fragments",
            "An empty phase is left out of the prompt: the agent gets no instruction for it.",
        ),
        Rule(
            "OODA102",
            "duplicate-fragment",
            "warning",
            "the same fragment (same file and parameters) is listed twice in one phase",
            "The agent reads the same instruction twice; usually a copy-paste slip.",
        ),
        Rule(
            "OODA103",
            "unlimited-without-timeout",
            "warning",
            "iteration_mode unlimited without an iteration_timeout",
            "With no iteration limit and no timeout, one hung AI process stalls the loop forever.",
        ),
        Rule(
            "OODA201",
            "missing-parameter",
            "warning",
            "a template uses a parameter the fragment action does not supply",
            "Go templates render a missing key as the text <no value>, silently.",
        ),
        Rule(
            "OODA202",
            "unused-parameter",
            "warning",
            "a parameter is supplied that the template never uses",
            "Usually a misspelt parameter name, so the template gets <no value> instead.",
        ),
        Rule(
            "OODA203",
            "parameters-without-template",
            "warning",
            "parameters are given for a fragment with no template syntax",
            "The parameters have no effect: the fragment has nothing to substitute.",
        ),
        Rule(
            "OODA204",
            "template-without-parameters",
            "warning",
            "a fragment with template syntax is used without parameters",
            "Without parameters the file is used verbatim, so the agent sees raw {{...}} text.",
        ),
        Rule(
            "OODA301",
            "no-success-signal",
            "error",
            "no fragment tells the agent when to emit <promise>SUCCESS</promise>",
            "The preamble only explains the signal; without procedure-specific success "
            "criteria the loop cannot end in success except by luck.",
        ),
        Rule(
            "OODA302",
            "no-failure-signal",
            "warning",
            "no fragment tells the agent when to emit <promise>FAILURE</promise>",
            "Without failure criteria a blocked agent keeps iterating until the limit.",
        ),
        Rule(
            "OODA401",
            "unused-fragment-file",
            "info",
            "a fragment file in the config's fragment folders is used by no procedure",
            "Dead prompt text drifts out of date; delete it or use it.",
        ),
        Rule(
            "OODA402",
            "unused-alias",
            "info",
            "an ai_cmd_aliases entry is never used",
            "An alias nobody selects is noise, or a typo in an ai_cmd_alias somewhere.",
        ),
        Rule(
            "OODA403",
            "redundant-builtin-override",
            "info",
            "a procedure overrides a built-in with identical values",
            "The entry changes nothing and will silently stop tracking built-in updates.",
        ),
    )
}
_BY_NAME = {rule.name: rule for rule in RULES.values()}


@dataclass(frozen=True)
class Finding:
    """One rule violation at one place."""

    id: str
    severity: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    procedure: str | None = None

    @property
    def rule(self) -> Rule:
        return RULES[self.id]

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def why(self) -> str:
        return self.rule.why

    def location(self, *, relative_to: Path | None = None) -> str:
        """``file:line:col`` (as much as is known), the file relative to ``relative_to``."""
        if self.file is None:
            return ""
        parts = [_display_path(self.file, relative_to)]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def format(self, *, relative_to: Path | None = None) -> str:
        """``file:line:col: OODA201 warning: message``."""
        loc = self.location(relative_to=relative_to)
        text = f"{self.id} {self.severity}: {self.message}"
        return f"{loc}: {text}" if loc else text

    def to_dict(self, *, relative_to: Path | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "file": _display_path(self.file, relative_to) if self.file is not None else None,
            "line": self.line,
            "column": self.column,
            "procedure": self.procedure,
            "why": self.why,
        }

    def _sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file or "", self.line or 0, self.column or 0, self.id, self.message)


def _display_path(file: str, relative_to: Path | None) -> str:
    base = relative_to if relative_to is not None else Path.cwd()
    try:
        rel = os.path.relpath(file, base)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


# ---------------------------------------------------------------------------------------
# Settings: severities, select / ignore


@dataclass(frozen=True)
class LintSettings:
    """Effective severity per rule id (``off`` disables), after every override."""

    severities: Mapping[str, str] = field(default_factory=dict)

    def severity(self, rule_id: str) -> str:
        return self.severities.get(rule_id, RULES[rule_id].severity)

    def enabled(self, rule_id: str) -> bool:
        return self.severity(rule_id) != "off"


def _lookup_rule(key: str) -> Rule | None:
    text = key.strip()
    return RULES.get(text.upper()) or _BY_NAME.get(text.lower())


def _unknown_rule_hint(key: str) -> str:
    candidates = [*RULES, *_BY_NAME]
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.75)
    known = ", ".join(RULES)
    return f"did you mean {close[0]!r}? known rules: {known}" if close else f"known rules: {known}"


def _check_severity(value: object, *, rule: Rule, where: str, **loc: Any) -> str:
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text == "warn":
        text = "warning"
    if text not in _SEVERITY_CHOICES:
        raise ConfigError(
            f"{where}: invalid severity {value!r} for {rule.id}",
            hint=f"expected one of: {', '.join(_SEVERITY_CHOICES)}",
            **loc,
        )
    if not rule.configurable and text != rule.severity:
        raise ConfigError(
            f"{where}: the severity of {rule.id} ({rule.name}) cannot be changed", **loc
        )
    return text


def parse_severity_overrides(
    items: Iterable[str] | Mapping[str, str], *, source: str = "--severity"
) -> dict[str, str]:
    """Parse ``["OODA201=error", "unused-alias=off,OODA302=info"]`` (or a mapping).

    Keys are rule ids or names. Raises ``ConfigError`` naming ``source`` on a bad entry.
    """
    pairs: list[tuple[str, str]] = []
    if isinstance(items, Mapping):
        pairs = [(str(k), str(v)) for k, v in items.items()]
    else:
        for item in items:
            for chunk in re.split(r"[,\s]+", item.strip()):
                if not chunk:
                    continue
                key, sep, value = chunk.partition("=")
                if not sep or not key or not value:
                    raise ConfigError(
                        f"{source}: expected RULE=SEVERITY, got {chunk!r}",
                        hint="for example OODA201=error; severities: "
                        + ", ".join(_SEVERITY_CHOICES),
                    )
                pairs.append((key, value))
    out: dict[str, str] = {}
    for key, value in pairs:
        rule = _lookup_rule(key)
        if rule is None:
            raise ConfigError(f"{source}: unknown lint rule {key!r}", hint=_unknown_rule_hint(key))
        out[rule.id] = _check_severity(value, rule=rule, where=source)
    return out


def parse_rule_list(items: Iterable[str], *, source: str = "--select") -> tuple[str, ...]:
    """Rule ids matched by ``["OODA2", "OODA301,unused-alias"]`` (ids, id prefixes, names)."""
    matched: list[str] = []
    for item in items:
        for chunk in re.split(r"[,\s]+", item.strip()):
            if not chunk:
                continue
            rule = _lookup_rule(chunk)
            ids = (
                [rule.id]
                if rule is not None
                else [rid for rid in RULES if rid.startswith(chunk.upper())]
            )
            if not ids:
                raise ConfigError(
                    f"{source}: unknown lint rule or prefix {chunk!r}",
                    hint=_unknown_rule_hint(chunk),
                )
            matched.extend(rid for rid in ids if rid not in matched)
    return tuple(matched)


def _config_lint_section(config: Config) -> dict[str, str]:
    """Validate the raw ``lint:`` section, locating mistakes in the file that holds them."""
    raw = dict(getattr(config, "lint", {}) or {})
    if not raw:
        return {}
    out: dict[str, str] = {}
    for key, value in raw.items():
        where = config.locations.get(f"lint.{key}")
        loc: dict[str, Any] = (
            {"file": where.file, "line": where.line, "column": where.column}
            if where is not None
            else {}
        )
        rule = _lookup_rule(str(key))
        if rule is None:
            raise ConfigError(
                f"lint: unknown rule {key!r}", hint=_unknown_rule_hint(str(key)), **loc
            )
        out[rule.id] = _check_severity(value, rule=rule, where="lint", **loc)
    return out


def resolve_settings(
    config: Config | None = None,
    *,
    severities: Mapping[str, str] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> LintSettings:
    """Combine defaults < the config's ``lint:`` section < ``severities`` < select/ignore.

    ``select`` (when non-empty) switches off every rule it does not match; ``ignore``
    switches off what it matches. Both take ids, id prefixes (``OODA2``) or rule names.
    """
    effective: dict[str, str] = {}
    if config is not None:
        effective.update(_config_lint_section(config))
    if severities:
        effective.update(parse_severity_overrides(severities, source="severity override"))
    selected = set(parse_rule_list(select, source="--select")) if select else None
    ignored = set(parse_rule_list(ignore, source="--ignore"))
    for rule_id, rule in RULES.items():
        if not rule.configurable:
            continue
        if (selected is not None and rule_id not in selected) or rule_id in ignored:
            effective[rule_id] = "off"
    return LintSettings(effective)


# ---------------------------------------------------------------------------------------
# Helpers shared by the rules


def _action_file(action: FragmentAction) -> Path | None:
    if action.path is None:
        return None
    file = getattr(action, "file", None)
    if file is not None:
        return Path(file)
    from pytest_ooda.fragments import resolve_fragment_path

    return resolve_fragment_path(action.path, action.base_dir)


def _action_text(action: FragmentAction) -> str:
    from pytest_ooda.fragments import load_fragment_text

    return load_fragment_text(action)


def _is_template(action: FragmentAction) -> bool:
    return bool(action.parameters)


def _where(procedure: Procedure, phase: str, index: int) -> str:
    return f"procedure {procedure.name}: {phase}[{index}]"


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _action_identity(action: FragmentAction) -> tuple[Any, ...]:
    try:
        file = _action_file(action)
    except OodaError:
        file = None
    source: Any = str(file) if file is not None else ("path", action.path, str(action.base_dir))
    if action.path is None:
        source = ("inline", action.content)
    return (source, _freeze(action.parameters))


class _Collector:
    """Accumulates findings, dropping rules that are off and applying severities."""

    def __init__(self, settings: LintSettings) -> None:
        self.settings = settings
        self.findings: list[Finding] = []

    def add(
        self,
        rule_id: str,
        message: str,
        *,
        file: Path | str | None = None,
        line: int | None = None,
        column: int | None = None,
        procedure: str | None = None,
    ) -> None:
        if not self.settings.enabled(rule_id):
            return
        self.findings.append(
            Finding(
                rule_id,
                self.settings.severity(rule_id),
                message,
                str(file) if file is not None else None,
                line,
                column,
                procedure,
            )
        )

    def add_at(self, rule_id: str, message: str, location: Any, **kw: Any) -> None:
        self.add(
            rule_id,
            message,
            file=getattr(location, "file", None),
            line=getattr(location, "line", None),
            column=getattr(location, "column", None),
            **kw,
        )


# ---------------------------------------------------------------------------------------
# Procedure rules


def _render(action: FragmentAction, label: str) -> str:
    text = _action_text(action)
    if not _is_template(action):
        return text
    from pytest_ooda.gotemplate import render

    return render(text, action.parameters, name=label)


def _lint_actions(out: _Collector, procedure: Procedure) -> tuple[bool, bool, bool]:
    """Per-action rules; returns (rendered cleanly, success guidance, failure guidance)."""
    rendered_ok = True
    success = failure = False
    for phase, actions in procedure.phases().items():
        if not actions:
            out.add_at(
                "OODA101",
                f"procedure {procedure.name}: phase {phase} is empty",
                procedure.field_locations.get(phase, procedure.location),
                procedure=procedure.name,
            )
        seen: dict[tuple[Any, ...], int] = {}
        for index, action in enumerate(actions):
            where = _where(procedure, phase, index)
            label = action.source_label()
            identity = _action_identity(action)
            if identity in seen:
                out.add_at(
                    "OODA102",
                    f"{where}: {label} is already listed as {phase}[{seen[identity]}]",
                    action.location,
                    procedure=procedure.name,
                )
            else:
                seen[identity] = index
            try:
                text = _action_text(action)
                rendered = _render(action, label)
            except OodaError as exc:
                rendered_ok = False
                out.add_at(
                    "OODA002",
                    f"{where}: {label}: {exc.message}",
                    action.location,
                    procedure=procedure.name,
                )
                continue
            success = success or SUCCESS_SIGNAL in rendered
            failure = failure or FAILURE_SIGNAL in rendered
            _lint_parameters(out, procedure, action, where, label, text)
    return rendered_ok, success, failure


def _lint_parameters(
    out: _Collector,
    procedure: Procedure,
    action: FragmentAction,
    where: str,
    label: str,
    text: str,
) -> None:
    # Imported on first use: the template engine (and Jinja2) costs a noticeable share
    # of a pytest session whose procedures use no templated fragments.
    from pytest_ooda.gotemplate import first_use_line, referenced_params, uses_whole_dot

    has_syntax = _TEMPLATE_OPEN in text
    if not _is_template(action):
        if has_syntax:
            line = text.count("\n", 0, text.index(_TEMPLATE_OPEN)) + 1
            out.add_at(
                "OODA204",
                f"{where}: {label} has template syntax (line {line}) but no parameters, "
                "so it is used verbatim",
                action.location,
                procedure=procedure.name,
            )
        return
    supplied = {str(k) for k in action.parameters}
    if not has_syntax:
        out.add_at(
            "OODA203",
            f"{where}: parameters {', '.join(sorted(supplied))} given but {label} "
            "has no template syntax",
            action.location,
            procedure=procedure.name,
        )
        return
    try:
        used = set(referenced_params(text))
    except OodaError:
        return
    for name in sorted(used - supplied):
        first = first_use_line(text, name)
        at = f" (line {first})" if first is not None else ""
        out.add_at(
            "OODA201",
            f"{where}: {label}{at} uses .{name} but the action does not supply it "
            "(renders <no value>)",
            action.location,
            procedure=procedure.name,
        )
    if uses_whole_dot(text):
        return
    for name in sorted(supplied - used):
        out.add_at(
            "OODA202",
            f"{where}: parameter {name!r} is never used by {label}",
            _parameter_location(action, name),
            procedure=procedure.name,
        )


def _parameter_location(action: FragmentAction, name: str) -> Any:
    """The YAML position of ``parameters.<name>`` for the action, else the action itself."""
    return action.parameter_locations.get(name, action.location)


def _lint_iteration(out: _Collector, config: Config, procedure: Procedure) -> None:
    if procedure.iteration_mode != "unlimited":
        return
    timeout = procedure.iteration_timeout or config.loop.iteration_timeout
    if timeout is None:
        out.add_at(
            "OODA103",
            f"procedure {procedure.name}: iteration_mode unlimited without an iteration_timeout",
            procedure.field_locations.get("iteration_mode", procedure.location),
            procedure=procedure.name,
        )


@functools.lru_cache(maxsize=1)
def _builtin_procedures() -> Mapping[str, Procedure]:
    from pytest_ooda.config import load_builtin_config

    return load_builtin_config().procedures


def _procedure_identity(procedure: Procedure) -> tuple[Any, ...]:
    phases = tuple(
        (phase, tuple(_action_identity(a) for a in actions))
        for phase, actions in procedure.phases().items()
    )
    return (
        procedure.display,
        procedure.summary,
        procedure.description,
        phases,
        procedure.iteration_mode,
        procedure.default_max_iterations,
        procedure.iteration_timeout,
        procedure.max_output_buffer,
        procedure.ai_cmd,
        procedure.ai_cmd_alias,
        procedure.ai_api,
    )


def _is_builtin_location(procedure: Procedure) -> bool:
    from pytest_ooda.fragments import builtin_procedures_file

    file = procedure.location.file
    if file is None:
        return True
    return Path(file).resolve() == builtin_procedures_file().resolve()


def _lint_builtin_override(out: _Collector, procedure: Procedure) -> None:
    if _is_builtin_location(procedure):
        return
    try:
        builtin = _builtin_procedures().get(procedure.name)
    except OodaError:
        return
    if builtin is not None and _procedure_identity(builtin) == _procedure_identity(procedure):
        out.add_at(
            "OODA403",
            f"procedure {procedure.name}: overrides the built-in with identical values",
            procedure.location,
            procedure=procedure.name,
        )


def lint_procedure(
    config: Config, name: str, *, settings: LintSettings | None = None
) -> list[Finding]:
    """The findings for one procedure of ``config`` (procedure-level rules only).

    ``settings`` defaults to :func:`resolve_settings` of ``config`` (its ``lint:`` section).
    """
    if settings is None:
        settings = resolve_settings(config)
    procedure = config.procedure(name)
    out = _Collector(settings)
    rendered_ok, success, failure = _lint_actions(out, procedure)
    if rendered_ok and not success:
        out.add_at(
            "OODA301",
            f"procedure {procedure.name}: no fragment says when to emit {SUCCESS_SIGNAL}",
            procedure.location,
            procedure=procedure.name,
        )
    if rendered_ok and not failure:
        out.add_at(
            "OODA302",
            f"procedure {procedure.name}: no fragment says when to emit {FAILURE_SIGNAL}",
            procedure.location,
            procedure=procedure.name,
        )
    _lint_iteration(out, config, procedure)
    _lint_builtin_override(out, procedure)
    return sorted(out.findings, key=Finding._sort_key)


# ---------------------------------------------------------------------------------------
# Config-level rules


def _declared_in(procedure: Procedure, files: set[Path]) -> bool:
    file = procedure.location.file
    return file is not None and Path(file).resolve() in files


def _lint_loop(out: _Collector, config: Config, files: set[Path]) -> None:
    loop = config.loop
    if loop.iteration_mode != "unlimited" or loop.iteration_timeout is not None:
        return
    where = config.locations.get("loop.iteration_mode")
    if where is None or where.file is None or Path(where.file).resolve() not in files:
        return
    out.add(
        "OODA103",
        "loop: iteration_mode unlimited without an iteration_timeout",
        file=where.file,
        line=where.line,
        column=where.column,
    )


def _lint_unused_fragments(
    out: _Collector, config: Config, procedures: Sequence[Procedure]
) -> None:
    from pytest_ooda.fragments import BUILTIN_PREFIX

    used: set[Path] = set()
    folders: dict[Path, set[str]] = {}
    for procedure in config.procedures.values():
        for actions in procedure.phases().values():
            for action in actions:
                try:
                    file = _action_file(action)
                except OodaError:
                    continue
                if file is not None:
                    used.add(file.resolve())
    for procedure in procedures:
        for actions in procedure.phases().values():
            for action in actions:
                if action.path is None or action.path.startswith(BUILTIN_PREFIX):
                    continue
                try:
                    file = _action_file(action)
                except OodaError:
                    continue
                if file is not None:
                    folders.setdefault(file.resolve().parent, set()).add(file.suffix)
    # A fragment kept next to the config file makes the project root a "fragment folder";
    # its README and notes are not fragments, so that folder is not scanned.
    roots = {
        Path(p.location.file).resolve().parent for p in procedures if p.location.file is not None
    }
    for folder in sorted(folders):
        if folder in roots:
            continue
        suffixes = folders[folder]
        for candidate in sorted(folder.iterdir()):
            if (
                candidate.is_file()
                and candidate.suffix in suffixes
                and candidate.resolve() not in used
            ):
                out.add(
                    "OODA401",
                    f"fragment file {candidate.name} is not used by any procedure",
                    file=candidate,
                    line=1,
                    column=1,
                )


def _lint_unused_aliases(out: _Collector, config: Config, files: set[Path]) -> None:
    used = {config.loop.ai_cmd_alias}
    used.update(p.ai_cmd_alias for p in config.procedures.values())
    for alias in sorted(config.aliases):
        where = config.locations.get(f"aliases.{alias}")
        if alias in used or where is None or where.file is None:
            continue
        if Path(where.file).resolve() not in files:
            continue
        out.add(
            "OODA402",
            f"alias {alias!r} is defined but no loop or procedure uses it",
            file=where.file,
            line=where.line,
            column=where.column,
        )


def _lint_config_warnings(out: _Collector, config: Config, files: set[Path]) -> None:
    for warning in config.warnings:
        if warning.file is None or Path(warning.file).resolve() not in files:
            continue
        out.add(
            "OODA003",
            warning.message,
            file=Path(warning.file).resolve(),
            line=warning.line,
            column=warning.column,
        )


def lint_config(
    config: Config,
    *,
    settings: LintSettings | None = None,
    files: Iterable[str | Path] | None = None,
) -> list[Finding]:
    """All findings for the procedures declared in ``files`` (default: ``config.files``).

    Procedures merged in from other tiers (built-ins, the global config) are left alone
    unless their declaring file is listed, so a workspace lint reports the workspace.
    """
    if settings is None:
        settings = resolve_settings(config)
    wanted = {Path(f).resolve() for f in (files if files is not None else config.files)}
    procedures = [p for p in config.procedures.values() if _declared_in(p, wanted)]
    findings: list[Finding] = []
    for procedure in procedures:
        findings.extend(lint_procedure(config, procedure.name, settings=settings))
    out = _Collector(settings)
    _lint_config_warnings(out, config, wanted)
    _lint_loop(out, config, wanted)
    _lint_unused_fragments(out, config, procedures)
    _lint_unused_aliases(out, config, wanted)
    findings.extend(out.findings)
    return sorted(findings, key=Finding._sort_key)


# ---------------------------------------------------------------------------------------
# Whole-file entry point and output


@dataclass(frozen=True)
class LintReport:
    """What ``ooda lint`` prints: the findings and how many procedures were checked."""

    findings: tuple[Finding, ...]
    procedures: tuple[str, ...]
    files: tuple[str, ...]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def exit_code(self) -> int:
        return 1 if self.count("error") else 0

    def summary(self) -> str:
        checked = f"{len(self.procedures)} procedure{'s' if len(self.procedures) != 1 else ''}"
        if not self.findings:
            return f"no findings ({checked} checked)"
        parts = [f"{self.count(s)} {s}{'s' if self.count(s) != 1 else ''}" for s in SEVERITIES]
        total = len(self.findings)
        return f"{total} finding{'s' if total != 1 else ''}: {', '.join(parts)} ({checked} checked)"


def lint_path(
    config_file: str | Path | None = None,
    *,
    cwd: Path | None = None,
    builtin: bool = False,
    severities: Mapping[str, str] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> LintReport:
    """Lint a config file (default ``./ooda-config.yml``; the built-ins when there is none).

    A file that does not load is reported as one ``OODA001`` finding. Mistakes in the
    options themselves (unknown rule, bad severity) raise ``ConfigError``.
    """
    from pytest_ooda.config import load_config
    from pytest_ooda.fragments import builtin_procedures_file

    base = cwd if cwd is not None else Path.cwd()
    # Options are checked before the file, so a typo in --select is reported as such.
    option_settings = resolve_settings(None, severities=severities, select=select, ignore=ignore)
    if config_file is None:
        default = base / "ooda-config.yml"
        target: Path | None = default if default.is_file() else None
    else:
        target = Path(config_file)
        if not target.is_absolute():
            target = base / target
        if not target.is_file():
            raise ConfigError(f"config file not found: {config_file}")
    lint_files = [target] if target is not None else []
    if builtin or target is None:
        lint_files.append(builtin_procedures_file())
    try:
        config = load_config(target, cwd=base, env={}, global_config=False)
        settings = resolve_settings(config, severities=severities, select=select, ignore=ignore)
    except OodaError as exc:
        if not option_settings.enabled("OODA001"):
            raise
        finding = Finding(
            "OODA001",
            "error",
            exc.message,
            exc.file or (str(target) if target else None),
            exc.line,
            exc.column,
        )
        return LintReport((finding,), (), tuple(str(f) for f in lint_files))
    findings = lint_config(config, settings=settings, files=lint_files)
    wanted = {f.resolve() for f in lint_files}
    names = tuple(p.name for p in config.procedures.values() if _declared_in(p, wanted))
    return LintReport(tuple(findings), names, tuple(str(f) for f in lint_files))


def format_text(report: LintReport, *, relative_to: Path | None = None) -> str:
    """One ``file:line:col: ID severity: message`` line per finding, then the summary."""
    lines = [finding.format(relative_to=relative_to) for finding in report.findings]
    lines.append(report.summary())
    return "\n".join(lines) + "\n"


def format_json(report: LintReport, *, relative_to: Path | None = None) -> str:
    """The report as a JSON document (``findings`` list and ``summary`` counts)."""
    payload = {
        "findings": [f.to_dict(relative_to=relative_to) for f in report.findings],
        "summary": {
            **{s: report.count(s) for s in SEVERITIES},
            "procedures": len(report.procedures),
            "exit_code": report.exit_code,
        },
    }
    return json.dumps(payload, indent=2) + "\n"
