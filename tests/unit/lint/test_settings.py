"""Lint settings (lint/settings.py): severities, select/ignore."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.errors import ConfigError
from pytest_ooda.lint import (
    lint_path,
    parse_rule_list,
    parse_severity_overrides,
    resolve_settings,
)

from .helpers import (
    FAILURE,
    SUCCESS,
    good,
    ids,
    only,
    run,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_lint_section_changes_and_disables_rules(tmp_path: Path) -> None:
    config = (
        good()
        .replace(FAILURE, "stuck")
        .replace('orient: [{content: "Understand the task."}]', "orient: []")
    )
    report = run(tmp_path, "lint:\n  OODA302: error\n  empty-phase: off\n" + config)
    assert [(f.id, f.severity) for f in report.findings] == [("OODA302", "error")]
    assert report.exit_code == 1


def test_yaml_bare_off_switches_a_rule_off(tmp_path: Path) -> None:
    config = good().replace(FAILURE, "stuck")
    assert ids(run(tmp_path, "lint:\n  OODA302: off\n" + config)) == []


def test_run_overrides_beat_the_lint_section(tmp_path: Path) -> None:
    config = "lint:\n  OODA302: error\n" + good().replace(FAILURE, "stuck")
    report = run(tmp_path, config, severities={"OODA302": "info"})
    assert [(f.id, f.severity) for f in report.findings] == [("OODA302", "info")]
    assert report.exit_code == 0


def test_unknown_rule_in_lint_section_is_a_located_config_error(tmp_path: Path) -> None:
    report = run(tmp_path, "lint:\n  OODA999: error\n" + good())
    finding = only(report, "OODA001")
    assert (finding.line, finding.column) == (2, 3)
    assert "unknown rule 'OODA999'" in finding.message
    assert report.exit_code == 1


def test_config_error_severity_is_fixed(tmp_path: Path) -> None:
    report = run(tmp_path, "lint:\n  OODA001: warning\n" + good())
    assert "cannot be changed" in only(report, "OODA001").message
    with pytest.raises(ConfigError, match="cannot be changed"):
        parse_severity_overrides(["OODA001=off"])
    with pytest.raises(ConfigError, match="cannot be changed"):
        lint_path(None, cwd=tmp_path, severities={"OODA001": "off"})


def test_parse_severity_overrides() -> None:
    assert parse_severity_overrides(["OODA201=error,unused-alias=off", " OODA302=warn"]) == {
        "OODA201": "error",
        "OODA402": "off",
        "OODA302": "warning",
    }
    with pytest.raises(ConfigError, match="expected RULE=SEVERITY"):
        parse_severity_overrides(["OODA201"])
    with pytest.raises(ConfigError, match="invalid severity 'loud'"):
        parse_severity_overrides(["OODA201=loud"])
    with pytest.raises(ConfigError, match="did you mean 'OODA201'"):
        parse_severity_overrides(["OODA21=error"])


def test_parse_rule_list_accepts_ids_prefixes_and_names() -> None:
    assert parse_rule_list(["OODA2"]) == ("OODA201", "OODA202", "OODA203", "OODA204", "OODA205")
    assert parse_rule_list(["ooda301, unused-alias", "OODA301"]) == ("OODA301", "OODA402")
    with pytest.raises(ConfigError, match="unknown lint rule or prefix 'OODA9'"):
        parse_rule_list(["OODA9"], source="--select")


def test_select_and_ignore(tmp_path: Path) -> None:
    config = good().replace(SUCCESS, "done").replace(FAILURE, "stuck")
    assert ids(run(tmp_path, config, select=["OODA302"])) == ["OODA302"]
    assert ids(run(tmp_path, config, ignore=["no-success-signal"])) == ["OODA302"]
    assert ids(run(tmp_path, config, select=["OODA3"], ignore=["OODA301"])) == ["OODA302"]
    settings = resolve_settings(None, select=["OODA1"])
    assert settings.enabled("OODA001")
    assert not settings.enabled("OODA301")
