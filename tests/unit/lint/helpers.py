"""Shared helpers of the lint tests: a project on disk, a lint run, finding lookups."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from pytest_ooda.lint import (
    Finding,
    LintReport,
    lint_path,
)

if TYPE_CHECKING:
    from pathlib import Path

SUCCESS = "<promise>SUCCESS</promise>"


FAILURE = "<promise>FAILURE</promise>"


GOOD_PHASES = f"""\
    observe: [{{content: "Read the repository."}}]
    orient: [{{content: "Understand the task."}}]
    decide: [{{content: "If you are blocked, output {FAILURE}."}}]
    act: [{{content: "When the task is done, output {SUCCESS}."}}]
"""


def project(tmp_path: Path, config: str, files: dict[str, str] | None = None) -> Path:
    for name, text in (files or {}).items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    cfg = tmp_path / "ooda-config.yml"
    cfg.write_text(textwrap.dedent(config), encoding="utf-8")
    return cfg


def run(
    tmp_path: Path, config: str, files: dict[str, str] | None = None, **kw: object
) -> LintReport:
    project(tmp_path, config, files)
    return lint_path(None, cwd=tmp_path, **kw)  # type: ignore[arg-type]


def ids(report: LintReport) -> list[str]:
    return [f.id for f in report.findings]


def only(report: LintReport, rule: str) -> Finding:
    found = [f for f in report.findings if f.id == rule]
    assert len(found) == 1, report.findings
    return found[0]


def good(name: str = "good", extra: str = "") -> str:
    return f"procedures:\n  {name}:\n{GOOD_PHASES}{extra}"


TEMPLATE = """\
Read these {{.kind}} files:
{{range .paths}}- {{.}}
{{end}}
"""


def with_observe(action: str, extra: str = "") -> str:
    return good(extra=extra).replace(
        'observe: [{content: "Read the repository."}]', f"observe:\n      - {action}"
    )
