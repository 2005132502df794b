"""Lint output (lint/report.py, lint/findings.py) and the package API."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import load_config_file
from pytest_ooda.errors import ConfigError
from pytest_ooda.lint import (
    RULES,
    format_json,
    format_text,
    lint_path,
    lint_procedure,
    resolve_settings,
)

from .helpers import (
    FAILURE,
    SUCCESS,
    good,
    project,
    run,
    with_observe,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_format_text_and_json(tmp_path: Path) -> None:
    report = run(tmp_path, good().replace(SUCCESS, "done"))
    text = format_text(report, relative_to=tmp_path)
    assert text.splitlines() == [
        "ooda-config.yml:2:3: OODA301 error: procedure good: no fragment says when to emit "
        + SUCCESS,
        "1 finding: 1 error, 0 warnings, 0 infos (1 procedure checked)",
    ]
    data = json.loads(format_json(report, relative_to=tmp_path))
    assert data["summary"] == {
        "error": 1,
        "warning": 0,
        "info": 0,
        "procedures": 1,
        "scenarios": 0,
        "exit_code": 1,
    }
    (finding,) = data["findings"]
    assert finding["id"] == "OODA301"
    assert finding["name"] == "no-success-signal"
    assert finding["file"] == "ooda-config.yml"
    assert (finding["line"], finding["column"]) == (2, 3)
    assert finding["why"] == RULES["OODA301"].why


def test_lint_procedure_uses_the_config_lint_section(tmp_path: Path) -> None:
    cfg = project(tmp_path, "lint:\n  OODA302: info\n" + good().replace(FAILURE, "stuck"))
    config = load_config_file(cfg)
    (finding,) = lint_procedure(config, "good")
    assert (finding.id, finding.severity, finding.why) == (
        "OODA302",
        "info",
        RULES["OODA302"].why,
    )
    explicit = resolve_settings(config, severities={"OODA302": "off"})
    assert lint_procedure(config, "good", settings=explicit) == []


def test_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        lint_path("absent.yml", cwd=tmp_path)


def test_lint_does_not_count_as_composition(tmp_path: Path) -> None:
    from pytest_ooda.compose import add_use_observer

    seen: list[object] = []
    remove = add_use_observer(seen.append)
    try:
        run(tmp_path, with_observe("{path: p/read.md}"), {"p/read.md": "Read.\n"})
    finally:
        remove()
    assert seen == []
