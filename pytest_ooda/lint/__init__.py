"""Lint rules for procedures and fragments: stable IDs, severities, located findings.

Rules are grouped like the validation checklist they borrow from: ``OODA0xx`` the config
must load and render, ``OODA1xx`` procedure structure, ``OODA2xx`` template parameters,
``OODA3xx`` the success/failure signals, ``OODA4xx`` unused things. Each finding names the
``file:line:col`` of the offending YAML node (or fragment file), and every rule's default
severity can be changed per project (a ``lint:`` section in the config file) and per run
(ini / command-line overrides), including ``off``.

Linting never goes through ``compose``: rendering here must not count as "composed" for
fragment coverage. The contract is this module; the rules live in :mod:`.rules` (the
table), :mod:`.procedure` and :mod:`.project`, severities in :mod:`.settings`, findings
in :mod:`.findings` and output in :mod:`.report`.
"""

from __future__ import annotations

from pytest_ooda._types import SEVERITIES
from pytest_ooda.errors import LintWarning
from pytest_ooda.lint.findings import Collector, Finding
from pytest_ooda.lint.material import lint_material_dir
from pytest_ooda.lint.procedure import lint_procedure
from pytest_ooda.lint.project import lint_config, lint_path
from pytest_ooda.lint.report import (
    LintReport,
    format_json,
    format_text,
)
from pytest_ooda.lint.rules import RULES, Rule
from pytest_ooda.lint.settings import (
    LintSettings,
    parse_rule_list,
    parse_severity_overrides,
    resolve_settings,
)

__all__ = [
    "RULES",
    "SEVERITIES",
    "Collector",
    "Finding",
    "LintReport",
    "LintSettings",
    "LintWarning",
    "Rule",
    "format_json",
    "format_text",
    "lint_config",
    "lint_material_dir",
    "lint_path",
    "lint_procedure",
    "parse_rule_list",
    "parse_severity_overrides",
    "resolve_settings",
]
