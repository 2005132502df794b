"""A lint run's result and its text and JSON renderings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda._types import SEVERITIES

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.lint.findings import Finding

    pass


@dataclass(frozen=True)
class LintReport:
    """What ``ooda lint`` prints: the findings and how many procedures were checked."""

    findings: tuple[Finding, ...]
    procedures: tuple[str, ...]
    files: tuple[str, ...]
    #: How many scenario files were read.
    scenarios: int = 0
    #: How many commands, skills and subagents of the config's agent material were read.
    material: int = 0

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def exit_code(self) -> int:
        return 1 if self.count("error") else 0

    def summary(self) -> str:
        checked = f"{len(self.procedures)} procedure{'s' if len(self.procedures) != 1 else ''}"
        if self.scenarios:
            checked += f", {self.scenarios} scenario{'s' if self.scenarios != 1 else ''}"
        if self.material:
            checked += f", {self.material} of the agent material (commands, skills, subagents)"
        if not self.findings:
            return f"no findings ({checked} checked)"
        parts = [f"{self.count(s)} {s}{'s' if self.count(s) != 1 else ''}" for s in SEVERITIES]
        total = len(self.findings)
        return f"{total} finding{'s' if total != 1 else ''}: {', '.join(parts)} ({checked} checked)"


def format_text(report: LintReport, *, relative_to: Path | None = None) -> str:
    """One ``file:line:col: ID severity: message`` line per finding (and its hint, such as
    a "did you mean", indented below it), then the summary."""
    lines: list[str] = []
    for finding in report.findings:
        lines.append(finding.format(relative_to=relative_to))
        if finding.hint:
            lines.extend(f"  {line.strip()}" for line in finding.hint.splitlines())
    lines.append(report.summary())
    return "\n".join(lines) + "\n"


def format_json(report: LintReport, *, relative_to: Path | None = None) -> str:
    """The report as a JSON document (``findings`` list and ``summary`` counts)."""
    summary: dict[str, int] = {severity: report.count(severity) for severity in SEVERITIES}
    summary["procedures"] = len(report.procedures)
    summary["scenarios"] = report.scenarios
    summary["exit_code"] = report.exit_code
    payload = {
        "findings": [f.to_dict(relative_to=relative_to) for f in report.findings],
        "summary": summary,
    }
    return json.dumps(payload, indent=2) + "\n"
