"""Effective severities: rule defaults < the config's ``lint:`` section < overrides <
``--select``/``--ignore``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import SEVERITY_LEVELS
from pytest_ooda._util import closest
from pytest_ooda.errors import ConfigError
from pytest_ooda.lint.rules import RULES, RULES_BY_NAME, Rule

if TYPE_CHECKING:
    from pytest_ooda.config import Config


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
    return RULES.get(text.upper()) or RULES_BY_NAME.get(text.lower())


def _unknown_rule_hint(key: str) -> str:
    close = closest(key, [*RULES, *RULES_BY_NAME], cutoff=0.75)
    known = ", ".join(RULES)
    return f"did you mean {close!r}? known rules: {known}" if close else f"known rules: {known}"


def _check_severity(value: object, *, rule: Rule, where: str, **loc: Any) -> str:
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text == "warn":
        text = "warning"
    if text not in SEVERITY_LEVELS:
        raise ConfigError(
            f"{where}: invalid severity {value!r} for {rule.id}",
            hint=f"expected one of: {', '.join(SEVERITY_LEVELS)}",
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
                        hint="for example OODA201=error; severities: " + ", ".join(SEVERITY_LEVELS),
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
